package wire

import (
	"encoding/json"
	"time"

	"github.com/flowtrack/flowtrack/engine"
)

// responseDepth bounds the nesting the host's fast path decodes in a
// response: the envelope, a result list, a record, its variables, then
// the variables' own levels. Deeper responses go to encoding/json.
const responseDepth = engine.MaxVariableDepth + 4

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
				env.Events = []engine.Event{}
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
	d := NewDecoder(data, responseDepth)
	if !d.end() && d.Document(func(key []byte) bool {
		var ok bool
		switch string(key) {
		case "instanceKey":
			r.InstanceKey, ok = d.Int64()
		case "state":
			r.State, ok = d.state()
		}
		return ok
	}) {
		return nil
	}
	*r = StartResult{}
	return json.Unmarshal(data, r)
}

// state decodes one of States, without allocating.
func (d *Decoder) state() (engine.State, bool) {
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
	return engine.State(s), true
}
