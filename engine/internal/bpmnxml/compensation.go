package bpmnxml

import "github.com/flowtrack/flowtrack/engine/internal/model"

// association is a bpmn:association of a process or sub-process, waiting
// for its ends to resolve. Associations carry no execution semantics
// except one: the association from a compensation boundary event to the
// activity that compensates its activity.
type association struct {
	source, target string
}

// compensationHandlers connects each compensation boundary event to its
// handler (model.Node.Compensation): the node at the other end of an
// association of the same process. Either direction counts, as modellers
// draw both. What the handler must be (an activity marked
// isForCompensation) is checked by the catalogue (EXT.144) and Validate.
func (b *builder) compensationHandlers() {
	for _, a := range b.associations {
		src, ok1 := lookup(b.nodes, a.source)
		dst, ok2 := lookup(b.nodes, a.target)
		if !ok1 || !ok2 {
			continue
		}
		if !isCompensationBoundary(src) {
			src, dst = dst, src
		}
		if isCompensationBoundary(src) && src.Compensation == nil && dst.Kind != model.KindBoundaryEvent {
			src.Compensation = dst
		}
	}
}

// isCompensationBoundary reports whether n is a compensation boundary
// event.
func isCompensationBoundary(n *model.Node) bool {
	return n.Kind == model.KindBoundaryEvent && n.HasEvent(model.EventCompensation)
}
