package engine_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// ruleDoc wraps definitions-level declarations and the body of process p.
func ruleDoc(decls, body string) string {
	return `<?xml version="1.0"?><bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" ` +
		`xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">` +
		decls + `<bpmn:process id="p" isExecutable="true">` + body + `</bpmn:process></bpmn:definitions>`
}

// ruleBody is the body of a process with an element between a start and an
// end event.
func ruleBody(element, id string) string {
	return `<bpmn:startEvent id="s"/>` + element + `<bpmn:endEvent id="e"/>` + flows("s", id, id, "e")
}

const startEnd = `<bpmn:startEvent id="s"/><bpmn:endEvent id="e"/><bpmn:sequenceFlow id="f" sourceRef="s" targetRef="e"/>`

// dmnRuleDoc is a DMN model with one decision table of that hit policy.
func dmnRuleDoc(hitPolicy string) string {
	return `<definitions xmlns="https://www.omg.org/spec/DMN/20191111/MODEL/" id="d" name="d" namespace="t">` +
		`<decision id="x" name="x"><decisionTable hitPolicy="` + hitPolicy + `"><input><inputExpression><text>a</text></inputExpression></input>` +
		`<output name="o"/><rule><inputEntry><text>1</text></inputEntry><outputEntry><text>2</text></outputEntry></rule>` +
		`</decisionTable></decision></definitions>`
}

// ruleCase is the smallest valid and invalid model of one rule.
type ruleCase struct {
	rule           string
	valid, invalid string
	// warning: the rule gives a warning, not an error.
	warning bool
}

