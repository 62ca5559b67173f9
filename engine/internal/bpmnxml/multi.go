package bpmnxml

import "github.com/flowtrack/flowtrack/engine/internal/model"

// multiInstance reads multiInstanceLoopCharacteristics in any of the three
// ways models write it: Zeebe's zeebe:loopCharacteristics extension,
// Camunda 7's camunda:collection and camunda:elementVariable attributes,
// or plain BPMN (loopCardinality, loopDataInputRef and inputDataItem,
// loopDataOutputRef and outputDataItem: the variables they stand for are
// the names of the data inputs, properties or data items they name, or
// their ids). Whether what it
// says is complete and compiles is checked when the process is compiled,
// naming the activity.
func (b *builder) multiInstance(n *model.Node, e *element) {
	mi := &model.MultiInstance{
		Sequential:          e.get("isSequential") == "true",
		Cardinality:         b.imp.expression(e.child(nsBPMN, "loopCardinality")),
		CompletionCondition: b.imp.expression(e.child(nsBPMN, "completionCondition")),
	}
	if ref := e.child(nsBPMN, "loopDataInputRef"); ref != nil && ref.content() != "" {
		mi.Collection = model.Expression{Text: b.imp.dataName(ref.content())}
	}
	if item := e.child(nsBPMN, "inputDataItem"); item != nil {
		mi.Element = dataItemName(item)
	}
	if ref := e.child(nsBPMN, "loopDataOutputRef"); ref != nil && ref.content() != "" {
		mi.OutputCollection = b.imp.dataName(ref.content())
	}
	if item := e.child(nsBPMN, "outputDataItem"); item != nil {
		if name := dataItemName(item); name != "" {
			mi.OutputElement = model.Expression{Text: name}
		}
	}
	if c := e.nsAttr(nsCamunda, "collection"); c != "" {
		mi.Collection = model.Expression{Text: c}
	}
	if v := e.nsAttr(nsCamunda, "elementVariable"); v != "" {
		mi.Element = v
	}
	if ext := e.child(nsBPMN, "extensionElements"); ext != nil {
		if z := ext.child(nsZeebe, "loopCharacteristics"); z != nil {
			if v := z.get("inputCollection"); v != "" {
				mi.Collection = model.Expression{Text: v}
			}
			if v := z.get("inputElement"); v != "" {
				mi.Element = v
			}
			if v := z.get("outputCollection"); v != "" {
				mi.OutputCollection = v
			}
			if v := z.get("outputElement"); v != "" {
				mi.OutputElement = model.Expression{Text: v}
			}
		}
	}
	b.behavior(n, mi, e)
	n.Multi = mi
}

// behavior reads which events a multi-instance activity throws as its
// inner instances complete: the behavior attribute, the event definitions
// noneBehaviorEventRef and oneBehaviorEventRef name (at the top of the
// document, where definitions that several elements share live), and the
// complexBehaviorDefinitions with the event each throws.
func (b *builder) behavior(n *model.Node, mi *model.MultiInstance, e *element) {
	mi.Behavior = e.get("behavior")
	for _, r := range []struct {
		attr string
		to   **model.EventDefinition
	}{{"noneBehaviorEventRef", &mi.NoneEvent}, {"oneBehaviorEventRef", &mi.OneEvent}} {
		ref := e.get(r.attr)
		if ref == "" {
			continue
		}
		if def, ok := lookup(b.imp.eventDefs, ref); ok {
			*r.to = b.standalone(n, def)
			continue
		}
		b.problem(n.ID, "FT.unsupported", "unsupported: %s %q names no event definition at the top of the document: define it there, as a child of bpmn:definitions", r.attr, ref)
	}
	for _, c := range e.children {
		if c.space != nsBPMN || c.local != "complexBehaviorDefinition" {
			continue
		}
		cb := model.ComplexBehavior{Condition: b.imp.expression(c.child(nsBPMN, "condition"))}
		if ev := c.child(nsBPMN, "event"); ev != nil {
			for _, d := range ev.children {
				if _, ok := eventDefinitionKinds[d.local]; ok && d.space == nsBPMN {
					cb.Event = b.standalone(n, d)
					break
				}
			}
		}
		mi.ComplexBehaviors = append(mi.ComplexBehaviors, cb)
	}
}

// standalone reads event definition e, which belongs to no event of its
// own, for element n.
func (b *builder) standalone(n *model.Node, e *element) *model.EventDefinition {
	holder := &model.Node{ID: n.ID}
	b.eventDefinition(holder, e)
	return holder.Events[0]
}

// dataItemName is the variable a BPMN inputDataItem or outputDataItem
// stands for: its name, or else its id.
func dataItemName(e *element) string {
	if name := e.get("name"); name != "" {
		return name
	}
	return e.get("id")
}

// dataName is the variable the data element with id ref stands for: its
// name, or else its id. The reference check reports a ref that names no
// element.
func (imp *importer) dataName(ref string) string {
	if e, ok := lookup(imp.elements, ref); ok {
		return dataItemName(e)
	}
	return localID(ref)
}
