package bpmnxml

import (
	"slices"
	"strings"
)

// This file checks the catalogue's rules about the types of data (item
// definitions): the data a task sends or receives has its message's type,
// a multi-instance data item is an element of its collection, isCollection
// agrees with the item definition, and a process's own inputs and outputs
// flow one way only. flowtrack keeps data in variables and never reads
// item definitions, but a model that declares types is held to them: a
// contradiction there is a modelling error another engine would refuse.
// Types are compared only where the model states both: two item
// definitions are the same type when they are one definition, or when both
// name the same structureRef.

// messageItemRules are the rules that the data a task sends or receives
// has the item type of its message.
var messageItemRules = []struct {
	rule, task, data string
	// message is where the message is named: "messageRef" of the task, or
	// the "inMessageRef" or "outMessageRef" of the operation its
	// operationRef names.
	message string
	// typed: the data element must name an item definition when the
	// message declares one.
	typed bool
}{
	{"EXT.044", "serviceTask", "dataInput", "inMessageRef", false},
	{"EXT.045", "serviceTask", "dataOutput", "outMessageRef", false},
	{"EXT.048", "sendTask", "dataInput", "messageRef", true},
	{"EXT.052", "receiveTask", "dataOutput", "messageRef", true},
}

// collectionRules name, per item-aware element, the rule that its
// isCollection is its item definition's.
var collectionRules = map[string]string{"dataObject": "EXT.020", "dataInput": "EXT.081", "dataOutput": "EXT.083"}

// itemTypes applies the rules of this file whose context is e.
func (c *catalogueCheck) itemTypes(e, process *element) {
	if rule, ok := collectionRules[e.local]; ok {
		if def := c.itemDefinition(e.get("itemSubjectRef")); def != nil && isTrue(e.get("isCollection")) != isTrue(def.get("isCollection")) {
			c.problem(e, process, rule, "bpmn:%s %s has isCollection=%t, but its item definition %s has isCollection=%t: make them agree",
				e.local, e.get("id"), isTrue(e.get("isCollection")), def.get("id"), isTrue(def.get("isCollection")))
		}
	}
	for _, r := range messageItemRules {
		if e.local == r.task {
			c.messageItem(e, process, r.rule, r.data, r.message, r.typed)
		}
	}
	if e.child(nsBPMN, "supportedInterfaceRef") != nil {
		for _, b := range e.children {
			if b.is("ioBinding") {
				c.ioBinding(e, b, process)
			}
		}
	}
	c.eventData(e, process)
	switch e.local {
	case "callActivity":
		c.callData(e, process)
	case "multiInstanceLoopCharacteristics":
		c.dataItem(e, process, "EXT.069", "loopDataOutputRef", "dataOutput", "outputDataItem")
		c.dataItem(e, process, "EXT.070", "loopDataInputRef", "dataInput", "inputDataItem")
	case "dataInputAssociation", "dataOutputAssociation":
		// A process's own data output is what the process hands back: it
		// is written, never read, inside the process; its data input is
		// what it was given, read, never written (BPMN 2.0 §10.4.1).
		c.associationTypes(e, process)
		for _, ch := range e.children {
			id := localID(ch.content())
			switch {
			case ch.is("sourceRef") && c.processData[id] == "dataOutput":
				c.problem(e, process, "EXT.082", "data output %s of the process is what the process returns and cannot be read by a data association: read a data object instead", id)
			case ch.is("targetRef") && c.processData[id] == "dataInput":
				c.problem(e, process, "EXT.080", "data input %s of the process is what the process was given and cannot be written by a data association: write a data object instead", id)
			}
		}
	}
}