// ruleCases holds one case per rule flowtrack checks (RULES.md): the
// invalid model breaks the rule, the valid one is its nearest model that
// keeps it. TestRules_EveryRuleHasACase holds every rule id of the code to
// a case here.
var ruleCases = []ruleCase{
	{rule: "FT.xml", valid: ruleDoc("", startEnd), invalid: `<bpmn:definitions`},
	{rule: "FT.document", valid: ruleDoc("", startEnd), invalid: `<definitions xmlns="http://example.com"/>`},
	{rule: "FT.executable", valid: ruleDoc("", startEnd), invalid: strings.Replace(ruleDoc("", startEnd), `isExecutable="true"`, `isExecutable="false"`, 1)},
	{rule: "FT.start", valid: ruleDoc("", startEnd), invalid: ruleDoc("", `<bpmn:task id="t"/>`)},
	{rule: "FT.reachable", valid: ruleDoc("", ruleBody(`<bpmn:task id="t"/>`, "t")),
		invalid: ruleDoc("", startEnd+`<bpmn:task id="x"/><bpmn:task id="y"/>`+flows("x", "y", "y", "x"))},
	{rule: "XSD.id", valid: ruleDoc("", ruleBody(`<bpmn:task id="t"/>`, "t")), invalid: ruleDoc("", ruleBody(`<bpmn:task id="t"/><bpmn:task id="t"/>`, "t"))},
	{rule: "XSD.required", valid: ruleDoc("", startEnd), invalid: ruleDoc("", startEnd+`<bpmn:sequenceFlow id="g" sourceRef="s"/>`)},
	{rule: "XSD.integer", valid: ruleDoc("", ruleBody(`<bpmn:task id="t"><bpmn:standardLoopCharacteristics loopMaximum="3"/></bpmn:task>`, "t")),
		invalid: ruleDoc("", ruleBody(`<bpmn:task id="t"><bpmn:standardLoopCharacteristics loopMaximum="many"/></bpmn:task>`, "t"))},
	{rule: "XSD.default", valid: ruleDoc("", ruleBody(`<bpmn:task id="t" default="sf_t_e"/>`, "t")),
		invalid: ruleDoc("", ruleBody(`<bpmn:parallelGateway id="t" default="sf_t_e"/>`, "t"))},
	{rule: "FT.unsupported", valid: ruleDoc("", ruleBody(`<bpmn:subProcess id="t"><bpmn:startEvent id="ss"/></bpmn:subProcess>`, "t")),
		invalid: ruleDoc("", ruleBody(`<bpmn:implicitThrowEvent id="t"/>`, "t"))},
	{rule: "FT.ignored", warning: true, valid: ruleDoc("", startEnd), invalid: ruleDoc(`<bpmn:choreography id="c"/>`, startEnd)},
	{rule: "FT.non-executable", warning: true, valid: ruleDoc("", startEnd),
		invalid: ruleDoc(`<bpmn:process id="q" isExecutable="false"/>`, startEnd)},
	{rule: "EXT.003", valid: ruleDoc("", ruleBody(`<bpmn:task id="t"/>`, "t")), invalid: ruleDoc("", ruleBody(`<bpmn:task id="t"/><bpmn:task/>`, "t"))},
	{rule: "EXT.004", valid: ruleDoc("", ruleBody(`<bpmn:task id="t"><bpmn:documentation textFormat="text/plain">d</bpmn:documentation></bpmn:task>`, "t")),
		invalid: ruleDoc("", ruleBody(`<bpmn:task id="t"><bpmn:documentation textFormat="plain">d</bpmn:documentation></bpmn:task>`, "t"))},
	{rule: "EXT.010", valid: ruleDoc("", startEnd+`<bpmn:textAnnotation id="a" textFormat="text/plain"/>`),
		invalid: ruleDoc("", startEnd+`<bpmn:textAnnotation id="a" textFormat="wrong"/>`)},
	{rule: "EXT.011", valid: ruleDoc(`<bpmn:escalation id="x" escalationCode="c"/>`, `<bpmn:startEvent id="s"/><bpmn:endEvent id="e"><bpmn:escalationEventDefinition escalationRef="x"/></bpmn:endEvent>`+flows("s", "e")),
		invalid: ruleDoc(`<bpmn:escalation id="x"/>`, `<bpmn:startEvent id="s"/><bpmn:endEvent id="e"><bpmn:escalationEventDefinition escalationRef="x"/></bpmn:endEvent>`+flows("s", "e"))},
	{rule: "EXT.013", valid: ruleDoc("", ruleBody(timerCatch(`<bpmn:timeDuration>PT1M</bpmn:timeDuration>`), "t")),
		invalid: ruleDoc("", ruleBody(timerCatch(`<bpmn:timeDuration/>`), "t"))},
	{rule: "EXT.017", warning: true, valid: ruleDoc("", ruleBody(`<bpmn:parallelGateway id="t" gatewayDirection="Converging"/>`, "t")),
		invalid: ruleDoc("", ruleBody(`<bpmn:parallelGateway id="t" gatewayDirection="Converging"/>`, "t")+flows("t", "e2")+`<bpmn:endEvent id="e2"/>`)},
	{rule: "EXT.018", warning: true, valid: ruleDoc("", ruleBody(`<bpmn:parallelGateway id="t" gatewayDirection="Diverging"/>`, "t")),
		invalid: ruleDoc("", ruleBody(`<bpmn:parallelGateway id="t" gatewayDirection="Diverging"/>`, "t")+`<bpmn:startEvent id="s2"/>`+flows("s2", "t"))},
	{rule: "EXT.019", warning: true, valid: ruleDoc("", ruleBody(`<bpmn:parallelGateway id="t"/>`, "t")),
		invalid: ruleDoc("", ruleBody(`<bpmn:parallelGateway id="t" gatewayDirection="Mixed"/>`, "t"))},
	{rule: "EXT.024", valid: ruleDoc("", startEnd), invalid: ruleDoc("", strings.Replace(startEnd, `targetRef="e"`, `targetRef="e" isImmediate="false"`, 1))},
	{rule: "EXT.026", valid: ruleDoc("", ruleBody(`<bpmn:exclusiveGateway id="t" default="sf_t_e"/>`, "t")),
		invalid: ruleDoc("", ruleBody(`<bpmn:exclusiveGateway id="t" default="sf_s_t"/>`, "t"))},
	{rule: "EXT.028", valid: ruleDoc(`<bpmn:process id="q" isExecutable="true"><bpmn:startEvent id="qs"/></bpmn:process>`, startEnd),
		invalid: ruleDoc(`<bpmn:process id="q" isExecutable="true"><bpmn:startEvent id="qs"/></bpmn:process>`, startEnd+`<bpmn:sequenceFlow id="g" sourceRef="e" targetRef="qs"/>`)},
	{rule: "EXT.031", valid: ruleDoc(`<bpmn:collaboration id="c"><bpmn:participant id="a" processRef="p"/><bpmn:participant id="b"/><bpmn:messageFlow id="m" sourceRef="t" targetRef="b"/></bpmn:collaboration>`, ruleBody(`<bpmn:task id="t"/>`, "t")),
		invalid: ruleDoc(`<bpmn:collaboration id="c"><bpmn:participant id="a" processRef="p"/><bpmn:messageFlow id="m" sourceRef="e" targetRef="a"/></bpmn:collaboration>`, startEnd)},
	{rule: "EXT.035", valid: ruleDoc("", startEnd), invalid: strings.Replace(ruleDoc("", startEnd), `isExecutable="true"`, `isExecutable="true" processType="Public"`, 1)},
	{rule: "EXT.037", valid: ruleDoc("", ruleBody(`<bpmn:task id="t" startQuantity="1"/>`, "t")), invalid: ruleDoc("", ruleBody(`<bpmn:task id="t" startQuantity="0"/>`, "t"))},
	{rule: "EXT.038", valid: ruleDoc("", ruleBody(`<bpmn:task id="t" completionQuantity="1"/>`, "t")), invalid: ruleDoc("", ruleBody(`<bpmn:task id="t" completionQuantity="0"/>`, "t"))},
	{rule: "EXT.046", valid: ruleDoc(msgDecl, ruleBody(`<bpmn:sendTask id="t" messageRef="M"><bpmn:ioSpecification><bpmn:inputSet id="i1"/><bpmn:outputSet id="o1"/></bpmn:ioSpecification></bpmn:sendTask>`, "t")),
		invalid: ruleDoc(msgDecl, ruleBody(`<bpmn:sendTask id="t" messageRef="M"><bpmn:ioSpecification><bpmn:inputSet id="i1"/><bpmn:inputSet id="i2"/><bpmn:outputSet id="o1"/></bpmn:ioSpecification></bpmn:sendTask>`, "t"))},
	{rule: "EXT.047", valid: ruleDoc(msgDecl, ruleBody(`<bpmn:sendTask id="t" messageRef="M"><bpmn:ioSpecification><bpmn:dataInput id="d1"/><bpmn:inputSet id="i1"><bpmn:dataInputRefs>d1</bpmn:dataInputRefs></bpmn:inputSet><bpmn:outputSet id="o1"/></bpmn:ioSpecification></bpmn:sendTask>`, "t")),
		invalid: ruleDoc(msgDecl, ruleBody(`<bpmn:sendTask id="t" messageRef="M"><bpmn:ioSpecification><bpmn:dataInput id="d1"/><bpmn:dataInput id="d2"/><bpmn:inputSet id="i1"><bpmn:dataInputRefs>d1</bpmn:dataInputRefs></bpmn:inputSet><bpmn:outputSet id="o1"/></bpmn:ioSpecification></bpmn:sendTask>`, "t"))},
	{rule: "EXT.055", valid: ruleDoc("", ruleBody(`<bpmn:task id="t"><bpmn:standardLoopCharacteristics loopMaximum="2"/></bpmn:task>`, "t")),
		invalid: ruleDoc("", ruleBody(`<bpmn:task id="t"><bpmn:standardLoopCharacteristics loopMaximum="2"/><bpmn:multiInstanceLoopCharacteristics/></bpmn:task>`, "t"))},
	{rule: "EXT.056", valid: ruleDoc("", ruleBody(`<bpmn:subProcess id="t"><bpmn:startEvent id="ss"/></bpmn:subProcess>`, "t")),
		invalid: ruleDoc("", ruleBody(`<bpmn:subProcess id="t"><bpmn:startEvent id="ss"/><bpmn:choreographyTask id="ct"/></bpmn:subProcess>`, "t"))},
	{rule: "EXT.057", valid: ruleDoc("", startEnd+eventSub("")), invalid: ruleDoc("", startEnd+eventSub("")+flows("e", "es"))},
	{rule: "EXT.058", valid: ruleDoc("", startEnd+eventSub("")), invalid: ruleDoc("", startEnd+eventSub(`<bpmn:startEvent id="es2"><bpmn:signalEventDefinition signalRef="S"/></bpmn:startEvent>`))},
	{rule: "EXT.059", valid: ruleDoc("", startEnd+eventSub("")), invalid: ruleDoc("", startEnd+`<bpmn:subProcess id="es" triggeredByEvent="true"><bpmn:startEvent id="ess"/></bpmn:subProcess>`)},
	{rule: "EXT.060", valid: ruleDoc("", ruleBody(`<bpmn:transaction id="t" method="##Compensate"/>`, "t")), invalid: ruleDoc("", ruleBody(`<bpmn:transaction id="t" method="bad%"/>`, "t"))},
	{rule: "EXT.061", valid: ruleDoc("", ruleBody(`<bpmn:adHocSubProcess id="t"><bpmn:task id="a"/></bpmn:adHocSubProcess>`, "t")),
		invalid: ruleDoc("", ruleBody(`<bpmn:adHocSubProcess id="t"/>`, "t"))},
	{rule: "EXT.062", valid: ruleDoc("", ruleBody(`<bpmn:adHocSubProcess id="t"><bpmn:task id="a"/></bpmn:adHocSubProcess>`, "t")),
		invalid: ruleDoc("", ruleBody(`<bpmn:adHocSubProcess id="t"><bpmn:startEvent id="as"/><bpmn:task id="a"/></bpmn:adHocSubProcess>`, "t"))},
	{rule: "EXT.064", valid: ruleDoc("", startEnd), invalid: ruleDoc("", startEnd+`<bpmn:supportedInterfaceRef>I</bpmn:supportedInterfaceRef>`)},
	{rule: "EXT.067", valid: ruleDoc("", ruleBody(`<bpmn:task id="t"><bpmn:multiInstanceLoopCharacteristics><bpmn:loopCardinality>2</bpmn:loopCardinality></bpmn:multiInstanceLoopCharacteristics></bpmn:task>`, "t")),
		invalid: ruleDoc("", ruleBody(`<bpmn:task id="t"><bpmn:multiInstanceLoopCharacteristics/></bpmn:task>`, "t"))},
	{rule: "EXT.068", valid: ruleDoc("", ruleBody(`<bpmn:task id="t"><bpmn:ioSpecification><bpmn:dataInput id="di"/><bpmn:inputSet id="i"><bpmn:dataInputRefs>di</bpmn:dataInputRefs></bpmn:inputSet><bpmn:outputSet id="o"/></bpmn:ioSpecification><bpmn:multiInstanceLoopCharacteristics><bpmn:loopDataInputRef>di</bpmn:loopDataInputRef></bpmn:multiInstanceLoopCharacteristics></bpmn:task>`, "t")),
		invalid: ruleDoc("", ruleBody(`<bpmn:task id="t"><bpmn:multiInstanceLoopCharacteristics><bpmn:loopDataInputRef>di</bpmn:loopDataInputRef></bpmn:multiInstanceLoopCharacteristics></bpmn:task>`, "t"))},
	{rule: "EXT.079", valid: ruleDoc("", ruleBody(`<bpmn:subProcess id="t"><bpmn:startEvent id="ss"/></bpmn:subProcess>`, "t")),
		invalid: ruleDoc("", ruleBody(`<bpmn:subProcess id="t"><bpmn:ioSpecification><bpmn:inputSet id="i"/><bpmn:outputSet id="o"/></bpmn:ioSpecification><bpmn:startEvent id="ss"/></bpmn:subProcess>`, "t"))},
	{rule: "EXT.085", valid: ioTask(`<bpmn:dataInput id="di"/><bpmn:inputSet id="i"><bpmn:dataInputRefs>di</bpmn:dataInputRefs><bpmn:optionalInputRefs>di</bpmn:optionalInputRefs></bpmn:inputSet><bpmn:outputSet id="o"/>`),
		invalid: ioTask(`<bpmn:dataInput id="di"/><bpmn:inputSet id="i"><bpmn:optionalInputRefs>di</bpmn:optionalInputRefs></bpmn:inputSet><bpmn:outputSet id="o"/>`)},
	{rule: "EXT.087", valid: ioTask(`<bpmn:inputSet id="i"><bpmn:outputSetRefs>o</bpmn:outputSetRefs></bpmn:inputSet><bpmn:outputSet id="o"><bpmn:inputSetRefs>i</bpmn:inputSetRefs></bpmn:outputSet>`),
		invalid: ioTask(`<bpmn:inputSet id="i"><bpmn:outputSetRefs>o</bpmn:outputSetRefs></bpmn:inputSet><bpmn:outputSet id="o"/>`)},
	{rule: "EXT.088", valid: ioTask(`<bpmn:dataOutput id="do"/><bpmn:inputSet id="i"/><bpmn:outputSet id="o"><bpmn:dataOutputRefs>do</bpmn:dataOutputRefs></bpmn:outputSet>`),
		invalid: ioTask(`<bpmn:dataOutput id="do"/><bpmn:inputSet id="i"/><bpmn:outputSet id="o"/>`)},
	{rule: "EXT.089", valid: ioTask(`<bpmn:dataOutput id="do"/><bpmn:inputSet id="i"/><bpmn:outputSet id="o"><bpmn:dataOutputRefs>do</bpmn:dataOutputRefs><bpmn:optionalOutputRefs>do</bpmn:optionalOutputRefs></bpmn:outputSet>`),
		invalid: ioTask(`<bpmn:dataOutput id="do"/><bpmn:inputSet id="i"/><bpmn:outputSet id="o"><bpmn:dataOutputRefs>do</bpmn:dataOutputRefs><bpmn:optionalOutputRefs>dx</bpmn:optionalOutputRefs></bpmn:outputSet>`)},
	{rule: "EXT.090", valid: ioTask(`<bpmn:dataOutput id="do"/><bpmn:inputSet id="i"/><bpmn:outputSet id="o"><bpmn:dataOutputRefs>do</bpmn:dataOutputRefs><bpmn:whileExecutingOutputRefs>do</bpmn:whileExecutingOutputRefs></bpmn:outputSet>`),
		invalid: ioTask(`<bpmn:dataOutput id="do"/><bpmn:inputSet id="i"/><bpmn:outputSet id="o"><bpmn:dataOutputRefs>do</bpmn:dataOutputRefs><bpmn:whileExecutingOutputRefs>dx</bpmn:whileExecutingOutputRefs></bpmn:outputSet>`)},
	{rule: "EXT.020", valid: ruleDoc(itemDecls, startEnd+`<bpmn:dataObject id="o" itemSubjectRef="C" isCollection="true"/>`),
		invalid: ruleDoc(itemDecls, startEnd+`<bpmn:dataObject id="o" itemSubjectRef="C"/>`)},
	{rule: "EXT.025", valid: ruleDoc("", `<bpmn:startEvent id="s"/><bpmn:task id="t"/><bpmn:endEvent id="a"/><bpmn:endEvent id="b"/>`+flows("s", "t", "t", "b")+
		`<bpmn:sequenceFlow id="c" sourceRef="t" targetRef="a"><bpmn:conditionExpression>= x &gt; 1</bpmn:conditionExpression></bpmn:sequenceFlow>`),
		invalid: ruleDoc("", `<bpmn:startEvent id="s"/><bpmn:endEvent id="e"/><bpmn:sequenceFlow id="c" sourceRef="s" targetRef="e"><bpmn:conditionExpression>= x &gt; 1</bpmn:conditionExpression></bpmn:sequenceFlow>`)},
	{rule: "EXT.027", valid: ruleDoc(`<bpmn:choreography id="c"/>`, startEnd),
		invalid: ruleDoc(`<bpmn:choreography id="c"><bpmn:choreographyRef>c2</bpmn:choreographyRef></bpmn:choreography><bpmn:choreography id="c2"/>`, startEnd)},
	{rule: "EXT.029", valid: ruleDoc(multiplicity(`minimum="0" maximum="2"`), startEnd), invalid: ruleDoc(multiplicity(`minimum="-1" maximum="2"`), startEnd)},
	{rule: "EXT.030", valid: ruleDoc(multiplicity(`minimum="2" maximum="2"`), startEnd), invalid: ruleDoc(multiplicity(`minimum="3" maximum="2"`), startEnd)},
	{rule: "EXT.032", valid: ruleDoc(`<bpmn:globalConversation id="gc"/>`, startEnd),
		invalid: ruleDoc(`<bpmn:globalConversation id="gc"><bpmn:textAnnotation id="ta"/></bpmn:globalConversation>`, startEnd)},
	{rule: "EXT.040", valid: ruleDoc(resourceDecl, ruleBody(performer(`<bpmn:resourceRef>R</bpmn:resourceRef>`), "t")),
		invalid: ruleDoc(resourceDecl, ruleBody(performer(""), "t"))},
	{rule: "EXT.042", valid: ruleDoc(itemDecls+operationDecl, ruleBody(operationTask(`<bpmn:inputSet id="is"/><bpmn:outputSet id="os"/>`), "t")),
		invalid: ruleDoc(itemDecls+operationDecl, ruleBody(`<bpmn:serviceTask id="t" operationRef="O"/>`, "t"))},
	{rule: "EXT.043", valid: ruleDoc(itemDecls+operationDecl, ruleBody(operationTask(`<bpmn:inputSet id="is"/><bpmn:outputSet id="os"/>`), "t")),
		invalid: ruleDoc(itemDecls+operationDecl, ruleBody(operationTask(`<bpmn:inputSet id="is"/><bpmn:outputSet id="os"/><bpmn:outputSet id="os2"/>`), "t"))},
	{rule: "EXT.044", valid: ruleDoc(itemDecls+operationDecl, ruleBody(operationTask(inputOf("I1")), "t")),
		invalid: ruleDoc(itemDecls+operationDecl, ruleBody(operationTask(inputOf("I2")), "t"))},
	{rule: "EXT.045", valid: ruleDoc(itemDecls+operationDecl, ruleBody(operationTask(outputOf("I1")), "t")),
		invalid: ruleDoc(itemDecls+operationDecl, ruleBody(operationTask(outputOf("I2")), "t"))},
	{rule: "EXT.048", valid: ruleDoc(itemDecls, ruleBody(`<bpmn:sendTask id="t" messageRef="M"><bpmn:ioSpecification>`+inputOf("I1")+`</bpmn:ioSpecification></bpmn:sendTask>`, "t")),
		invalid: ruleDoc(itemDecls, ruleBody(`<bpmn:sendTask id="t" messageRef="M"><bpmn:ioSpecification>`+inputOf("")+`</bpmn:ioSpecification></bpmn:sendTask>`, "t"))},
	{rule: "EXT.050", valid: ruleDoc(msgDecl, ruleBody(`<bpmn:receiveTask id="t" messageRef="M"><bpmn:ioSpecification><bpmn:inputSet id="i1"/><bpmn:outputSet id="o1"/></bpmn:ioSpecification></bpmn:receiveTask>`, "t")),
		invalid: ruleDoc(msgDecl, ruleBody(`<bpmn:receiveTask id="t" messageRef="M"><bpmn:ioSpecification><bpmn:inputSet id="i1"/><bpmn:outputSet id="o1"/><bpmn:outputSet id="o2"/></bpmn:ioSpecification></bpmn:receiveTask>`, "t"))},
	{rule: "EXT.051", valid: ruleDoc(msgDecl, ruleBody(`<bpmn:receiveTask id="t" messageRef="M"><bpmn:ioSpecification><bpmn:dataOutput id="d1"/><bpmn:inputSet id="i1"/><bpmn:outputSet id="o1"><bpmn:dataOutputRefs>d1</bpmn:dataOutputRefs></bpmn:outputSet></bpmn:ioSpecification></bpmn:receiveTask>`, "t")),
		invalid: ruleDoc(msgDecl, ruleBody(`<bpmn:receiveTask id="t" messageRef="M"><bpmn:ioSpecification><bpmn:dataOutput id="d1"/><bpmn:dataOutput id="d2"/><bpmn:inputSet id="i1"/><bpmn:outputSet id="o1"><bpmn:dataOutputRefs>d1</bpmn:dataOutputRefs><bpmn:dataOutputRefs>d2</bpmn:dataOutputRefs></bpmn:outputSet></bpmn:ioSpecification></bpmn:receiveTask>`, "t"))},
	{rule: "EXT.052", valid: ruleDoc(itemDecls, ruleBody(`<bpmn:receiveTask id="t" messageRef="M"><bpmn:ioSpecification>`+outputOf("I1")+`</bpmn:ioSpecification></bpmn:receiveTask>`, "t")),
		invalid: ruleDoc(itemDecls, ruleBody(`<bpmn:receiveTask id="t" messageRef="M"><bpmn:ioSpecification>`+outputOf("I2")+`</bpmn:ioSpecification></bpmn:receiveTask>`, "t"))},
	{rule: "EXT.069", valid: ruleDoc(itemDecls, ruleBody(loopOutput("I1"), "t")), invalid: ruleDoc(itemDecls, ruleBody(loopOutput("C"), "t"))},
	{rule: "EXT.070", valid: ruleDoc(itemDecls, ruleBody(loopInput("I1"), "t")), invalid: ruleDoc(itemDecls, ruleBody(loopInput("I2"), "t"))},
	{rule: "EXT.071", valid: ruleDoc("", ruleBody(multiInstance(`<bpmn:completionCondition>= done</bpmn:completionCondition>`), "t")),
		invalid: ruleDoc("", ruleBody(multiInstance(`<bpmn:completionCondition>23</bpmn:completionCondition>`), "t"))},
	{rule: "EXT.072", valid: ruleDoc("", ruleBody(multiInstance(`<bpmn:complexBehaviorDefinition id="cb"><bpmn:condition>= done</bpmn:condition></bpmn:complexBehaviorDefinition>`), "t")),
		invalid: ruleDoc("", ruleBody(multiInstance(`<bpmn:complexBehaviorDefinition id="cb"><bpmn:condition>"done"</bpmn:condition></bpmn:complexBehaviorDefinition>`), "t"))},
	{rule: "EXT.078", valid: ruleDoc("", startEnd+`<bpmn:property id="pr"/>`), invalid: ruleDoc(`<bpmn:property id="pr"/>`, startEnd)},
	{rule: "EXT.080", valid: processData(`<bpmn:dataInputAssociation id="a"><bpmn:sourceRef>pi</bpmn:sourceRef><bpmn:targetRef>ti</bpmn:targetRef></bpmn:dataInputAssociation>`),
		invalid: processData(`<bpmn:dataOutputAssociation id="a"><bpmn:sourceRef>to</bpmn:sourceRef><bpmn:targetRef>pi</bpmn:targetRef></bpmn:dataOutputAssociation>`)},
	{rule: "EXT.081", valid: typedIOTask(`<bpmn:dataInput id="di" itemSubjectRef="C" isCollection="true"/><bpmn:inputSet id="i"><bpmn:dataInputRefs>di</bpmn:dataInputRefs></bpmn:inputSet><bpmn:outputSet id="o"/>`),
		invalid: typedIOTask(`<bpmn:dataInput id="di" itemSubjectRef="C"/><bpmn:inputSet id="i"><bpmn:dataInputRefs>di</bpmn:dataInputRefs></bpmn:inputSet><bpmn:outputSet id="o"/>`)},
	{rule: "EXT.082", valid: processData(`<bpmn:dataOutputAssociation id="a"><bpmn:sourceRef>to</bpmn:sourceRef><bpmn:targetRef>po</bpmn:targetRef></bpmn:dataOutputAssociation>`),
		invalid: processData(`<bpmn:dataInputAssociation id="a"><bpmn:sourceRef>po</bpmn:sourceRef><bpmn:targetRef>ti</bpmn:targetRef></bpmn:dataInputAssociation>`)},
	{rule: "EXT.083", valid: typedIOTask(strings.Replace(outputOf("C"), `itemSubjectRef="C"`, `itemSubjectRef="C" isCollection="true"`, 1)),
		invalid: typedIOTask(outputOf("C"))},
	{rule: "EXT.092", valid: ruleDoc("", ruleBody(`<bpmn:task id="t"><bpmn:dataInputAssociation id="a"><bpmn:sourceRef>o1</bpmn:sourceRef></bpmn:dataInputAssociation></bpmn:task><bpmn:dataObject id="o1"/>`, "t")),
		invalid: ruleDoc("", ruleBody(`<bpmn:task id="t"><bpmn:dataInputAssociation id="a"><bpmn:sourceRef>o1</bpmn:sourceRef><bpmn:sourceRef>o2</bpmn:sourceRef></bpmn:dataInputAssociation></bpmn:task><bpmn:dataObject id="o1"/><bpmn:dataObject id="o2"/>`, "t"))},
	{rule: "EXT.093", valid: ruleDoc("", startEnd), invalid: ruleDoc("", `<bpmn:startEvent id="s"/><bpmn:endEvent id="e"><bpmn:dataInput id="di"/></bpmn:endEvent>`+flows("s", "e"))},
	{rule: "EXT.096", valid: ruleDoc("", startEnd), invalid: ruleDoc("", startEnd+ruleBody(`<bpmn:task id="t"/>`, "t")[len(`<bpmn:startEvent id="s"/>`):]+flows("t", "s"))},
	{rule: "EXT.098", valid: ruleDoc("", startEnd), invalid: ruleDoc("", `<bpmn:startEvent id="s"><bpmn:errorEventDefinition/></bpmn:startEvent><bpmn:endEvent id="e"/>`+flows("s", "e"))},
	{rule: "EXT.099", valid: callee(`<bpmn:startEvent id="cs"/>`), invalid: callee(`<bpmn:startEvent id="cs"><bpmn:signalEventDefinition signalRef="S"/></bpmn:startEvent>`)},
	{rule: "EXT.100", valid: ruleDoc("", ruleBody(`<bpmn:subProcess id="t"><bpmn:startEvent id="ss"/></bpmn:subProcess>`, "t")),
		invalid: ruleDoc(sigDecl, ruleBody(`<bpmn:subProcess id="t"><bpmn:startEvent id="ss"><bpmn:signalEventDefinition signalRef="S"/></bpmn:startEvent></bpmn:subProcess>`, "t"))},
	{rule: "EXT.103", valid: ruleDoc(collab(`<bpmn:messageFlow id="m" sourceRef="b" targetRef="t"/>`), ruleBody(`<bpmn:receiveTask id="t" messageRef="M"/>`, "t")),
		invalid: ruleDoc(collab(`<bpmn:messageFlow id="m" sourceRef="b" targetRef="s"/>`), startEnd)},
	{rule: "EXT.104", valid: ruleDoc("", startEnd), invalid: ruleDoc("", startEnd+`<bpmn:endEvent id="e2"/>`+flows("e", "e2"))},
	{rule: "EXT.107", valid: ruleDoc("", startEnd), invalid: ruleDoc("", startEnd+`<bpmn:endEvent id="e2"/>`)},
	{rule: "EXT.108", valid: ruleDoc(collab(`<bpmn:messageFlow id="m" sourceRef="t" targetRef="b"/>`), ruleBody(`<bpmn:task id="t"/>`, "t")),
		invalid: ruleDoc(collab(`<bpmn:messageFlow id="m" sourceRef="b" targetRef="e"/>`), startEnd)},
	{rule: "EXT.110", valid: boundary(`<bpmn:timerEventDefinition><bpmn:timeDuration>PT1M</bpmn:timeDuration></bpmn:timerEventDefinition>`, ""),
		invalid: boundary(`<bpmn:terminateEventDefinition/>`, "")},
	{rule: "EXT.112", valid: boundary(timerDef, ""), invalid: boundary(timerDef, flows("s", "b"))},
	{rule: "EXT.113", valid: boundary(timerDef, ""), invalid: strings.Replace(boundary(timerDef, ""), flows("b", "be"), "", 1)},
	{rule: "EXT.114", valid: compensation(`isForCompensation="true"`, ""), invalid: compensation(`isForCompensation="true"`, `<bpmn:endEvent id="ce"/>`+flows("b", "ce"))},
	{rule: "EXT.115", valid: ruleDoc("", ruleBody(timerCatch(`<bpmn:timeDuration>PT1M</bpmn:timeDuration>`), "t")),
		invalid: ruleDoc("", startEnd+`<bpmn:intermediateCatchEvent id="t"><bpmn:timerEventDefinition><bpmn:timeDuration>PT1M</bpmn:timeDuration></bpmn:timerEventDefinition></bpmn:intermediateCatchEvent>`+flows("t", "e"))},
	{rule: "EXT.116", valid: ruleDoc("", ruleBody(timerCatch(`<bpmn:timeDuration>PT1M</bpmn:timeDuration>`), "t")),
		invalid: ruleDoc("", startEnd+timerCatch(`<bpmn:timeDuration>PT1M</bpmn:timeDuration>`)+flows("s", "t"))},
	{rule: "EXT.117", valid: link("go", "go"), invalid: strings.Replace(link("go", "go"), `</bpmn:process>`, `<bpmn:endEvent id="e2"/>`+flows("lt", "e2")+`</bpmn:process>`, 1)},
	{rule: "EXT.120", valid: boundary(timerDef, ""), invalid: boundary(`<bpmn:cancelEventDefinition/>`, "")},
	{rule: "EXT.121", valid: ruleDoc("", startEnd), invalid: ruleDoc("", `<bpmn:startEvent id="s"><bpmn:compensateEventDefinition/></bpmn:startEvent><bpmn:endEvent id="e"/>`+flows("s", "e"))},
	{rule: "EXT.122", valid: ruleDoc("", ruleBody(timerCatch(`<bpmn:timeDuration>PT1M</bpmn:timeDuration>`), "t")),
		invalid: ruleDoc("", ruleBody(`<bpmn:intermediateCatchEvent id="t"><bpmn:compensateEventDefinition/></bpmn:intermediateCatchEvent>`, "t"))},
	{rule: "EXT.123", valid: ruleDoc("", ruleBody(`<bpmn:intermediateCatchEvent id="t"><bpmn:conditionalEventDefinition><bpmn:condition>= x &gt; 1</bpmn:condition></bpmn:conditionalEventDefinition></bpmn:intermediateCatchEvent>`, "t")),
		invalid: ruleDoc("", ruleBody(`<bpmn:intermediateCatchEvent id="t"><bpmn:conditionalEventDefinition/></bpmn:intermediateCatchEvent>`, "t"))},
	{rule: "EXT.118", valid: link("go", "go"), invalid: link("go", "elsewhere")},
	{rule: "EXT.126", valid: link("go", "go"), invalid: linkIntoSubProcess("go")},
	{rule: "EXT.127", valid: ruleDoc(msgDecl, ruleBody(`<bpmn:receiveTask id="t" messageRef="M"/>`, "t")), invalid: ruleDoc(msgDecl, ruleBody(`<bpmn:receiveTask id="t"/>`, "t"))},
	{rule: "EXT.127", valid: ruleDoc(msgDecl, ruleBody(`<bpmn:intermediateThrowEvent id="t"><bpmn:extensionElements><zeebe:taskDefinition type="send"/></bpmn:extensionElements><bpmn:messageEventDefinition/></bpmn:intermediateThrowEvent>`, "t")),
		invalid: ruleDoc(msgDecl, ruleBody(`<bpmn:intermediateThrowEvent id="t"><bpmn:messageEventDefinition/></bpmn:intermediateThrowEvent>`, "t"))},
	{rule: "EXT.131", valid: ruleDoc("", ruleBody(timerCatch(`<bpmn:timeDuration>PT1M</bpmn:timeDuration>`), "t")),
		invalid: ruleDoc("", ruleBody(timerCatch(`<bpmn:timeDuration>PT1M</bpmn:timeDuration><bpmn:timeCycle>R2/PT1M</bpmn:timeCycle>`), "t"))},
	{rule: "EXT.132", valid: ruleDoc("", ruleBody(timerCatch(`<bpmn:timeDate>2030-01-31T09:00:00Z</bpmn:timeDate>`), "t")),
		invalid: ruleDoc("", ruleBody(timerCatch(`<bpmn:timeDate>tomorrow</bpmn:timeDate>`), "t"))},
	{rule: "EXT.133", valid: ruleDoc("", ruleBody(timerCatch(`<bpmn:timeCycle>R2/PT1M</bpmn:timeCycle>`), "t")),
		invalid: ruleDoc("", ruleBody(timerCatch(`<bpmn:timeCycle>every minute</bpmn:timeCycle>`), "t"))},
	{rule: "FT.timer-duration", valid: ruleDoc("", ruleBody(timerCatch(`<bpmn:timeDuration>P3D</bpmn:timeDuration>`), "t")),
		invalid: ruleDoc("", ruleBody(timerCatch(`<bpmn:timeDuration>3 days</bpmn:timeDuration>`), "t"))},
	{rule: "EXT.135", warning: true, valid: ruleDoc("", `<bpmn:startEvent id="s"/><bpmn:parallelGateway id="g"/><bpmn:endEvent id="a"/><bpmn:endEvent id="b"/>`+flows("s", "g", "g", "a", "g", "b")),
		invalid: ruleDoc("", ruleBody(`<bpmn:parallelGateway id="t"/>`, "t"))},
	{rule: "EXT.136", valid: eventGate(2, ""), invalid: eventGate(1, "")},
	{rule: "FT.instantiate", valid: eventGate(2, ""), invalid: strings.Replace(eventGate(2, ""), `<bpmn:eventBasedGateway id="g"/>`, `<bpmn:eventBasedGateway id="g" eventGatewayType="Parallel"/>`, 1)},
	{rule: "EXT.049", valid: ruleDoc(msgDecl, `<bpmn:receiveTask id="r" messageRef="M" instantiate="true"/><bpmn:endEvent id="e"/>`+flows("r", "e")),
		invalid: ruleDoc(msgDecl, `<bpmn:startEvent id="s"/><bpmn:receiveTask id="r" messageRef="M" instantiate="true"/><bpmn:endEvent id="e"/>`+flows("s", "r", "r", "e"))},
	{rule: "FT.instantiate", valid: ruleDoc(msgDecl, ruleBody(`<bpmn:subProcess id="t"><bpmn:receiveTask id="r" messageRef="M"/></bpmn:subProcess>`, "t")),
		invalid: ruleDoc(msgDecl, ruleBody(`<bpmn:subProcess id="t"><bpmn:receiveTask id="r" messageRef="M" instantiate="true"/></bpmn:subProcess>`, "t"))},
	{rule: "EXT.137", valid: eventGate(2, ""), invalid: eventGate(2, `<bpmn:conditionExpression>= true</bpmn:conditionExpression>`)},
	{rule: "EXT.138", valid: eventGate(2, ""), invalid: strings.Replace(eventGate(2, ""), `<bpmn:intermediateCatchEvent id="c1">`+timerDef+`</bpmn:intermediateCatchEvent>`, `<bpmn:task id="c1"/>`, 1)},
	{rule: "EXT.139", valid: eventGate(2, ""), invalid: ruleDoc(msgDecl, `<bpmn:startEvent id="s"/><bpmn:eventBasedGateway id="g"/><bpmn:receiveTask id="r" messageRef="M"/>`+
		`<bpmn:intermediateCatchEvent id="c"><bpmn:messageEventDefinition messageRef="M"/></bpmn:intermediateCatchEvent><bpmn:endEvent id="e"/>`+flows("s", "g", "g", "r", "g", "c", "r", "e", "c", "e"))},
	{rule: "EXT.140", valid: eventGate(2, ""), invalid: ruleDoc(msgDecl, `<bpmn:startEvent id="s"/><bpmn:eventBasedGateway id="g"/><bpmn:receiveTask id="r" messageRef="M"/><bpmn:receiveTask id="r2" messageRef="M"/>`+
		`<bpmn:boundaryEvent id="b" attachedToRef="r">`+timerDef+`</bpmn:boundaryEvent><bpmn:endEvent id="e"/>`+flows("s", "g", "g", "r", "g", "r2", "r", "e", "r2", "e", "b", "e"))},
	{rule: "EXT.141", valid: eventGate(2, ""), invalid: strings.Replace(eventGate(2, ""), `</bpmn:process>`, flows("s", "c1")+`</bpmn:process>`, 1)},
	{rule: "EXT.144", valid: compensation(`isForCompensation="true"`, ""), invalid: compensation("", "")},
	{rule: "EXT.143", valid: compensation(`isForCompensation="true"`, ""),
		invalid: strings.Replace(compensation(`isForCompensation="true"`, ""), `<bpmn:association id="as" sourceRef="b" targetRef="h"/>`, "", 1)},
	{rule: "FT.compensation-handler", valid: compensation(`isForCompensation="true"`, ""),
		invalid: compensation(`isForCompensation="true"`, `<bpmn:endEvent id="he"/>`+flows("h", "he"))},
	{rule: "FT.compensation-activity", valid: compensateActivity("t"), invalid: compensateActivity("u")},
	{rule: "EXT.106", valid: transaction(true), invalid: ruleDoc("", `<bpmn:startEvent id="s"/><bpmn:endEvent id="e"><bpmn:cancelEventDefinition/></bpmn:endEvent>`+flows("s", "e"))},
	{rule: "FT.cancel-boundary", valid: transaction(true), invalid: transaction(false)},
	{rule: "FT.compensation-event-subprocess", valid: ruleDoc("", ruleBody(`<bpmn:subProcess id="t"><bpmn:startEvent id="ss"/>`+compensationEventSub+`</bpmn:subProcess>`, "t")),
		invalid: ruleDoc("", startEnd+compensationEventSub)},
	{rule: "EXT.146", valid: ruleDoc("", startEnd), invalid: ruleDoc("", `<bpmn:startEvent id="s"/><bpmn:endEvent id="e">`+timerDef+`</bpmn:endEvent>`+flows("s", "e"))},
	{rule: "EXT.148", valid: ruleDoc("", ruleBody(timerCatch(`<bpmn:timeDuration>PT1M</bpmn:timeDuration>`), "t")),
		invalid: ruleDoc("", ruleBody(`<bpmn:intermediateCatchEvent id="t"/>`, "t"))},
	{rule: "EXT.149", valid: ruleDoc(sigDecl, ruleBody(`<bpmn:intermediateThrowEvent id="t"><bpmn:signalEventDefinition signalRef="S"/></bpmn:intermediateThrowEvent>`, "t")),
		invalid: ruleDoc("", ruleBody(`<bpmn:intermediateThrowEvent id="t">`+timerDef+`</bpmn:intermediateThrowEvent>`, "t"))},
	{rule: "EXT.150", valid: ruleDoc("", ruleBody(`<bpmn:task id="t"/>`, "t")), invalid: ruleDoc("", startEnd+`<bpmn:task id="t"/>`+flows("t", "e"))},
	{rule: "EXT.151", valid: ruleDoc("", ruleBody(`<bpmn:parallelGateway id="t"/>`, "t")), invalid: ruleDoc("", startEnd+`<bpmn:parallelGateway id="t"/>`+flows("s", "t"))},
	// An activity without outgoing flow beside end events ends its path
	// implicitly: a warning, where a gateway's is an error.
	{rule: "EXT.151", warning: true, valid: ruleDoc("", ruleBody(`<bpmn:task id="t"/>`, "t")), invalid: ruleDoc("", startEnd+`<bpmn:task id="t"/>`+flows("s", "t"))},
	{rule: "EXT.105", warning: true, valid: ruleDoc("", ruleBody(`<bpmn:task id="t"/>`, "t")), invalid: ruleDoc("", `<bpmn:startEvent id="s"/><bpmn:task id="t"/>`+flows("s", "t"))},
	{rule: "EXT.152", valid: ruleDoc("", ruleBody(`<bpmn:subProcess id="t"><bpmn:startEvent id="ss"/></bpmn:subProcess>`, "t")),
		invalid: ruleDoc("", ruleBody(`<bpmn:subProcess id="t"><bpmn:startEvent id="ss"/></bpmn:subProcess>`, "t")+flows("ss", "e"))},
	{rule: "FT.condition", valid: gateway(`<bpmn:conditionExpression>= x &gt; 1</bpmn:conditionExpression>`, `<bpmn:conditionExpression>= x &lt;= 1</bpmn:conditionExpression>`, ""),
		invalid: gateway(`<bpmn:conditionExpression>= x &gt; 1</bpmn:conditionExpression>`, "", "")},
	{rule: "FT.unconditioned-flow", warning: true, valid: gateway(`<bpmn:conditionExpression>= x &gt; 1</bpmn:conditionExpression>`, "", `default="sf_g_b"`),
		invalid: gateway("", "", `default="sf_g_b"`)},
	{rule: "FT.default-condition", valid: gateway(`<bpmn:conditionExpression>= x &gt; 1</bpmn:conditionExpression>`, "", `default="sf_g_b"`),
		invalid: gateway(`<bpmn:conditionExpression>= x &gt; 1</bpmn:conditionExpression>`, `<bpmn:conditionExpression>= true</bpmn:conditionExpression>`, `default="sf_g_b"`)},
	{rule: "FT.expression", valid: gateway(`<bpmn:conditionExpression>= x &gt; 1</bpmn:conditionExpression>`, `<bpmn:conditionExpression>= x &lt;= 1</bpmn:conditionExpression>`, ""),
		invalid: gateway(`<bpmn:conditionExpression>= x &gt;</bpmn:conditionExpression>`, `<bpmn:conditionExpression>= x &lt;= 1</bpmn:conditionExpression>`, "")},
	{rule: "FT.boolean", valid: gateway(`<bpmn:conditionExpression>= x &gt; 1</bpmn:conditionExpression>`, `<bpmn:conditionExpression>= x &lt;= 1</bpmn:conditionExpression>`, ""),
		invalid: gateway(`<bpmn:conditionExpression>23</bpmn:conditionExpression>`, `<bpmn:conditionExpression>= x &lt;= 1</bpmn:conditionExpression>`, "")},
	{rule: "FT.error-code", valid: ruleDoc(`<bpmn:error id="E" errorCode="c"/>`, `<bpmn:startEvent id="s"/><bpmn:endEvent id="e"><bpmn:errorEventDefinition errorRef="E"/></bpmn:endEvent>`+flows("s", "e")),
		invalid: ruleDoc(`<bpmn:error id="E"/>`, `<bpmn:startEvent id="s"/><bpmn:endEvent id="e"><bpmn:errorEventDefinition errorRef="E"/></bpmn:endEvent>`+flows("s", "e"))},
	{rule: "FT.mapping", valid: ruleDoc("", ruleBody(mappedTask("= a + 1"), "t")), invalid: ruleDoc("", ruleBody(mappedTask("= a +"), "t"))},
	{rule: "FT.message-name", valid: ruleDoc(msgDecl, ruleBody(`<bpmn:receiveTask id="t" messageRef="M"/>`, "t")),
		invalid: ruleDoc(`<bpmn:message id="M"/>`, ruleBody(`<bpmn:receiveTask id="t" messageRef="M"/>`, "t"))},
	{rule: "FT.signal-ref", valid: ruleDoc(sigDecl, ruleBody(`<bpmn:intermediateThrowEvent id="t"><bpmn:signalEventDefinition signalRef="S"/></bpmn:intermediateThrowEvent>`, "t")),
		invalid: ruleDoc(sigDecl, ruleBody(`<bpmn:intermediateThrowEvent id="t"><bpmn:signalEventDefinition/></bpmn:intermediateThrowEvent>`, "t"))},
	{rule: "FT.signal-name", valid: ruleDoc(sigDecl, ruleBody(`<bpmn:intermediateThrowEvent id="t"><bpmn:signalEventDefinition signalRef="S"/></bpmn:intermediateThrowEvent>`, "t")),
		invalid: ruleDoc(`<bpmn:signal id="S"/>`, ruleBody(`<bpmn:intermediateThrowEvent id="t"><bpmn:signalEventDefinition signalRef="S"/></bpmn:intermediateThrowEvent>`, "t"))},
	{rule: "FT.called-element", valid: callee(`<bpmn:startEvent id="cs"/>`), invalid: ruleDoc("", ruleBody(`<bpmn:callActivity id="t"/>`, "t"))},
	{rule: "FT.link-name", valid: ruleDoc("", `<bpmn:startEvent id="s"/><bpmn:intermediateThrowEvent id="t"><bpmn:linkEventDefinition name="L"/></bpmn:intermediateThrowEvent>`+
		`<bpmn:intermediateCatchEvent id="c"><bpmn:linkEventDefinition name="L"/></bpmn:intermediateCatchEvent><bpmn:endEvent id="e"/>`+flows("s", "t", "c", "e")),
		invalid: ruleDoc("", `<bpmn:startEvent id="s"/><bpmn:intermediateThrowEvent id="t"><bpmn:linkEventDefinition name="L"/></bpmn:intermediateThrowEvent>`+
			`<bpmn:intermediateCatchEvent id="c"><bpmn:linkEventDefinition name="L"/></bpmn:intermediateCatchEvent><bpmn:endEvent id="e"/>`+
			`<bpmn:intermediateCatchEvent id="c2"><bpmn:linkEventDefinition name="L"/></bpmn:intermediateCatchEvent>`+flows("s", "t", "c", "e", "c2", "e"))},
	{rule: "FT.script", valid: ruleDoc("", ruleBody(`<bpmn:scriptTask id="t"><bpmn:extensionElements><zeebe:script expression="= 1" resultVariable="r"/></bpmn:extensionElements></bpmn:scriptTask>`, "t")),
		invalid: ruleDoc("", ruleBody(`<bpmn:scriptTask id="t"><bpmn:extensionElements><zeebe:script expression="= 1"/></bpmn:extensionElements></bpmn:scriptTask>`, "t"))},
	{rule: "FT.decision", valid: ruleDoc("", ruleBody(`<bpmn:businessRuleTask id="t"><bpmn:extensionElements><zeebe:calledDecision decisionId="d" resultVariable="r"/></bpmn:extensionElements></bpmn:businessRuleTask>`, "t")),
		invalid: ruleDoc("", ruleBody(`<bpmn:businessRuleTask id="t"><bpmn:extensionElements><zeebe:calledDecision decisionId="d"/></bpmn:extensionElements></bpmn:businessRuleTask>`, "t"))},
	{rule: "FT.dmn", valid: dmnRuleDoc(`UNIQUE`), invalid: dmnRuleDoc(`SOMETIMES`)},
	{rule: "FT.user-task", valid: ruleDoc("", ruleBody(`<bpmn:userTask id="t"><bpmn:extensionElements><zeebe:taskSchedule dueDate="2026-01-31T17:00:00Z"/></bpmn:extensionElements></bpmn:userTask>`, "t")),
		invalid: ruleDoc("", ruleBody(`<bpmn:userTask id="t"><bpmn:extensionElements><zeebe:taskSchedule dueDate="tomorrow"/></bpmn:extensionElements></bpmn:userTask>`, "t"))},
	{rule: "XSD.enumeration", valid: ruleDoc("", ruleBody(`<bpmn:adHocSubProcess id="t" ordering="Sequential"><bpmn:task id="a"/></bpmn:adHocSubProcess>`, "t")),
		invalid: ruleDoc("", ruleBody(`<bpmn:adHocSubProcess id="t" ordering="sequential"><bpmn:task id="a"/></bpmn:adHocSubProcess>`, "t"))},
	{rule: "XSD.boolean", valid: ruleDoc("", ruleBody(`<bpmn:adHocSubProcess id="t" cancelRemainingInstances="false"><bpmn:task id="a"/></bpmn:adHocSubProcess>`, "t")),
		invalid: ruleDoc("", ruleBody(`<bpmn:adHocSubProcess id="t" cancelRemainingInstances="no"><bpmn:task id="a"/></bpmn:adHocSubProcess>`, "t"))},
	{rule: "FT.ad-hoc", valid: ruleDoc("", startEnd+`<bpmn:subProcess id="es" triggeredByEvent="true"><bpmn:startEvent id="ess"><bpmn:timerEventDefinition><bpmn:timeDuration>PT1M</bpmn:timeDuration></bpmn:timerEventDefinition></bpmn:startEvent></bpmn:subProcess>`),
		invalid: ruleDoc("", startEnd+`<bpmn:adHocSubProcess id="es" triggeredByEvent="true"><bpmn:task id="a"/></bpmn:adHocSubProcess>`)},
	{rule: "FT.multi-instance", valid: ruleDoc("", ruleBody(multiInstance(""), "t")),
		invalid: ruleDoc("", ruleBody(`<bpmn:task id="t"><bpmn:multiInstanceLoopCharacteristics><bpmn:extensionElements><zeebe:loopCharacteristics inputElement="x"/></bpmn:extensionElements></bpmn:multiInstanceLoopCharacteristics></bpmn:task>`, "t"))},
	{rule: "FT.loop", valid: ruleDoc("", ruleBody(`<bpmn:task id="t"><bpmn:standardLoopCharacteristics loopMaximum="3"/></bpmn:task>`, "t")),
		invalid: ruleDoc("", ruleBody(`<bpmn:task id="t"><bpmn:standardLoopCharacteristics/></bpmn:task>`, "t"))},
	{rule: "FT.job-retries", valid: ruleDoc("", ruleBody(`<bpmn:serviceTask id="t"><bpmn:extensionElements><zeebe:taskDefinition type="w" retries="3"/></bpmn:extensionElements></bpmn:serviceTask>`, "t")),
		invalid: ruleDoc("", ruleBody(`<bpmn:serviceTask id="t"><bpmn:extensionElements><zeebe:taskDefinition type="w" retries="some"/></bpmn:extensionElements></bpmn:serviceTask>`, "t"))}, // Rules decided in docs/validation.md, each from its text.
	{rule: "EXT.001", valid: ruleDoc(`<bpmn:import importType="http://www.w3.org/2001/XMLSchema" location="types.xsd" namespace="http://example.com/types"/>`, startEnd),
		invalid: ruleDoc(`<bpmn:import importType="xsd" location="types.xsd" namespace="http://example.com/types"/>`, startEnd)},
	{rule: "EXT.012", valid: ruleDoc("", ruleBody(`<bpmn:exclusiveGateway id="t" default="fd"/><bpmn:endEvent id="e2"/>`, "t")+
		`<bpmn:sequenceFlow id="c" sourceRef="t" targetRef="e2"><bpmn:conditionExpression xsi:type="bpmn:tFormalExpression">= x &gt; 1</bpmn:conditionExpression></bpmn:sequenceFlow>`+
		`<bpmn:sequenceFlow id="fd" sourceRef="t" targetRef="e"/>`),
		invalid: ruleDoc("", ruleBody(`<bpmn:exclusiveGateway id="t" default="fd"/><bpmn:endEvent id="e2"/>`, "t")+
			`<bpmn:sequenceFlow id="c" sourceRef="t" targetRef="e2"><bpmn:conditionExpression xsi:type="bpmn:tExpression">when the order is large</bpmn:conditionExpression></bpmn:sequenceFlow>`+
			`<bpmn:sequenceFlow id="fd" sourceRef="t" targetRef="e"/>`)},
	{rule: "EXT.023", valid: ruleDoc("", `<bpmn:startEvent id="s"><bpmn:outgoing>f</bpmn:outgoing></bpmn:startEvent><bpmn:endEvent id="e"><bpmn:incoming>f</bpmn:incoming></bpmn:endEvent>`+
		`<bpmn:sequenceFlow id="f" sourceRef="s" targetRef="e"/>`),
		invalid: ruleDoc("", `<bpmn:startEvent id="s"><bpmn:outgoing>f</bpmn:outgoing></bpmn:startEvent><bpmn:task id="t"><bpmn:incoming>f</bpmn:incoming></bpmn:task>`+
			`<bpmn:endEvent id="e"><bpmn:incoming>g</bpmn:incoming></bpmn:endEvent><bpmn:sequenceFlow id="f" sourceRef="s" targetRef="t"/><bpmn:sequenceFlow id="g" sourceRef="t" targetRef="e"/>`)},
	{rule: "EXT.053", warning: true, valid: ruleDoc("", ruleBody(`<bpmn:scriptTask id="t" scriptFormat="feel"><bpmn:extensionElements><zeebe:script expression="= 1" resultVariable="r"/></bpmn:extensionElements><bpmn:script>= 1</bpmn:script></bpmn:scriptTask>`, "t")),
		invalid: ruleDoc("", ruleBody(`<bpmn:scriptTask id="t"><bpmn:extensionElements><zeebe:script expression="= 1" resultVariable="r"/></bpmn:extensionElements><bpmn:script>= 1</bpmn:script></bpmn:scriptTask>`, "t"))},
	{rule: "EXT.063", valid: callData(`itemSubjectRef="I1"`, `itemSubjectRef="I1"`), invalid: callData(`itemSubjectRef="I1"`, `itemSubjectRef="I2"`)},
	{rule: "EXT.065", valid: ruleDoc(itemDecls+operationDecl, exposed(`itemSubjectRef="I1"`)), invalid: ruleDoc(itemDecls+operationDecl, exposed(`itemSubjectRef="I2"`))},
	{rule: "EXT.084", valid: ioTask(`<bpmn:dataInput id="di"/><bpmn:inputSet id="i"><bpmn:dataInputRefs>di</bpmn:dataInputRefs></bpmn:inputSet><bpmn:outputSet id="o"/>`),
		invalid: ioTask(`<bpmn:dataInput id="di"/><bpmn:inputSet id="i"/><bpmn:outputSet id="o"/>`)},
	{rule: "EXT.086", valid: ioTask(`<bpmn:dataInput id="di"/><bpmn:inputSet id="i"><bpmn:dataInputRefs>di</bpmn:dataInputRefs><bpmn:whileExecutingInputRefs>di</bpmn:whileExecutingInputRefs></bpmn:inputSet><bpmn:outputSet id="o"/>`),
		invalid: ioTask(`<bpmn:dataInput id="di"/><bpmn:dataInput id="dj"/><bpmn:inputSet id="i"><bpmn:dataInputRefs>di</bpmn:dataInputRefs><bpmn:whileExecutingInputRefs>dj</bpmn:whileExecutingInputRefs></bpmn:inputSet><bpmn:inputSet id="j"><bpmn:dataInputRefs>dj</bpmn:dataInputRefs></bpmn:inputSet><bpmn:outputSet id="o"/>`)},
	{rule: "EXT.091", warning: true, valid: typedAssociation("I1"), invalid: typedAssociation("I2")},
	{rule: "EXT.094", valid: ruleDoc(itemDecls, messageCatch("I1")), invalid: ruleDoc(itemDecls, messageCatch("I2"))},
	{rule: "EXT.101", valid: ruleDoc("", `<bpmn:startEvent id="s"><bpmn:outgoing>f</bpmn:outgoing></bpmn:startEvent><bpmn:endEvent id="e"><bpmn:incoming>f</bpmn:incoming></bpmn:endEvent>`+
		`<bpmn:sequenceFlow id="f" sourceRef="s" targetRef="e"/>`),
		invalid: ruleDoc("", `<bpmn:startEvent id="s"/><bpmn:endEvent id="e"><bpmn:incoming>f</bpmn:incoming></bpmn:endEvent><bpmn:sequenceFlow id="f" sourceRef="s" targetRef="e"/>`)},
	{rule: "EXT.102", valid: ruleDoc(collab(`<bpmn:messageFlow id="m" sourceRef="t" targetRef="b"/>`), ruleBody(`<bpmn:task id="t"/>`, "t")),
		invalid: ruleDoc(collab(`<bpmn:messageFlow id="m" sourceRef="s" targetRef="b"/>`), startEnd)},
	{rule: "EXT.109", valid: ruleDoc(collab(`<bpmn:messageFlow id="m" sourceRef="e" targetRef="b"/>`), `<bpmn:startEvent id="s"/><bpmn:endEvent id="e"><bpmn:messageEventDefinition messageRef="M"/></bpmn:endEvent>`+flows("s", "e")),
		invalid: ruleDoc(collab(`<bpmn:messageFlow id="m" sourceRef="e" targetRef="b"/>`), startEnd)},
	{rule: "EXT.119", valid: ruleDoc(collab(`<bpmn:messageFlow id="m" sourceRef="b" targetRef="t"/>`), ruleBody(`<bpmn:intermediateCatchEvent id="t"><bpmn:messageEventDefinition messageRef="M"/></bpmn:intermediateCatchEvent>`, "t")),
		invalid: ruleDoc(collab(`<bpmn:messageFlow id="m" sourceRef="t" targetRef="b"/>`), ruleBody(`<bpmn:intermediateCatchEvent id="t"><bpmn:messageEventDefinition messageRef="M"/></bpmn:intermediateCatchEvent>`, "t"))},
	{rule: "EXT.128", valid: ruleDoc(msgDecl+`<bpmn:interface id="IF" name="i"><bpmn:operation id="O" name="o"><bpmn:inMessageRef>M</bpmn:inMessageRef></bpmn:operation></bpmn:interface>`,
		ruleBody(`<bpmn:intermediateCatchEvent id="t"><bpmn:messageEventDefinition messageRef="M"><bpmn:operationRef>O</bpmn:operationRef></bpmn:messageEventDefinition></bpmn:intermediateCatchEvent>`, "t")),
		invalid: ruleDoc(msgDecl+`<bpmn:interface id="IF" name="i"><bpmn:operation id="O" name="o"><bpmn:inMessageRef>M</bpmn:inMessageRef></bpmn:operation></bpmn:interface>`,
			ruleBody(`<bpmn:intermediateCatchEvent id="t"><bpmn:messageEventDefinition messageRef="M"/></bpmn:intermediateCatchEvent>`, "t"))}, {rule: "EXT.033", valid: ruleDoc(`<bpmn:choreography id="ch" isClosed="true"/><bpmn:collaboration id="co" isClosed="true"><bpmn:participant id="a" processRef="p"/><bpmn:choreographyRef>ch</bpmn:choreographyRef></bpmn:collaboration>`, startEnd),
		invalid: ruleDoc(`<bpmn:choreography id="ch" isClosed="true"/><bpmn:collaboration id="co"><bpmn:participant id="a" processRef="p"/><bpmn:choreographyRef>ch</bpmn:choreographyRef></bpmn:collaboration>`, startEnd)},
	{rule: "EXT.036", valid: ruleDoc("", startEnd), invalid: ruleDoc("", startEnd+`<bpmn:choreographyTask id="x"/>`)},
	{rule: "EXT.095", valid: ruleDoc(sigDecl+`<bpmn:signalEventDefinition id="sd" signalRef="S"/>`, `<bpmn:startEvent id="s"/><bpmn:endEvent id="e"><bpmn:eventDefinitionRef>sd</bpmn:eventDefinitionRef></bpmn:endEvent>`+flows("s", "e")),
		invalid: ruleDoc(sigDecl, `<bpmn:startEvent id="s"/><bpmn:intermediateThrowEvent id="t"><bpmn:signalEventDefinition id="sd" signalRef="S"/></bpmn:intermediateThrowEvent>`+
			`<bpmn:endEvent id="e"><bpmn:eventDefinitionRef>sd</bpmn:eventDefinitionRef></bpmn:endEvent>`+flows("s", "t", "t", "e"))},
	{rule: "EXT.097", warning: true, valid: ruleDoc("", ruleBody(`<bpmn:subProcess id="t"><bpmn:startEvent id="ss"/><bpmn:endEvent id="se"/>`+flows("ss", "se")+`</bpmn:subProcess>`, "t")),
		invalid: ruleDoc("", ruleBody(`<bpmn:subProcess id="t"><bpmn:task id="st"/><bpmn:endEvent id="se"/>`+flows("st", "se")+`</bpmn:subProcess>`, "t"))},
	{rule: "EXT.118", valid: linkWithSources(`<bpmn:source>lt</bpmn:source>`), invalid: linkWithSources("")},
	{rule: "EXT.012", valid: gateway(`<bpmn:conditionExpression>x &gt; 1</bpmn:conditionExpression>`, `<bpmn:conditionExpression>x &lt;= 1</bpmn:conditionExpression>`, ""),
		invalid: gateway(`<bpmn:conditionExpression>when the order is large</bpmn:conditionExpression>`, `<bpmn:conditionExpression>x &lt;= 1</bpmn:conditionExpression>`, "")},
	{rule: "EXT.123", valid: ruleDoc("", ruleBody(`<bpmn:intermediateCatchEvent id="t"><bpmn:conditionalEventDefinition><bpmn:condition>x &gt; 1</bpmn:condition></bpmn:conditionalEventDefinition></bpmn:intermediateCatchEvent>`, "t")),
		invalid: ruleDoc("", ruleBody(`<bpmn:intermediateCatchEvent id="t"><bpmn:conditionalEventDefinition><bpmn:condition>once the stock is low</bpmn:condition></bpmn:conditionalEventDefinition></bpmn:intermediateCatchEvent>`, "t"))},
	{rule: "EXT.124", valid: linkWithSources(`<bpmn:source>lt</bpmn:source>`), invalid: linkWithSources("")},
	{rule: "EXT.125", valid: linkWithSources(`<bpmn:source>lt</bpmn:source>`), invalid: strings.Replace(linkWithSources(`<bpmn:source>lt</bpmn:source>`), `<bpmn:target>lc</bpmn:target>`, `<bpmn:target>lc</bpmn:target><bpmn:target>lc</bpmn:target>`, 1)},
	{rule: "EXT.142", valid: eventGate(2, ""), invalid: strings.Replace(eventGate(2, ""), `<bpmn:eventBasedGateway id="g"/>`, `<bpmn:eventBasedGateway id="g" instantiate="true"/>`, 1)},
}

