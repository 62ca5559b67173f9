package engine

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
