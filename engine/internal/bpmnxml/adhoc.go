package bpmnxml

import (
	"strings"

	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// adHoc reads what a bpmn:adHocSubProcess says about running its content:
// the BPMN ordering, completionCondition and cancelRemainingInstances, and
// Camunda 8's zeebe:adHoc activeElementsCollection. The node is a
// sub-process (its content is read as any sub-process's); whether the
// content suits an ad-hoc sub-process and the expressions compile is
// checked when the process is compiled, naming the element.
func (b *builder) adHoc(n *model.Node, e *element) {
	ah := &model.AdHoc{
		CompletionCondition: b.imp.expression(e.child(nsBPMN, "completionCondition")),
		CancelRemaining:     true,
	}
	switch o := strings.TrimSpace(e.get("ordering")); o {
	case "", "Parallel":
	case "Sequential":
		ah.Sequential = true
	default:
		b.problem(n.ID, "XSD.enumeration", "ordering %q is neither Parallel nor Sequential: use one of them", o)
	}
	switch c := strings.TrimSpace(e.get("cancelRemainingInstances")); c {
	case "", "true":
	case "false":
		ah.CancelRemaining = false
	default:
		b.problem(n.ID, "XSD.boolean", "cancelRemainingInstances %q is not true or false: use one of them", c)
	}
	if ext := e.child(nsBPMN, "extensionElements"); ext != nil {
		if z := ext.child(nsZeebe, "adHoc"); z != nil {
			ah.ActiveElements = model.Expression{Text: z.get("activeElementsCollection")}
		}
	}
	n.AdHoc = ah
}