// linkPair is a process whose link throw event, with link definition lt,
// names the catch event's definition lc as its target; sources is what lc
// lists as its sources.
func linkWithSources(sources string) string {
	return ruleDoc("", `<bpmn:startEvent id="s"/><bpmn:intermediateThrowEvent id="t" name="go"><bpmn:linkEventDefinition id="lt" name="go"><bpmn:target>lc</bpmn:target></bpmn:linkEventDefinition></bpmn:intermediateThrowEvent>`+
		`<bpmn:intermediateCatchEvent id="c" name="go"><bpmn:linkEventDefinition id="lc" name="go">`+sources+`</bpmn:linkEventDefinition></bpmn:intermediateCatchEvent>`+
		`<bpmn:endEvent id="e"/>`+flows("s", "t", "c", "e"))
}

// callData is a call activity t calling process c of the same document,
// each with one data input typed as mine and theirs (itemSubjectRef
// attributes).
func callData(mine, theirs string) string {
	io := func(id, typed string) string {
		return `<bpmn:ioSpecification><bpmn:dataInput id="` + id + `" ` + typed + `/><bpmn:inputSet id="` + id + `s"><bpmn:dataInputRefs>` + id +
			`</bpmn:dataInputRefs></bpmn:inputSet><bpmn:outputSet id="` + id + `o"/></bpmn:ioSpecification>`
	}
	return ruleDoc(itemDecls+`<bpmn:process id="c" isExecutable="true">`+io("ci", theirs)+`<bpmn:startEvent id="cs"/><bpmn:endEvent id="ce"/>`+flows("cs", "ce")+`</bpmn:process>`,
		ruleBody(`<bpmn:callActivity id="t" calledElement="c">`+io("ti", mine)+`</bpmn:callActivity>`, "t"))
}

