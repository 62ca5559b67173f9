package wire

import (
	"encoding/json"
	"time"

	"github.com/flowtrack/flowtrack/api"
)

// responseDepth bounds the nesting the host's fast path decodes in a
// response: the envelope, a result list, a record, its variables, then
// the variables' own levels. Deeper responses go to encoding/json.
const responseDepth = api.MaxVariableDepth + 4

// DecodeResponse decodes a response envelope as encoding/json would into
// a Response[json.RawMessage], without reflection for the usual parts (the
// envelope, an empty event list, the clock): events and an error object
// are handed to encoding/json. The result is copied out of data, which may
// be a view of the module's memory.
func DecodeResponse(data []byte, env *Response[json.RawMessage]) error {
	if decodeResponse(data, env) {
		return nil
	}
	*env = Response[json.RawMessage]{}
	return json.Unmarshal(data, env)
}

func decodeResponse(data []byte, env *Response[json.RawMessage]) bool {
	d := NewDecoder(data, responseDepth)
	if d.end() {
		return false // encoding/json's error for no JSON at all
	}
	return d.Document(func(key []byte) bool {
		switch string(key) {
		case "ok":
			v, ok := d.Bool()
			env.OK = v
			return ok
		case "result":
			raw, ok := d.Raw()
			env.Result = append(json.RawMessage(nil), raw...)
			return ok
		case "error":
			raw, ok := d.Raw()
			if !ok || string(raw) == "null" {
				return ok
			}
			env.Error = new(Error)
			return json.Unmarshal(raw, env.Error) == nil
		case "events":
			raw, ok := d.Raw()
			if !ok {
				return false
			}
			if string(raw) == "[]" {
				env.Events = []api.Event{}
				return true
			}
			return json.Unmarshal(raw, &env.Events) == nil
		case "now":
			t, ok := d.time()
			env.Now = t
			return ok
		case "nextDeadline":
			if d.Null() {
				env.NextDeadline = nil
				return true
			}
			t, ok := d.time()
			env.NextDeadline = &t
			return ok
		}
		return false
	})
}

// time decodes an RFC 3339 string as time.Time's UnmarshalJSON does.
func (d *Decoder) time() (time.Time, bool) {
	if d.peek() != '"' {
		return time.Time{}, false
	}
	s, ok := d.plainString()
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, string(s))
	return t, err == nil
}

// DecodeStartResult decodes start's result.
func DecodeStartResult(data []byte, r *StartResult) error {
	if decodeProgress(data, &r.InstanceKey, &r.State, &r.Jobs) {
		return nil
	}
	*r = StartResult{}
	return json.Unmarshal(data, r)
}

// DecodeCompleteJobResult decodes complete_job's result.
func DecodeCompleteJobResult(data []byte, r *CompleteJobResult) error {
	if decodeProgress(data, &r.InstanceKey, &r.State, &r.Jobs) {
		return nil
	}
	*r = CompleteJobResult{}
	return json.Unmarshal(data, r)
}

// DecodeMessageResult decodes publish_message's result.
func DecodeMessageResult(data []byte, r *MessageResult) error {
	d := NewDecoder(data, responseDepth)
	if !d.end() && d.Document(func(k []byte) bool {
		if string(k) != "instances" {
			return false
		}
		var ok bool
		r.Instances, ok = d.progressList()
		return ok
	}) {
		return nil
	}
	*r = MessageResult{}
	return json.Unmarshal(data, r)
}

// decodeProgress decodes the shape start and complete_job share (where an
// instance stands and its activatable jobs), reporting whether data was
// plain enough for the fast path.
func decodeProgress(data []byte, key *int64, state *api.State, jobs *[]api.Job) bool {
	d := NewDecoder(data, responseDepth)
	return !d.end() && d.Document(func(k []byte) bool { return d.progressField(k, key, state, jobs) })
}

// progressField decodes the value of one field of the shape
// decodeProgress reads; an unknown key is declined.
func (d *Decoder) progressField(k []byte, key *int64, state *api.State, jobs *[]api.Job) bool {
	var ok bool
	switch string(k) {
	case "instanceKey":
		*key, ok = d.Int64()
	case "state":
		*state, ok = d.state()
	case "jobs":
		*jobs, ok = d.jobs()
	}
	return ok
}

