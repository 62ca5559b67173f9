package bpmnxml

import "github.com/flowtrack/flowtrack/engine/internal/model"

// This file is the one place that says which BPMN elements flowtrack
// imports. Widening support means moving a name from unsupported to a
// supported role here (and, for a new node kind, adding it to model.Kind).

// role says what the importer does with a BPMN element found among the flow
// elements of a process or sub-process.
type role uint8

const (
	// roleUnsupported elements are rejected with a Problem: flowtrack does
	// not execute them, and dropping them would change the process.
	roleUnsupported role = iota
	// roleNode elements become model nodes (their kind is model.KindByName).
	roleNode
	// roleFlow is bpmn:sequenceFlow.
	roleFlow
	// roleIgnored elements carry no execution semantics flowtrack uses:
	// artifacts, data and documentation.
	roleIgnored
)

// flowElementRoles classifies the BPMN elements that may appear inside a
// process or sub-process. A BPMN element not listed is unsupported; elements
// of other namespaces (tool extensions) are ignored.
var flowElementRoles = map[string]role{
	"sequenceFlow": roleFlow,

	// Artifacts, data and documentation: no execution semantics. incoming
	// and outgoing repeat what sequence flows say (and modellers sometimes
	// omit them), so flows are the only source of connections.
	"incoming":                roleIgnored,
	"outgoing":                roleIgnored,
	"documentation":           roleIgnored,
	"extensionElements":       roleIgnored,
	"auditing":                roleIgnored,
	"monitoring":              roleIgnored,
	"property":                roleIgnored,
	"laneSet":                 roleIgnored,
	"ioSpecification":         roleIgnored,
	"ioBinding":               roleIgnored,
	"textAnnotation":          roleIgnored,
	"association":             roleIgnored,
	"group":                   roleIgnored,
	"dataObject":              roleIgnored,
	"dataObjectReference":     roleIgnored,
	"dataStoreReference":      roleIgnored,
	"dataInput":               roleIgnored,
	"dataOutput":              roleIgnored,
	"dataInputAssociation":    roleIgnored,
	"dataOutputAssociation":   roleIgnored,
	"supports":                roleIgnored,
	"supportedInterfaceRef":   roleIgnored,
	"resourceRole":            roleIgnored,
	"performer":               roleIgnored,
	"humanPerformer":          roleIgnored,
	"potentialOwner":          roleIgnored,
	"correlationSubscription": roleIgnored,

	// Flow elements flowtrack does not execute yet (listed for clarity; any
	// unlisted BPMN element is unsupported too).
	"callChoreography":   roleUnsupported,
	"choreographyTask":   roleUnsupported,
	"subChoreography":    roleUnsupported,
	"implicitThrowEvent": roleUnsupported,
}

func init() {
	for k := model.KindStartEvent; k.String() != "unknown"; k++ {
		flowElementRoles[k.String()] = roleNode
	}
	// A transaction is a sub-process with a flag (model.Node.Transaction).
	flowElementRoles["transaction"] = roleNode
	flowElementRoles["adHocSubProcess"] = roleNode // a sub-process with model.AdHoc
}

// ignoredRootElements are definitions-level BPMN elements that describe
// something other than a process, which flowtrack does not run: a document
// with them deploys its processes, with a warning. Other root elements
// (collaborations, item definitions, interfaces, global tasks...) are read
// where needed or ignored silently.
var ignoredRootElements = map[string]bool{
	"choreography":           true,
	"globalChoreographyTask": true,
}

// loopCharacteristics are the children of an activity that say how it
// repeats. node reads them for the activity; the flow elements of a
// sub-process skip them.
var loopCharacteristics = map[string]bool{
	"standardLoopCharacteristics":      true,
	"multiInstanceLoopCharacteristics": true,
}

// eventDefinitionKinds maps BPMN event definition element names to kinds.
var eventDefinitionKinds = map[string]model.EventKind{
	"messageEventDefinition":     model.EventMessage,
	"signalEventDefinition":      model.EventSignal,
	"timerEventDefinition":       model.EventTimer,
	"errorEventDefinition":       model.EventError,
	"escalationEventDefinition":  model.EventEscalation,
	"terminateEventDefinition":   model.EventTerminate,
	"conditionalEventDefinition": model.EventConditional,
	"linkEventDefinition":        model.EventLink,
	"compensateEventDefinition":  model.EventCompensation,
	"cancelEventDefinition":      model.EventCancel,
}