// exposed is process content whose task t is exposed as a service:
// interface IF (operationDecl), with an ioBinding of operation O to its
// data input di, typed by the typed attribute.
func exposed(typed string) string {
	return ruleBody(`<bpmn:task id="t"><bpmn:ioSpecification><bpmn:dataInput id="di" `+typed+`/><bpmn:inputSet id="is"><bpmn:dataInputRefs>di</bpmn:dataInputRefs></bpmn:inputSet>`+
		`<bpmn:outputSet id="os"/></bpmn:ioSpecification><bpmn:supportedInterfaceRef>IF</bpmn:supportedInterfaceRef>`+
		`<bpmn:ioBinding operationRef="O" inputDataRef="di"/></bpmn:task>`, "t")
}

// typedAssociation is a process with a data object of item I1 that a
// task's data input, typed by item, reads.
func typedAssociation(item string) string {
	return ruleDoc(itemDecls, `<bpmn:dataObject id="o" itemSubjectRef="I1"/><bpmn:dataObjectReference id="or" dataObjectRef="o"/>`+
		ruleBody(`<bpmn:task id="t"><bpmn:ioSpecification><bpmn:dataInput id="di" itemSubjectRef="`+item+`"/><bpmn:inputSet id="is"><bpmn:dataInputRefs>di</bpmn:dataInputRefs></bpmn:inputSet>`+
			`<bpmn:outputSet id="os"/></bpmn:ioSpecification><bpmn:dataInputAssociation id="a"><bpmn:sourceRef>or</bpmn:sourceRef><bpmn:targetRef>di</bpmn:targetRef></bpmn:dataInputAssociation></bpmn:task>`, "t"))
}

