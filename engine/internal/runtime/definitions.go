package runtime

import (
	"fmt"
	"sort"
)

// Definitions returns every deployed version of every process, ordered by
// process id, then version.
func (e *Engine) Definitions() []Definition {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Definition
	for _, d := range e.deployments {
		for _, p := range d.plans {
			out = append(out, Definition{ProcessID: p.Process.ID, Name: p.Process.Name, Key: p.Key, Version: p.Version,
				Resource: d.name, Latest: e.plans[p.Process.ID][len(e.plans[p.Process.ID])-1] == p})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].ProcessID != out[j].ProcessID {
			return out[i].ProcessID < out[j].ProcessID
		}
		return out[i].Version < out[j].Version
	})
	return out
}

// Version returns version v (from 1) of processID; 0 is the newest.
func (e *Engine) Version(processID string, v int) (*Plan, error) {
	if v == 0 {
		return e.Latest(processID)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	for _, p := range e.plans[processID] {
		if p.Version == v {
			return p, nil
		}
	}
	return nil, fmt.Errorf("%w %q version %d", ErrUnknownProcess, processID, v)
}

// DefinitionXML returns the name and the source of the document that
// deployed version v of processID (0: the newest).
func (e *Engine) DefinitionXML(processID string, v int) (string, []byte, error) {
	plan, err := e.Version(processID, v)
	if err != nil {
		return "", nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, d := range e.deployments {
		for _, p := range d.plans {
			if p == plan {
				return d.name, append([]byte(nil), d.source...), nil
			}
		}
	}
	return "", nil, fmt.Errorf("%w %q version %d: its document is not kept", ErrUnknownProcess, processID, plan.Version)
}
