package bpmnxml

import (
	"slices"
	"strconv"
	"strings"

	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// reference is one row of the BPMN reference table: on an element of type
// owner (or a subtype), the reference name (an attribute, or child elements
// whose text is the reference) must name an element of one of the types
// (or a subtype); an empty types list only requires that it resolves.
type reference struct {
	number int
	owner  string
	name   string
	attr   bool
	types  []string
}

// referenceTable is the reference table of the BPMN 2.0 constraint
// catalogue (BPMNspector's references.xml), transcribed row by row: the
// REF rule number, the owning element type, the reference and the types it
// may point at.
var referenceTable = []reference{
	{4, "association", "sourceRef", true, nil},
	{5, "association", "targetRef", true, nil},
	{6, "group", "categoryValueRef", true, []string{"categoryValue"}},
	{7, "correlationKey", "correlationPropertyRef", false, []string{"correlationProperty"}},
	{8, "correlationPropertyRetrievalExpression", "messageRef", true, []string{"message"}},
	{9, "correlationSubscription", "correlationKeyRef", true, []string{"correlationKey"}},
	{10, "correlationPropertyBinding", "correlationPropertyRef", true, []string{"correlationProperty"}},
	{11, "error", "structureRef", true, []string{"itemDefinition"}},
	{12, "escalation", "structureRef", true, []string{"itemDefinition"}},
	{13, "formalExpression", "evaluatesToTypeRef", true, []string{"itemDefinition"}},
	{14, "flowElement", "categoryValueRef", false, []string{"categoryValue"}},
	{16, "message", "itemRef", true, []string{"itemDefinition"}},
	{17, "resourceParameter", "type", true, []string{"itemDefinition"}},
	{18, "sequenceFlow", "sourceRef", true, []string{"activity", "gateway", "exclusiveGateway", "inclusiveGateway", "parallelGateway", "complexGateway", "eventBasedGateway", "event", "throwEvent", "catchEvent"}},
	{19, "sequenceFlow", "targetRef", true, []string{"activity", "gateway", "exclusiveGateway", "inclusiveGateway", "parallelGateway", "complexGateway", "eventBasedGateway", "event", "throwEvent", "catchEvent"}},
	{20, "flowNode", "incoming", false, []string{"sequenceFlow"}},
	{21, "flowNode", "outgoing", false, []string{"sequenceFlow"}},
	{23, "operation", "inMessageRef", false, []string{"message"}},
	{24, "operation", "outMessageRef", false, []string{"message"}},
	{25, "operation", "errorRef", false, []string{"error"}},
	{27, "collaboration", "choreographyRef", false, []string{"choreography"}},
	{28, "participant", "processRef", true, []string{"process"}},
	{29, "participant", "interfaceRef", false, []string{"interface"}},
	{30, "participant", "endPointRef", false, []string{"endPoint"}},
	{31, "partnerEntity", "participantRef", false, []string{"participant"}},
	{32, "partnerRole", "participantRef", false, []string{"participant"}},
	{33, "participantAssociation", "innerParticipantRef", false, []string{"participant"}},
	{34, "participantAssociation", "outerParticipantRef", false, []string{"participant"}},
	{35, "messageFlow", "sourceRef", true, []string{"pool", "participant", "activity", "event", "throwEvent", "catchEvent"}},
	{36, "messageFlow", "targetRef", true, []string{"pool", "participant", "activity", "event", "throwEvent", "catchEvent"}},
	{37, "messageFlow", "messageRef", true, []string{"message"}},
	{47, "process", "supports", false, []string{"process"}},
	{48, "process", "definitionalCollaborationRef", true, []string{"collaboration"}},
	{49, "activity", "default", true, []string{"sequenceFlow"}},
	{50, "resourceRole", "resourceRef", false, []string{"resource"}},
	{51, "resourceParameterBinding", "parameterRef", true, []string{"resourceParameter"}},
	{52, "serviceTask", "operationRef", true, []string{"operation"}},
	{53, "sendTask", "messageRef", true, []string{"message"}},
	{54, "sendTask", "operationRef", true, []string{"operation"}},
	{55, "receiveTask", "messageRef", true, []string{"message"}},
	{56, "receiveTask", "operationRef", true, []string{"operation"}},
	{57, "callActivity", "calledElement", true, []string{"process", "globalTask", "globalUserTask", "globalManualTask", "globalScriptTask", "globalBusinessRuleTask"}},
	{58, "callableElement", "supportedInterfaceRefs", false, []string{"interface"}},
	{59, "ioBinding", "inputDataRef", true, []string{"dataInput"}},
	{60, "ioBinding", "outputDataRef", true, []string{"dataOutput"}},
	{61, "ioBinding", "operationRef", true, []string{"operation"}},
	{62, "multiInstanceLoopCharacteristics", "loopDataInputRef", false, []string{"property", "dataObject", "dataInput", "dataOutput", "dataStore", "dataStoreReference", "dataObjectReference"}},
	{63, "multiInstanceLoopCharacteristics", "loopDataOutputRef", false, []string{"property", "dataObject", "dataInput", "dataOutput", "dataStore", "dataStoreReference", "dataObjectReference"}},
	{64, "multiInstanceLoopCharacteristics", "oneBehaviorEventRef", true, []string{"eventDefinition", "linkEventDefinition", "errorEventDefinition", "terminateEventDefinition", "cancelEventDefinition", "messageEventDefinition", "compensateEventDefinition", "escalationEventDefinition", "timerEventDefinition", "conditionalEventDefinition", "signalEventDefinition"}},
	{65, "multiInstanceLoopCharacteristics", "noneBehaviorEventRef", true, []string{"eventDefinition", "linkEventDefinition", "errorEventDefinition", "terminateEventDefinition", "cancelEventDefinition", "messageEventDefinition", "compensateEventDefinition", "escalationEventDefinition", "timerEventDefinition", "conditionalEventDefinition", "signalEventDefinition"}},
	{66, "dataObject", "itemSubjectRef", true, []string{"itemDefinition"}},
	{67, "dataObjectReference", "itemSubjectRef", true, []string{"itemDefinition"}},
	{68, "dataObjectReference", "dataObjectRef", true, []string{"dataObject"}},
	{69, "dataStore", "itemSubjectRef", true, []string{"itemDefinition"}},
	{70, "dataStoreReference", "itemSubjectRef", true, []string{"itemDefinition"}},
	{71, "dataStoreReference", "dataStoreRef", true, []string{"dataStore"}},
	{72, "property", "itemSubjectRef", true, []string{"itemDefinition"}},
	{73, "dataInput", "itemSubjectRef", true, []string{"itemDefinition"}},
	{74, "dataOutput", "itemSubjectRef", true, []string{"itemDefinition"}},
	{75, "inputSet", "dataInputRefs", false, []string{"dataInput"}},
	{76, "inputSet", "optionalInputRefs", false, []string{"dataInput"}},
	{77, "inputSet", "whileExecutingInputRef", false, []string{"dataInput"}},
	{78, "inputSet", "outputSetRefs", false, []string{"outputSet"}},
	{79, "outputSet", "dataOutputRefs", false, []string{"dataOutput"}},
	{80, "outputSet", "optionalOutputRefs", false, []string{"dataOutput"}},
	{81, "outputSet", "whileExecutingOutputRefs", false, []string{"dataOutput"}},
	{82, "outputSet", "inputSetRefs", false, []string{"inputSet"}},
	{83, "dataAssociation", "sourceRef", false, []string{"property", "dataObject", "dataInput", "dataOutput", "dataStore", "dataStoreReference", "dataObjectReference"}},
	{84, "dataAssociation", "targetRef", false, []string{"property", "dataObject", "dataInput", "dataOutput", "dataStore", "dataStoreReference", "dataObjectReference"}},
	{85, "catchEvent", "eventDefinitionRef", false, []string{"eventDefinition", "linkEventDefinition", "errorEventDefinition", "terminateEventDefinition", "cancelEventDefinition", "messageEventDefinition", "compensateEventDefinition", "escalationEventDefinition", "timerEventDefinition", "conditionalEventDefinition", "signalEventDefinition"}},
	{86, "throwEvent", "eventDefinitionRef", false, []string{"eventDefinition", "linkEventDefinition", "errorEventDefinition", "terminateEventDefinition", "cancelEventDefinition", "messageEventDefinition", "compensateEventDefinition", "escalationEventDefinition", "timerEventDefinition", "conditionalEventDefinition", "signalEventDefinition"}},
	{87, "boundaryEvent", "attachedToRef", true, []string{"activity"}},
	{88, "compensateEventDefinition", "activityRef", true, []string{"activity"}},
	{89, "errorEventDefinition", "errorRef", true, []string{"error"}},
	{90, "escalationEventDefinition", "escalationRef", true, []string{"escalation"}},
	{91, "linkEventDefinition", "source", false, []string{"linkEventDefinition"}},
	{92, "linkEventDefinition", "target", false, []string{"linkEventDefinition"}},
	{93, "messageEventDefinition", "messageRef", true, []string{"message"}},
	{94, "messageEventDefinition", "operationRef", false, []string{"operation"}},
	{95, "signalEventDefinition", "signalRef", true, []string{"signal"}},
	{96, "exclusiveGateway", "default", true, []string{"sequenceFlow"}},
	{97, "inclusiveGateway", "default", true, []string{"sequenceFlow"}},
	{98, "complexGateway", "default", true, []string{"sequenceFlow"}},
	{99, "lane", "partitionElementRef", true, nil},
	{100, "lane", "flowNodeRef", false, []string{"flowNode"}},
}

// subtypes lists the concrete BPMN elements of each abstract type the
// reference table names.
var subtypes = map[string][]string{
	"activity": {"task", "serviceTask", "userTask", "manualTask", "scriptTask", "businessRuleTask", "sendTask",
		"receiveTask", "subProcess", "adHocSubProcess", "transaction", "callActivity"},
	"gateway":    {"exclusiveGateway", "inclusiveGateway", "parallelGateway", "complexGateway", "eventBasedGateway"},
	"event":      {"startEvent", "endEvent", "intermediateCatchEvent", "intermediateThrowEvent", "boundaryEvent", "implicitThrowEvent"},
	"throwEvent": {"endEvent", "intermediateThrowEvent", "implicitThrowEvent"},
	"catchEvent": {"startEvent", "intermediateCatchEvent", "boundaryEvent"},
	"eventDefinition": {"messageEventDefinition", "signalEventDefinition", "timerEventDefinition", "errorEventDefinition",
		"escalationEventDefinition", "terminateEventDefinition", "conditionalEventDefinition", "linkEventDefinition",
		"compensateEventDefinition", "cancelEventDefinition"},
	"flowNode":        {"activity", "gateway", "event", "callChoreography", "choreographyTask", "subChoreography"},
	"flowElement":     {"flowNode", "sequenceFlow", "dataObject", "dataObjectReference", "dataStoreReference"},
	"callableElement": {"process", "globalTask", "globalUserTask", "globalManualTask", "globalScriptTask", "globalBusinessRuleTask"},
	"dataAssociation": {"dataInputAssociation", "dataOutputAssociation"},
	"pool":            {"participant"},
}

// isA reports whether an element named local is of type typ.
func isA(local, typ string) bool {
	if local == typ {
		return true
	}
	for _, sub := range subtypes[typ] {
		if isA(local, sub) {
			return true
		}
	}
	return false
}

// references checks every reference of the document against the
// reference table: it resolves to an element of the document, of an
// allowed type. A QName whose prefix names another namespace points into
// an imported document and is not checked; nor is a calledElement that
// resolves to nothing, which names a process deployed separately.
func (imp *importer) references(root *element) {
	ids := imp.elements
	foreign := foreignPrefixes(root)
	var walk func(e *element, process, owner string)
	walk = func(e *element, process, owner string) {
		if e.space != nsBPMN {
			return // extensions and diagram interchange are not BPMN model elements
		}
		if id := e.get("id"); id != "" {
			owner = id
		}
		if e.local == "process" {
			process = owner
		}
		for i := range referenceTable {
			r := &referenceTable[i]
			if !isA(e.local, r.owner) {
				continue
			}
			if r.attr {
				if v, ok := e.attr(r.name); ok {
					imp.reference(e, process, owner, r, v, ids, foreign)
				}
				continue
			}
			for _, c := range e.children {
				if c.space == nsBPMN && c.local == r.name {
					imp.reference(c, process, owner, r, c.content(), ids, foreign)
				}
			}
		}
		for _, c := range e.children {
			walk(c, process, owner)
		}
	}
	walk(root, "", "")
}

// reference checks one reference value of element e (owner is the id of e
// or of its nearest ancestor with one, process the id of its process).
func (imp *importer) reference(e *element, process, owner string, r *reference, value string, ids map[string]*element, foreign map[string]bool) {
	ref := strings.TrimSpace(value)
	if ref == "" {
		return // an empty reference is a missing one: the rules needing it report that
	}
	local := ref
	if i := strings.LastIndexByte(ref, ':'); i >= 0 {
		if foreign[ref[:i]] {
			return
		}
		local = ref[i+1:]
	}
	target, ok := ids[local]
	if !ok {
		target, ok = ids[ref]
	}
	rule := "REF." + strconv.Itoa(r.number)
	switch {
	case !ok && r.name == "calledElement":
	case !ok:
		imp.problems = append(imp.problems, &model.Problem{RuleID: rule, ProcessID: process, ElementID: owner, Pos: e.pos,
			Rule: "bpmn:" + e.local + " " + r.name + " " + ref + " points to no element: name the id of an element of this document"})
	case len(r.types) > 0 && !slices.ContainsFunc(r.types, func(t string) bool { return target.space == nsBPMN && isA(target.local, t) }):
		imp.problems = append(imp.problems, &model.Problem{RuleID: rule, ProcessID: process, ElementID: owner, Pos: e.pos,
			Rule: "bpmn:" + e.local + " " + r.name + " " + ref + " points to a bpmn:" + target.local + ", not a bpmn:" + strings.Join(r.types, " or bpmn:")})
	}
}

// foreignPrefixes returns the namespace prefixes the root declares for a
// namespace other than the document's target namespace.
func foreignPrefixes(root *element) map[string]bool {
	target := root.get("targetNamespace")
	out := map[string]bool{}
	for _, a := range root.attrs {
		if a.Name.Space == "xmlns" && a.Value != target {
			out[a.Name.Local] = true
		}
	}
	return out
}