// messageCatch is process content with a catch event of message M (which
// carries I1) whose data output is typed by item.
func messageCatch(item string) string {
	return ruleBody(`<bpmn:intermediateCatchEvent id="t"><bpmn:dataOutput id="do" itemSubjectRef="`+item+`"/><bpmn:outputSet id="os"><bpmn:dataOutputRefs>do</bpmn:dataOutputRefs></bpmn:outputSet>`+
		`<bpmn:messageEventDefinition messageRef="M"/></bpmn:intermediateCatchEvent>`, "t")
}

// strictRules are checked by an engine made WithStrict.
var strictRules = map[string]ruleCase{
	"FT.job-type": {rule: "FT.job-type", valid: ruleDoc("", ruleBody(`<bpmn:serviceTask id="t"><bpmn:extensionElements><zeebe:taskDefinition type="w"/></bpmn:extensionElements></bpmn:serviceTask>`, "t")),
		invalid: ruleDoc("", ruleBody(`<bpmn:serviceTask id="t"/>`, "t"))},
}

// notModelRules are rule ids of the code no model can break: flowtrack's
// own defects, and the reference rules, which refs.go generates from the
// catalogue's table (TestImport_Problems and the reference mutation tests
// cover them).
var notModelRules = []string{"FT.internal"}