// messageItem checks that a data element (data) of task e has the item
// type of the task's message (EXT.044, EXT.045, EXT.048, EXT.052): one of
// them does, when the task has several.
func (c *catalogueCheck) messageItem(e, process *element, rule, data, message string, typed bool) {
	io := e.child(nsBPMN, "ioSpecification")
	if io == nil {
		return
	}
	var ds []*element
	for _, ch := range io.children {
		if ch.is(data) {
			ds = append(ds, ch)
		}
	}
	msg := c.message(e, message)
	if len(ds) == 0 || msg == nil {
		return
	}
	// A message that declares no item constrains nothing.
	item := msg.get("itemRef")
	if item == "" || slices.ContainsFunc(ds, func(d *element) bool {
		if ref := d.get("itemSubjectRef"); ref != "" {
			return c.sameItem(ref, item)
		}
		return !typed
	}) {
		return
	}
	d := ds[0]
	if d.get("itemSubjectRef") == "" {
		c.problem(d, process, rule, "bpmn:%s %s of a bpmn:%s carries message %s and must name its item definition: set itemSubjectRef to %s",
			data, d.get("id"), e.local, msg.get("id"), item)
		return
	}
	c.problem(d, process, rule, "bpmn:%s %s has item definition %s, but message %s carries %s: use the message's item definition or one of the same structureRef",
		data, d.get("id"), d.get("itemSubjectRef"), msg.get("id"), item)
}

// message returns the message of task e named by where (see
// messageItemRules), or nil when it does not resolve.
func (c *catalogueCheck) message(e *element, where string) *element {
	ref := e.get(where)
	if where != "messageRef" {
		op, ok := lookup(c.imp.elements, e.get("operationRef"))
		if !ok || !op.is("operation") {
			return nil
		}
		r := op.child(nsBPMN, where)
		if r == nil {
			return nil
		}
		ref = r.content()
	}
	if m, ok := lookup(c.imp.elements, ref); ok && m.is("message") {
		return m
	}
	return nil
}

// dataItem checks that the data item (item) of multi-instance
// characteristics e is one element of the collection its loop reference
// (loopRef, naming a data element of kind data) holds: not a collection
// itself, and of the collection's structureRef (EXT.069, EXT.070).
func (c *catalogueCheck) dataItem(e, process *element, rule, loopRef, data, item string) {
	r, it := e.child(nsBPMN, loopRef), e.child(nsBPMN, item)
	if r == nil || it == nil {
		return
	}
	d, ok := lookup(c.imp.elements, r.content())
	if !ok || !d.is(data) {
		return
	}
	coll, one := c.itemDefinition(d.get("itemSubjectRef")), c.itemDefinition(it.get("itemSubjectRef"))
	if coll == nil || one == nil {
		return
	}
	switch cs, os := coll.get("structureRef"), one.get("structureRef"); {
	case isTrue(one.get("isCollection")):
		c.problem(it, process, rule, "bpmn:%s %s is one element of %s %s, but its item definition %s is a collection: give it the element type",
			item, it.get("id"), loopRef, d.get("id"), one.get("id"))
	case cs != "" && os != "" && cs != os:
		c.problem(it, process, rule, "bpmn:%s %s has structureRef %s, but the elements of %s %s have %s: give it the collection's element type",
			item, it.get("id"), os, loopRef, d.get("id"), cs)
	}
}

// itemDefinition returns the item definition ref names, or nil.
func (c *catalogueCheck) itemDefinition(ref string) *element {
	if d, ok := lookup(c.imp.elements, ref); ok && d.is("itemDefinition") {
		return d
	}
	return nil
}

// sameItem reports whether item definitions a and b are the same type:
// one definition, or two naming the same structureRef.
func (c *catalogueCheck) sameItem(a, b string) bool {
	if localID(a) == localID(b) {
		return true
	}
	da, db := c.itemDefinition(a), c.itemDefinition(b)
	if da == nil || db == nil {
		// A reference that does not resolve is a REF problem, not a type
		// mismatch.
		return true
	}
	sa, sb := strings.TrimSpace(da.get("structureRef")), strings.TrimSpace(db.get("structureRef"))
	return sa != "" && sa == sb
}

// isTrue reads an xsd:boolean.
func isTrue(v string) bool {
	v = strings.TrimSpace(v)
	return v == "true" || v == "1"
}

