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
	switch e.local {
	case "multiInstanceLoopCharacteristics":
		c.dataItem(e, process, "EXT.069", "loopDataOutputRef", "dataOutput", "outputDataItem")
		c.dataItem(e, process, "EXT.070", "loopDataInputRef", "dataInput", "inputDataItem")
	case "dataInputAssociation", "dataOutputAssociation":
		// A process's own data output is what the process hands back: it
		// is written, never read, inside the process; its data input is
		// what it was given, read, never written (BPMN 2.0 §10.4.1).
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