const (
	msgDecl  = `<bpmn:message id="M" name="m"><bpmn:extensionElements><zeebe:subscription correlationKey="= k"/></bpmn:extensionElements></bpmn:message>`
	sigDecl  = `<bpmn:signal id="S" name="s"/>`
	timerDef = `<bpmn:timerEventDefinition><bpmn:timeDuration>PT1M</bpmn:timeDuration></bpmn:timerEventDefinition>`
)

// itemDecls declares item definitions I1 and I2 (of two structures) and C
// (a collection of I1's), and a message M carrying I1.
const itemDecls = `<bpmn:itemDefinition id="I1" structureRef="a"/><bpmn:itemDefinition id="I2" structureRef="b"/>` +
	`<bpmn:itemDefinition id="C" structureRef="a" isCollection="true"/>` +
	`<bpmn:message id="M" name="m" itemRef="I1"><bpmn:extensionElements><zeebe:subscription correlationKey="= k"/></bpmn:extensionElements></bpmn:message>`

// operationDecl declares operation O, which takes and returns message M.
const operationDecl = `<bpmn:interface id="IF" name="i"><bpmn:operation id="O" name="o"><bpmn:inMessageRef>M</bpmn:inMessageRef>` +
	`<bpmn:outMessageRef>M</bpmn:outMessageRef></bpmn:operation></bpmn:interface>`