// itemOf returns the item definition reference of the item-aware element
// named by ref: its own itemSubjectRef, or that of the data object or
// data store a reference stands for ("" when untyped or unresolved).
func (c *catalogueCheck) itemOf(ref string) string {
	e, ok := lookup(c.imp.elements, ref)
	if !ok || e.space != nsBPMN {
		return ""
	}
	switch e.local {
	case "dataObjectReference":
		return c.itemOf(e.get("dataObjectRef"))
	case "dataStoreReference":
		return c.itemOf(e.get("dataStoreRef"))
	}
	return e.get("itemSubjectRef")
}

// associationTypes checks that a data association without transformation
// moves data between elements of one type (EXT.091): its source and
// target name the same item definition or two of one structureRef.
// Untyped ends constrain nothing.
//
// # Why a warning
//
// Modelling tools connect data of different types and rely on their own
// conversion (the MIWG reference models C.7.0 and C.8.1, from Trisotech,
// pass a record into a number input); flowtrack never reads item
// definitions, so nothing it runs depends on the types agreeing.
func (c *catalogueCheck) associationTypes(e, process *element) {
	if e.child(nsBPMN, "transformation") != nil {
		return
	}
	src, dst := e.child(nsBPMN, "sourceRef"), e.child(nsBPMN, "targetRef")
	if src == nil || dst == nil || countChildren(e, "sourceRef") != 1 {
		return
	}
	a, b := c.itemOf(src.content()), c.itemOf(dst.content())
	if a != "" && b != "" && !c.sameItem(a, b) {
		c.warn(e, process, "EXT.091", "bpmn:%s moves %s (item %s) to %s (item %s), of another type, without a transformation: give both one item definition or add a transformation",
			e.local, localID(src.content()), localID(a), localID(dst.content()), localID(b))
	}
}

// eventData checks that the data inputs (of a throw event) or outputs
// (of a catch event) carry the item of the event definition each stands
// for, in order (EXT.094): a message's itemRef, an error's, escalation's
// or signal's structureRef.
func (c *catalogueCheck) eventData(e, process *element) {
	data := ""
	switch e.local {
	case "intermediateThrowEvent", "endEvent":
		data = "dataInput"
	case "startEvent", "intermediateCatchEvent", "boundaryEvent":
		data = "dataOutput"
	default:
		return
	}
	var ds, defs []*element
	for _, ch := range e.children {
		switch {
		case ch.is(data):
			ds = append(ds, ch)
		case ch.is("eventDefinitionRef"):
			if d, ok := lookup(c.imp.eventDefs, ch.content()); ok {
				defs = append(defs, d)
			}
		case ch.space == nsBPMN && strings.HasSuffix(ch.local, "EventDefinition"):
			defs = append(defs, ch)
		}
	}
	for i, d := range ds {
		if i >= len(defs) {
			return // EXT.093
		}
		item, what := c.definitionItem(defs[i])
		if own := d.get("itemSubjectRef"); item != "" && own != "" && !c.sameItem(own, item) {
			c.problem(d, process, "EXT.094", "bpmn:%s %s stands for the %s, which carries item %s, but has item %s: give it the item of its event definition",
				data, d.get("id"), what, localID(item), localID(own))
		}
	}
}

// definitionItem returns the item an event definition carries and what
// carries it, "" when it declares none.
func (c *catalogueCheck) definitionItem(def *element) (item, what string) {
	attr, kind, item := map[string][2]string{
		"messageEventDefinition":    {"messageRef", "message"},
		"errorEventDefinition":      {"errorRef", "error"},
		"escalationEventDefinition": {"escalationRef", "escalation"},
		"signalEventDefinition":     {"signalRef", "signal"},
	}[def.local], "", ""
	if attr[0] == "" {
		return "", ""
	}
	kind = attr[1]
	r, ok := lookup(c.imp.elements, def.get(attr[0]))
	if !ok || !r.is(kind) {
		return "", ""
	}
	if kind == "message" {
		item = r.get("itemRef")
	} else {
		item = r.get("structureRef")
	}
	return item, kind + " " + r.get("id")
}

