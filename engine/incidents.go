package engine

// IncidentType says what an incident holds, as operators filter them:
// IncidentJob for a job that failed with no retries left (Incident.JobKey
// is set; fix it with UpdateJobRetries, then ResolveIncident),
// IncidentElement for anything else at an element (an expression or
// mapping that cannot be evaluated, an uncaught error, a called instance
// that failed; fix the variables with SetVariables, then ResolveIncident).
type IncidentType string

// The incident types.
const (
	IncidentJob     IncidentType = "job"
	IncidentElement IncidentType = "element"
)

// TypeOf returns the type of inc.
func TypeOf(inc Incident) IncidentType {
	if inc.JobKey != 0 {
		return IncidentJob
	}
	return IncidentElement
}

// IncidentFilter selects incidents. Zero fields match anything.
type IncidentFilter struct {
	InstanceKey int64
	ElementID   string
	Type        IncidentType
}

// Match reports whether f selects inc.
func (f IncidentFilter) Match(inc Incident) bool {
	return (f.InstanceKey == 0 || inc.InstanceKey == f.InstanceKey) &&
		(f.ElementID == "" || inc.ElementID == f.ElementID) &&
		(f.Type == "" || TypeOf(inc) == f.Type)
}

// Check returns an error wrapping ErrInvalidArgument for an unknown Type.
func (f IncidentFilter) Check() error {
	switch f.Type {
	case "", IncidentJob, IncidentElement:
		return nil
	}
	return invalid("incident type %q: want %q or %q", f.Type, IncidentJob, IncidentElement)
}

// FindIncidents returns the open incidents of live instances that f
// selects, ordered by key. Like Incidents it reads the engine's index.
//
// # Errors
//
// ErrInvalidArgument for an unknown f.Type.
func (e *Engine) FindIncidents(f IncidentFilter) ([]Incident, error) {
	if err := f.Check(); err != nil {
		return nil, err
	}
	out := []Incident{}
	for _, inc := range e.rt.Incidents() {
		if f.Match(inc) {
			out = append(out, inc)
		}
	}
	return out, nil
}