const resourceDecl = `<bpmn:resource id="R" name="r"><bpmn:resourceParameter id="RP" name="p"/></bpmn:resource>`

// performer is a task whose performer binds parameter RP, naming its
// resource with ref.
func performer(ref string) string {
	return `<bpmn:task id="t"><bpmn:performer id="pf">` + ref + `<bpmn:resourceParameterBinding parameterRef="RP">` +
		`<bpmn:formalExpression>x</bpmn:formalExpression></bpmn:resourceParameterBinding></bpmn:performer></bpmn:task>`
}

// operationTask is a service task calling operation O with the given
// ioSpecification content.
func operationTask(io string) string {
	return `<bpmn:serviceTask id="t" operationRef="O"><bpmn:ioSpecification>` + io + `</bpmn:ioSpecification></bpmn:serviceTask>`
}

// inputOf is the ioSpecification content of one data input typed by item
// (untyped when "").
func inputOf(item string) string {
	typed := ""
	if item != "" {
		typed = ` itemSubjectRef="` + item + `"`
	}
	return `<bpmn:dataInput id="di"` + typed + `/><bpmn:inputSet id="is"><bpmn:dataInputRefs>di</bpmn:dataInputRefs></bpmn:inputSet><bpmn:outputSet id="os"/>`
}

// outputOf is the ioSpecification content of one data output typed by item.
func outputOf(item string) string {
	return `<bpmn:dataOutput id="do" itemSubjectRef="` + item + `"/><bpmn:inputSet id="is"/><bpmn:outputSet id="os"><bpmn:dataOutputRefs>do</bpmn:dataOutputRefs></bpmn:outputSet>`
}

// multiInstance is a multi-instance task t of two instances with extra
// loop characteristics.
func multiInstance(extra string) string {
	return `<bpmn:task id="t"><bpmn:multiInstanceLoopCharacteristics><bpmn:loopCardinality>2</bpmn:loopCardinality>` + extra +
		`</bpmn:multiInstanceLoopCharacteristics></bpmn:task>`
}

// loopInput is a multi-instance task over its collection input, each
// instance's item typed by item.
func loopInput(item string) string {
	return `<bpmn:task id="t"><bpmn:ioSpecification><bpmn:dataInput id="di" itemSubjectRef="C" isCollection="true"/><bpmn:inputSet id="is">` +
		`<bpmn:dataInputRefs>di</bpmn:dataInputRefs></bpmn:inputSet><bpmn:outputSet id="os"/></bpmn:ioSpecification>` +
		`<bpmn:multiInstanceLoopCharacteristics><bpmn:loopDataInputRef>di</bpmn:loopDataInputRef><bpmn:inputDataItem id="it" itemSubjectRef="` + item + `"/>` +
		`</bpmn:multiInstanceLoopCharacteristics></bpmn:task>`
}

// loopOutput is a multi-instance task collecting its instances' items,
// typed by item, into its collection output.
func loopOutput(item string) string {
	return `<bpmn:task id="t"><bpmn:ioSpecification><bpmn:dataOutput id="do" itemSubjectRef="C" isCollection="true"/><bpmn:inputSet id="is"/>` +
		`<bpmn:outputSet id="os"><bpmn:dataOutputRefs>do</bpmn:dataOutputRefs></bpmn:outputSet></bpmn:ioSpecification>` +
		`<bpmn:multiInstanceLoopCharacteristics><bpmn:loopCardinality>2</bpmn:loopCardinality><bpmn:loopDataOutputRef>do</bpmn:loopDataOutputRef>` +
		`<bpmn:outputDataItem id="it" itemSubjectRef="` + item + `"/></bpmn:multiInstanceLoopCharacteristics></bpmn:task>`
}

// processData is a process with its own data input pi and output po, and a
// task t, with data input ti and output to, whose data associations are
// assoc.
func processData(assoc string) string {
	return ruleDoc("", `<bpmn:ioSpecification><bpmn:dataInput id="pi"/><bpmn:dataOutput id="po"/><bpmn:inputSet id="pis"><bpmn:dataInputRefs>pi</bpmn:dataInputRefs></bpmn:inputSet>`+
		`<bpmn:outputSet id="pos"><bpmn:dataOutputRefs>po</bpmn:dataOutputRefs></bpmn:outputSet></bpmn:ioSpecification>`+
		ruleBody(`<bpmn:task id="t"><bpmn:ioSpecification><bpmn:dataInput id="ti"/><bpmn:dataOutput id="to"/><bpmn:inputSet id="is"><bpmn:dataInputRefs>ti</bpmn:dataInputRefs></bpmn:inputSet>`+
			`<bpmn:outputSet id="os"><bpmn:dataOutputRefs>to</bpmn:dataOutputRefs></bpmn:outputSet></bpmn:ioSpecification>`+assoc+`</bpmn:task>`, "t"))
}

// multiplicity declares a collaboration whose participant for process p
// has a multiplicity with attrs.
func multiplicity(attrs string) string {
	return `<bpmn:collaboration id="co"><bpmn:participant id="pa" processRef="p"><bpmn:participantMultiplicity ` + attrs +
		`/></bpmn:participant></bpmn:collaboration>`
}

func timerCatch(body string) string {
	return `<bpmn:intermediateCatchEvent id="t"><bpmn:timerEventDefinition>` + body + `</bpmn:timerEventDefinition></bpmn:intermediateCatchEvent>`
}