// callData checks that a call activity's data inputs and outputs are
// those of the process it calls, in number and, where both are typed, in
// type, position by position (EXT.063). It applies when the call
// activity and the process it calls, in the same document, both declare
// an ioSpecification: a call without one passes variables through
// mappings, as Zeebe's do; a process without one states no contract
// (the MIWG reference model C.5.0 calls one with data); and a process
// deployed separately is not at hand.
func (c *catalogueCheck) callData(e, process *element) {
	io := e.child(nsBPMN, "ioSpecification")
	callee, ok := lookup(c.imp.elements, e.get("calledElement"))
	if io == nil || !ok || !callee.is("process") {
		return
	}
	theirs := callee.child(nsBPMN, "ioSpecification")
	if theirs == nil {
		return
	}
	for _, data := range []string{"dataInput", "dataOutput"} {
		mine, other := ioData(io, data), ioData(theirs, data)
		if len(mine) != len(other) {
			c.problem(e, process, "EXT.063", "call activity %s declares %d %ss, but process %s it calls declares %d: declare the callee's data exactly",
				e.get("id"), len(mine), data, callee.get("id"), len(other))
			continue
		}
		for i := range mine {
			a, b := mine[i].get("itemSubjectRef"), other[i].get("itemSubjectRef")
			if a != "" && b != "" && !c.sameItem(a, b) {
				c.problem(mine[i], process, "EXT.063", "bpmn:%s %s of call activity %s has item %s, but the matching %s %s of process %s has %s: use the callee's type",
					data, mine[i].get("id"), e.get("id"), localID(a), data, other[i].get("id"), callee.get("id"), localID(b))
			}
		}
	}
}

// ioData returns the data elements named data of an ioSpecification (nil
// for none).
func ioData(io *element, data string) []*element {
	if io == nil {
		return nil
	}
	var out []*element
	for _, ch := range io.children {
		if ch.is(data) {
			out = append(out, ch)
		}
	}
	return out
}

// ioBinding checks an input/output binding of an element exposed as a
// service (EXT.065): it binds an operation of one of the element's
// supported interfaces, a data input of the element whose type is the
// operation's in-message's, and a data output whose type is its
// out-message's.
func (c *catalogueCheck) ioBinding(e, b, process *element) {
	op, ok := lookup(c.imp.elements, b.get("operationRef"))
	if !ok || !op.is("operation") {
		return // a REF problem
	}
	supported := false
	for _, r := range e.children {
		if iface, ok := lookup(c.imp.elements, r.content()); ok && r.is("supportedInterfaceRef") && slices.Contains(iface.children, op) {
			supported = true
		}
	}
	if !supported {
		c.problem(b, process, "EXT.065", "ioBinding binds operation %s, which is not an operation of a supportedInterfaceRef of bpmn:%s %s: bind one of its interfaces' operations", op.get("id"), e.local, e.get("id"))
	}
	io := e.child(nsBPMN, "ioSpecification")
	for _, side := range []struct{ attr, data, msg string }{{"inputDataRef", "dataInput", "inMessageRef"}, {"outputDataRef", "dataOutput", "outMessageRef"}} {
		ref := localID(b.get(side.attr))
		if ref == "" {
			continue
		}
		i := slices.IndexFunc(ioData(io, side.data), func(d *element) bool { return d.get("id") == ref })
		if i < 0 {
			c.problem(b, process, "EXT.065", "ioBinding %s %s is not a %s of bpmn:%s %s: bind one of its own", side.attr, ref, side.data, e.local, e.get("id"))
			continue
		}
		d := ioData(io, side.data)[i]
		var item string
		if r := op.child(nsBPMN, side.msg); r != nil {
			if m, ok := lookup(c.imp.elements, r.content()); ok && m.is("message") {
				item = m.get("itemRef")
			}
		}
		if own := d.get("itemSubjectRef"); item != "" && own != "" && !c.sameItem(own, item) {
			c.problem(b, process, "EXT.065", "ioBinding binds %s %s (item %s) to operation %s, whose %s carries %s: bind data of the message's type",
				side.data, ref, localID(own), op.get("id"), side.msg, localID(item))
		}
	}
}
