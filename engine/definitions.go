package engine

import "fmt"

// Definitions returns every deployed version of every process, ordered by
// process id, then version; Latest marks the version Start uses.
func (e *Engine) Definitions() []Definition { return e.rt.Definitions() }

// DefinitionXML returns the document that deployed version (from 1; 0:
// the newest) of processID, as it was deployed, and the name it was
// deployed under.
//
// # Errors
//
// ErrUnknownProcess for a process or version never deployed;
// ErrInvalidArgument for a negative version; ErrClosed after Close.
func (e *Engine) DefinitionXML(processID string, version int) (name string, xml []byte, err error) {
	if version < 0 {
		return "", nil, invalid("definition of %s: version must be >= 0, got %d", processID, version)
	}
	name, xml, err = e.rt.DefinitionXML(processID, version)
	if err != nil {
		return "", nil, fmt.Errorf("definition: %w", err)
	}
	return name, xml, nil
}