func eventSub(extra string) string {
	return `<bpmn:subProcess id="es" triggeredByEvent="true"><bpmn:startEvent id="ess">` + timerDef + `</bpmn:startEvent>` + extra +
		`<bpmn:endEvent id="ese"/>` + flows("ess", "ese") + `</bpmn:subProcess>`
}

func ioTask(io string) string {
	return ruleDoc("", ruleBody(`<bpmn:task id="t"><bpmn:ioSpecification>`+io+`</bpmn:ioSpecification></bpmn:task>`, "t"))
}

// typedIOTask is ioTask with the item definitions of itemDecls.
func typedIOTask(io string) string {
	return ruleDoc(itemDecls, ruleBody(`<bpmn:task id="t"><bpmn:ioSpecification>`+io+`</bpmn:ioSpecification></bpmn:task>`, "t"))
}

func callee(start string) string {
	return ruleDoc(`<bpmn:signal id="S" name="s"/><bpmn:process id="c" isExecutable="true">`+start+`<bpmn:endEvent id="ce"/>`+flows("cs", "ce")+`</bpmn:process>`,
		ruleBody(`<bpmn:callActivity id="t" calledElement="c"/>`, "t"))
}

func collab(flow string) string {
	return `<bpmn:message id="M" name="m"/><bpmn:collaboration id="co"><bpmn:participant id="a" processRef="p"/><bpmn:participant id="b"/>` + flow + `</bpmn:collaboration>`
}

// boundary builds a task with a boundary event b defined by def, leading to
// be; extra adds elements.
func boundary(def, extra string) string {
	return ruleDoc("", ruleBody(`<bpmn:userTask id="t"/>`, "t")+`<bpmn:boundaryEvent id="b" attachedToRef="t">`+def+`</bpmn:boundaryEvent>`+
		`<bpmn:endEvent id="be"/>`+flows("b", "be")+extra)
}

// compensation builds a task with a compensation boundary event associated
// with a handler marked by mark.
func compensation(mark, extra string) string {
	return ruleDoc("", ruleBody(`<bpmn:task id="t"/>`, "t")+`<bpmn:boundaryEvent id="b" attachedToRef="t"><bpmn:compensateEventDefinition/></bpmn:boundaryEvent>`+
		`<bpmn:task id="h" `+mark+`/><bpmn:association id="as" sourceRef="b" targetRef="h"/>`+extra)
}

// compensateActivity builds a task t with a compensation handler, a task u
// without, and a compensation end event naming activity ref.
func compensateActivity(ref string) string {
	return ruleDoc("", `<bpmn:startEvent id="s"/><bpmn:task id="t"/><bpmn:boundaryEvent id="b" attachedToRef="t"><bpmn:compensateEventDefinition/></bpmn:boundaryEvent>`+
		`<bpmn:task id="h" isForCompensation="true"/><bpmn:association id="as" sourceRef="b" targetRef="h"/><bpmn:task id="u"/>`+
		`<bpmn:endEvent id="e"><bpmn:compensateEventDefinition activityRef="`+ref+`"/></bpmn:endEvent>`+flows("s", "t", "t", "u", "u", "e"))
}

// compensationEventSub is a compensation event sub-process.
const compensationEventSub = `<bpmn:subProcess id="ces" triggeredByEvent="true"><bpmn:startEvent id="cs"><bpmn:compensateEventDefinition/></bpmn:startEvent>` +
	`<bpmn:endEvent id="ce"/><bpmn:sequenceFlow id="cf" sourceRef="cs" targetRef="ce"/></bpmn:subProcess>`

// transaction builds a transaction with a cancel end event and, with
// cancelBoundary, the cancel boundary event it needs.
func transaction(cancelBoundary bool) string {
	body := `<bpmn:startEvent id="s"/><bpmn:transaction id="tx"><bpmn:startEvent id="ts"/><bpmn:endEvent id="te"><bpmn:cancelEventDefinition/></bpmn:endEvent>` +
		flows("ts", "te") + `</bpmn:transaction><bpmn:endEvent id="e"/>` + flows("s", "tx", "tx", "e")
	if cancelBoundary {
		body += `<bpmn:boundaryEvent id="cb" attachedToRef="tx"><bpmn:cancelEventDefinition/></bpmn:boundaryEvent><bpmn:endEvent id="ce"/>` + flows("cb", "ce")
	}
	return ruleDoc("", body)
}

func link(throw, catch string) string {
	return ruleDoc("", `<bpmn:startEvent id="s"/><bpmn:intermediateThrowEvent id="lt"><bpmn:linkEventDefinition name="`+throw+`"/></bpmn:intermediateThrowEvent>`+
		`<bpmn:intermediateCatchEvent id="lc"><bpmn:linkEventDefinition name="`+catch+`"/></bpmn:intermediateCatchEvent><bpmn:endEvent id="e"/>`+flows("s", "lt", "lc", "e"))
}

// linkIntoSubProcess is a link throw event named name whose only catch of
// that name is inside a sub-process: a link that leaves its process level.
func linkIntoSubProcess(name string) string {
	return ruleDoc("", `<bpmn:startEvent id="s"/><bpmn:intermediateThrowEvent id="lt"><bpmn:linkEventDefinition name="`+name+`"/></bpmn:intermediateThrowEvent>`+
		`<bpmn:subProcess id="sub"><bpmn:startEvent id="ss"/><bpmn:endEvent id="se"/>`+flows("ss", "se")+
		`<bpmn:intermediateCatchEvent id="lc"><bpmn:linkEventDefinition name="`+name+`"/></bpmn:intermediateCatchEvent><bpmn:endEvent id="le"/>`+flows("lc", "le")+
		`</bpmn:subProcess><bpmn:endEvent id="e"/>`+flows("s", "lt", "sub", "e"))
}

// eventGate builds an event-based gateway with n timer arms whose flows
// carry cond.
func eventGate(n int, cond string) string {
	body := `<bpmn:startEvent id="s"/><bpmn:eventBasedGateway id="g"/><bpmn:endEvent id="e"/>` + flows("s", "g")
	for i := 1; i <= n; i++ {
		c := "c" + string(rune('0'+i))
		body += `<bpmn:intermediateCatchEvent id="` + c + `">` + timerDef + `</bpmn:intermediateCatchEvent>` +
			`<bpmn:sequenceFlow id="to_` + c + `" sourceRef="g" targetRef="` + c + `">` + cond + `</bpmn:sequenceFlow>` + flows(c, "e")
	}
	return ruleDoc("", body)
}

// gateway builds an exclusive gateway g (with attrs) routing to a and b
// under conditions ca and cb.
func gateway(ca, cb, attrs string) string {
	return ruleDoc("", `<bpmn:startEvent id="s"/><bpmn:exclusiveGateway id="g" `+attrs+`/><bpmn:endEvent id="a"/><bpmn:endEvent id="b"/>`+flows("s", "g")+
		`<bpmn:sequenceFlow id="sf_g_a" sourceRef="g" targetRef="a">`+ca+`</bpmn:sequenceFlow><bpmn:sequenceFlow id="sf_g_b" sourceRef="g" targetRef="b">`+cb+`</bpmn:sequenceFlow>`)
}

func mappedTask(source string) string {
	return `<bpmn:serviceTask id="t"><bpmn:extensionElements><zeebe:taskDefinition type="w"/><zeebe:ioMapping><zeebe:input source="` + source +
		`" target="b"/></zeebe:ioMapping></bpmn:extensionElements></bpmn:serviceTask>`
}

// deployRules deploys doc and returns the rules of its errors and of its
// warnings.
func deployRules(t *testing.T, e *engine.Engine, doc string) (errs, warnings []string) {
	t.Helper()
	d, err := e.Deploy("rule.bpmn", []byte(doc))
	if err != nil {
		var de *engine.DeployError
		require.ErrorAs(t, err, &de)
		for _, p := range de.Problems {
			errs = append(errs, p.RuleID)
		}
		return errs, nil
	}
	for _, w := range d.Warnings {
		warnings = append(warnings, w.RuleID)
	}
	return nil, warnings
}

// TestRules checks each rule's smallest valid model deploys without the
// rule and its invalid model breaks it.
func TestRules(t *testing.T) {
	run := func(t *testing.T, tc ruleCase, opts ...engine.Option) {
		errs, warnings := deployRules(t, newEngine(t, opts...), tc.valid)
		// A rule about an element flowtrack does not execute has a valid
		// model that is refused only as unsupported.
		for _, r := range errs {
			assert.Equal(t, "FT.unsupported", r, "valid model refused (%v)", errs)
		}
		assert.NotContains(t, warnings, tc.rule, "valid model warned")
		errs, warnings = deployRules(t, newEngine(t, opts...), tc.invalid)
		if tc.warning {
			assert.Contains(t, warnings, tc.rule, "invalid model not warned (errors %v)", errs)
			return
		}
		assert.Contains(t, errs, tc.rule, "invalid model not refused by the rule")
	}
	for _, tc := range ruleCases {
		t.Run(tc.rule, func(t *testing.T) { run(t, tc) })
	}
	for _, tc := range strictRules {
		t.Run(tc.rule, func(t *testing.T) { run(t, tc, engine.WithStrict()) })
	}
}

// ruleLiteral matches a rule id written in the code.
var ruleLiteral = regexp.MustCompile(`"((?:EXT\.\d{3})|(?:XSD\.[a-z-]+)|(?:FT\.[a-z-]+))"`)

// TestRules_EveryRuleHasACase fails when a rule id appears in the
// engine's code without a case in ruleCases: every rule is tested with its
// smallest valid and invalid model.
func TestRules_EveryRuleHasACase(t *testing.T) {
	have := map[string]bool{}
	for _, tc := range ruleCases {
		have[tc.rule] = true
	}
	for r := range strictRules {
		have[r] = true
	}
	for _, r := range append(notModelRules, validateOnlyRules...) {
		have[r] = true
	}
	found := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range ruleLiteral.FindAllStringSubmatch(string(src), -1) {
			found++
			assert.True(t, have[m[1]], "%s: rule %s has no case in ruleCases", path, m[1])
		}
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, found, 50, "rule ids found in the code")
}

// TestRules_CheckedInOnePlace fails when a rule id is checked by both model
// validation and the runtime's plan compilation: Deploy runs validation
// first and compilation trusts it, so a second check is dead weight that
// drifts (the two once worded EXT.127 differently).
func TestRules_CheckedInOnePlace(t *testing.T) {
	where := map[string]map[string]bool{} // rule -> packages that name it
	for _, dir := range []string{"internal/model", "internal/runtime"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		require.NoError(t, err)
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			src, err := os.ReadFile(path)
			require.NoError(t, err)
			for _, m := range ruleLiteral.FindAllStringSubmatch(string(src), -1) {
				if where[m[1]] == nil {
					where[m[1]] = map[string]bool{}
				}
				where[m[1]][dir] = true
			}
		}
	}
	require.NotEmpty(t, where)
	for rule, dirs := range where {
		if strings.HasPrefix(rule, "EXT.") {
			assert.Len(t, dirs, 1, "rule %s is checked in %v: keep it in model validation", rule, dirs)
		}
	}
}
