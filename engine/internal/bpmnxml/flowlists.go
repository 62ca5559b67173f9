package bpmnxml

import (
	"slices"
	"sort"
)

// isFlowNode reports whether e is one of the elements sequence flows
// connect: activities,
// events and gateways.
func isFlowNode(e *element) bool {
	return e.space == nsBPMN && (slices.Contains(activityElements, e.local) || slices.Contains(eventElements, e.local) ||
		e.local == "exclusiveGateway" || e.local == "inclusiveGateway" || e.local == "parallelGateway" ||
		e.local == "complexGateway" || e.local == "eventBasedGateway")
}

// flowLists checks a flow node's incoming and outgoing child elements
// against the sequence flows (EXT.023): each flow names the node it
// leaves as an outgoing and the node it enters as an incoming, and a node
// names no flow that does not touch it. A start event's missing outgoing
// is EXT.101, an end event's missing incoming EXT.107, the rules that
// state it for them.
//
// # Why only in documents that list them
//
// The lists repeat what the flows' sourceRef and targetRef say, and the
// schema makes them optional: hand-written models and some tools omit
// them everywhere, and flowtrack reads connections from the flows alone.
// A document that writes them (every modelling tool's export does) and
// contradicts its own flows is inconsistent, and a tool reading the lists
// would see another model than flowtrack: that is refused.
func (c *catalogueCheck) flowLists(e, process *element) {
	if !c.lists || process == nil || !isFlowNode(e) {
		return
	}
	id := e.get("id")
	if id == "" {
		return
	}
	listed := map[string][]string{}
	for _, ch := range e.children {
		if ch.is("incoming") || ch.is("outgoing") {
			listed[ch.local] = append(listed[ch.local], localID(ch.content()))
		}
	}
	var missingIn, missingOut []string
	for f, ends := range c.flowEnds {
		if ends[0] == id && !slices.Contains(listed["outgoing"], f) {
			missingOut = append(missingOut, f)
		}
		if ends[1] == id && !slices.Contains(listed["incoming"], f) {
			missingIn = append(missingIn, f)
		}
	}
	sort.Strings(missingIn)
	sort.Strings(missingOut)
	for _, f := range missingOut {
		rule := "EXT.023"
		if e.local == "startEvent" {
			rule = "EXT.101"
		}
		c.problem(e, process, rule, "sequence flow %s leaves bpmn:%s %s, which does not list it as outgoing: add <outgoing>%s</outgoing>", f, e.local, id, f)
	}
	for _, f := range missingIn {
		rule := "EXT.023"
		if e.local == "endEvent" {
			rule = "EXT.107"
		}
		c.problem(e, process, rule, "sequence flow %s enters bpmn:%s %s, which does not list it as incoming: add <incoming>%s</incoming>", f, e.local, id, f)
	}
	for _, kind := range []string{"incoming", "outgoing"} {
		fs := listed[kind]
		end := 0
		if kind == "incoming" {
			end = 1
		}
		for _, f := range fs {
			if ends, ok := c.flowEnds[f]; ok && ends[end] != id {
				c.problem(e, process, "EXT.023", "bpmn:%s %s lists sequence flow %s as %s, but the flow does not %s it: remove the entry or fix the flow", e.local, id, f, kind, map[int]string{0: "leave", 1: "enter"}[end])
			}
		}
	}
}