// progressList decodes a list of complete_job results (publish_message's
// instances), or null; repeated keys are declined.
func (d *Decoder) progressList() ([]CompleteJobResult, bool) {
	if d.Null() {
		return nil, true
	}
	if d.peek() != '[' || d.depth >= d.limit {
		return nil, false
	}
	d.depth++
	d.pos++
	list := []CompleteJobResult{}
	if d.peek() == ']' {
		d.pos++
		d.depth--
		return list, true
	}
	for {
		var p CompleteJobResult
		var seen uint8
		if !d.Object(func(k []byte) bool {
			var bit uint8
			switch string(k) {
			case "instanceKey":
				bit = 1
			case "state":
				bit = 2
			case "jobs":
				bit = 4
			}
			if bit == 0 || seen&bit != 0 {
				return false
			}
			seen |= bit
			return d.progressField(k, &p.InstanceKey, &p.State, &p.Jobs)
		}) {
			return nil, false
		}
		list = append(list, p)
		switch d.peek() {
		case ',':
			d.pos++
		case ']':
			d.pos++
			d.depth--
			return list, true
		default:
			return nil, false
		}
	}
}

// DecodeInstanceResult decodes instance's result; incidents, rare, go
// through encoding/json.
func DecodeInstanceResult(data []byte, r *InstanceResult) error {
	d := NewDecoder(data, responseDepth)
	if !d.end() && d.Document(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "key":
			r.Key, ok = d.Int64()
		case "processId":
			r.ProcessID, ok = d.String()
		case "state":
			r.State, ok = d.state()
		case "message":
			r.Message, ok = d.String()
		case "variables":
			r.Variables, ok = d.Variables()
		case "incidents":
			var raw []byte
			if raw, ok = d.Raw(); ok && string(raw) == "[]" {
				r.Incidents = []api.Incident{}
			} else if ok {
				ok = json.Unmarshal(raw, &r.Incidents) == nil
			}
		}
		return ok
	}) {
		return nil
	}
	*r = InstanceResult{}
	return json.Unmarshal(data, r)
}

// jobs decodes a list of Job records, or null.
func (d *Decoder) jobs() ([]api.Job, bool) {
	if d.Null() {
		return nil, true
	}
	if d.peek() != '[' || d.depth >= d.limit {
		return nil, false
	}
	d.depth++
	d.pos++
	jobs := []api.Job{}
	if d.peek() == ']' {
		d.pos++
		d.depth--
		return jobs, true
	}
	for {
		var j api.Job
		if !d.job(&j) {
			return nil, false
		}
		jobs = append(jobs, j)
		switch d.peek() {
		case ',':
			d.pos++
		case ']':
			d.pos++
			d.depth--
			return jobs, true
		default:
			return nil, false
		}
	}
}

// job decodes one Job record; repeated keys are declined.
func (d *Decoder) job(j *api.Job) bool {
	var seen uint16
	return d.Object(func(key []byte) bool {
		var ok bool
		var bit uint16
		switch string(key) {
		case "key":
			bit = 1 << 0
			j.Key, ok = d.Int64()
		case "type":
			bit = 1 << 1
			j.Type, ok = d.String()
		case "processId":
			bit = 1 << 2
			j.ProcessID, ok = d.String()
		case "elementId":
			bit = 1 << 3
			j.ElementID, ok = d.String()
		case "instanceKey":
			bit = 1 << 4
			j.InstanceKey, ok = d.Int64()
		case "retries":
			bit = 1 << 5
			var n int64
			n, ok = d.Int64()
			j.Retries = int(n)
			ok = ok && int64(j.Retries) == n
		case "headers":
			bit = 1 << 6
			j.Headers, ok = d.headers()
		case "variables":
			bit = 1 << 7
			j.Variables, ok = d.Variables()
		case "errorMessage":
			bit = 1 << 8
			j.ErrorMessage, ok = d.String()
		case "created":
			bit = 1 << 9
			j.Created, ok = d.time()
		case "worker":
			bit = 1 << 10
			j.Worker, ok = d.String()
		case "activation":
			bit = 1 << 11
			j.Activation, ok = d.Int64()
		case "deadline":
			bit = 1 << 12
			var t time.Time
			t, ok = d.time()
			j.Deadline = &t
		case "retryAt":
			bit = 1 << 13
			var t time.Time
			t, ok = d.time()
			j.RetryAt = &t
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		return ok
	})
}

// headers decodes an object of strings, or null.
func (d *Decoder) headers() (map[string]string, bool) {
	if d.Null() {
		return nil, true
	}
	h := map[string]string{}
	ok := d.Object(func(key []byte) bool {
		if _, dup := h[string(key)]; dup {
			return false
		}
		v, ok := d.String()
		h[string(key)] = v
		return ok
	})
	return h, ok
}

// state decodes one of States, without allocating.
func (d *Decoder) state() (api.State, bool) {
	if d.peek() != '"' {
		return "", false
	}
	s, ok := d.plainString()
	if !ok {
		return "", false
	}
	for _, st := range States {
		if string(st) == string(s) {
			return st, true
		}
	}
	return api.State(s), true
}
