package bpmnxml

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// refusedBy lists the rules validation holds against a testdata file that
// imports cleanly: the import keeps everything, validation refuses what
// the engine cannot run.
var refusedBy = map[string][]string{
	// End event _9 throws a message it does not name, without a job type.
	"delivery_default_ns.bpmn": {"EXT.127"},
}

// load imports a testdata file and validates it.
func load(t *testing.T, file string) *model.Definitions {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	require.NoError(t, err)
	d, err := Import(file, data)
	require.NoError(t, err)
	problems, _ := model.Check(d)
	var rules []string
	for _, p := range problems {
		rules = append(rules, p.RuleID)
	}
	require.Equal(t, refusedBy[file], rules, "validation problems: %v", problems)
	return d
}

// kinds counts a process's nodes by kind name.
func kinds(p *model.Process) map[string]int {
	out := map[string]int{}
	for _, n := range p.Nodes {
		out[n.Kind.String()]++
	}
	return out
}

func TestImport_Testdata(t *testing.T) {
	tests := []struct {
		file      string
		processes []string
		kinds     []map[string]int
		flows     []int
	}{
		{
			file:      "order_camunda8.bpmn",
			processes: []string{"order-process"},
			kinds: []map[string]int{{
				"startEvent": 1, "serviceTask": 3, "exclusiveGateway": 2, "userTask": 1, "boundaryEvent": 1,
				"sendTask": 1, "parallelGateway": 2, "intermediateCatchEvent": 1, "callActivity": 1, "endEvent": 1,
			}},
			flows: []int{14},
		},
		{
			file:      "invoice_camunda7.bpmn",
			processes: []string{"invoice"},
			kinds: []map[string]int{{
				"startEvent": 1, "serviceTask": 1, "businessRuleTask": 1, "inclusiveGateway": 2, "scriptTask": 1,
				"receiveTask": 1, "sendTask": 1, "endEvent": 1,
			}},
			flows: []int{10},
		},
		{
			file:      "fulfilment_bpmn2.bpmn",
			processes: []string{"fulfilment"},
			kinds: []map[string]int{{
				"startEvent": 3, "subProcess": 2, "manualTask": 1, "task": 1, "endEvent": 4, "boundaryEvent": 1,
			}},
			flows: []int{7},
		},
		{
			file:      "delivery_default_ns.bpmn",
			processes: []string{"PROCESS_shop", "PROCESS_courier"},
			kinds: []map[string]int{
				{"startEvent": 1, "task": 1, "eventBasedGateway": 1, "intermediateCatchEvent": 5, "complexGateway": 1, "intermediateThrowEvent": 1, "endEvent": 1},
				{"startEvent": 1, "receiveTask": 1, "endEvent": 1},
			},
			flows: []int{12, 2},
		},
		{
			file:      "travel_signavio.bpmn",
			processes: []string{"sid-travel-process"},
			kinds: []map[string]int{{
				"startEvent": 1, "task": 2, "boundaryEvent": 1, "exclusiveGateway": 1, "intermediateThrowEvent": 1, "endEvent": 2,
			}},
			flows: []int{5},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			d := load(t, tt.file)
			require.Len(t, d.Processes, len(tt.processes))
			for i, p := range d.Processes {
				assert.Equal(t, tt.processes[i], p.ID)
				assert.Equal(t, tt.kinds[i], kinds(p))
				assert.Len(t, p.Flows, tt.flows[i])
				for j, n := range p.Nodes {
					assert.Equal(t, j, n.Index)
					assert.Same(t, n, p.Node(n.ID))
				}
				for _, f := range p.Flows {
					require.NotNil(t, f.Source, f.ID)
					require.NotNil(t, f.Target, f.ID)
					assert.Contains(t, f.Source.Outgoing, f)
					assert.Contains(t, f.Target.Incoming, f)
				}
			}
		})
	}
}

func TestImport_Camunda8Order(t *testing.T) {
	d := load(t, "order_camunda8.bpmn")
	p := d.Process("order-process")
	require.NotNil(t, p)
	assert.Equal(t, "Order process", p.Name)
	assert.True(t, p.Executable)
	require.Len(t, p.StartEvents(), 1)

	check := p.Node("Task_checkOrder")
	require.NotNil(t, check)
	assert.Equal(t, model.KindServiceTask, check.Kind)
	assert.Equal(t, "check order", check.Name)
	assert.Equal(t, "Validates the order lines against the catalogue.", check.Documentation)
	require.NotNil(t, check.Job)
	assert.Equal(t, "check-order", check.Job.Type.Text)
	assert.Equal(t, "3", check.Job.Retries.Text)
	assert.Equal(t, []model.Header{{Key: "priority", Value: "high"}, {Key: "team", Value: "orders"}}, check.Job.Headers)
	assert.Equal(t, []model.Mapping{
		{Source: model.Expression{Text: "=order.id"}, Target: "orderId"},
		{Source: model.Expression{Text: "=order.customer"}, Target: "customer"},
	}, check.Inputs)
	assert.Equal(t, []model.Mapping{{Source: model.Expression{Text: "=valid"}, Target: "orderValid"}}, check.Outputs)
	assert.Equal(t, []model.Mapping{{Source: model.Expression{Text: "=order.amount"}, Target: "amount"}}, p.Node("StartEvent_order").Outputs)

	gw := p.Node("Gateway_amount")
	require.Len(t, gw.Outgoing, 2)
	require.NotNil(t, gw.Default)
	assert.Equal(t, "Flow_small", gw.Default.ID)
	assert.True(t, gw.Default.IsDefault)
	large := gw.Outgoing[0]
	assert.Equal(t, "Flow_large", large.ID)
	assert.Equal(t, "= amount > 100", large.Condition.Text)
	assert.False(t, large.IsDefault)
	assert.Equal(t, "Task_approve", large.Target.ID)

	fork := p.Node("Gateway_fork")
	assert.Equal(t, model.KindParallelGateway, fork.Kind)
	assert.Len(t, fork.Outgoing, 2)
	assert.Len(t, p.Node("Gateway_join").Incoming, 2)

	approve := p.Node("Task_approve")
	assert.Nil(t, approve.Job, "a user task without a task definition has no job definition")
	timer := p.Node("Event_reminder")
	assert.Same(t, approve, timer.AttachedTo)
	assert.Equal(t, []*model.Node{timer}, approve.Boundaries)
	assert.False(t, timer.CancelActivity)
	require.Len(t, timer.Events, 1)
	assert.Equal(t, model.EventTimer, timer.Events[0].Kind)
	assert.Equal(t, "P1D", timer.Events[0].Timer.Duration.Text)

	pay := p.Node("Event_paymentConfirmed")
	require.Len(t, pay.Events, 1)
	require.NotNil(t, pay.Events[0].Message)
	assert.Equal(t, "payment-confirmed", pay.Events[0].Message.Name)
	assert.Equal(t, "=orderId", pay.Events[0].Message.CorrelationKey.Text)
	assert.Same(t, d.Messages[0], pay.Events[0].Message)

	assert.Equal(t, "shipping", p.Node("Activity_ship").CalledElement.Text)
	assert.Equal(t, "=retries", p.Node("Task_reserve").Job.Retries.Text)
}

func TestImport_Camunda7Invoice(t *testing.T) {
	d := load(t, "invoice_camunda7.bpmn")
	p := d.Process("invoice")
	archive := p.Node("Task_archive")
	require.NotNil(t, archive.Job)
	assert.Equal(t, "archive-invoice", archive.Job.Type.Text)
	assert.Equal(t, []model.Mapping{
		{Source: model.Expression{Text: "${invoice.id}"}, Target: "invoiceId"},
		{Source: model.Expression{Text: "invoices"}, Target: "folder"},
	}, archive.Inputs)
	assert.Equal(t, []model.Mapping{{Source: model.Expression{Text: "${true}"}, Target: "archived"}}, archive.Outputs)
	assert.Nil(t, p.Node("Task_notify").Job, "camunda:class is not an external task")

	script := p.Node("Task_script")
	assert.Equal(t, "groovy", script.ScriptFormat)
	assert.Equal(t, "def total = invoice.lines.sum { it.amount }\ntotal", script.Script)

	split := p.Node("Gateway_split")
	assert.Equal(t, "Flow_none", split.Default.ID)
	byID := map[string]*model.Flow{}
	for _, f := range split.Outgoing {
		byID[f.ID] = f
	}
	assert.Equal(t, model.Expression{Text: `${approverGroups.contains("accounting")}`}, byID["Flow_acc"].Condition)
	assert.Equal(t, model.Expression{Text: `approverGroups.contains("management")`, Language: "groovy"}, byID["Flow_mgmt"].Condition)

	receive := p.Node("Task_receive")
	require.Len(t, receive.Events, 1)
	assert.Equal(t, model.EventMessage, receive.Events[0].Kind)
	assert.Equal(t, "signoff", receive.Events[0].Message.Name)
	assert.Len(t, p.Node("Gateway_join").Incoming, 3)
}

func TestImport_Bpmn2Fulfilment(t *testing.T) {
	d := load(t, "fulfilment_bpmn2.bpmn")
	p := d.Process("fulfilment")
	sub := p.Node("SubProcess_1")
	require.Len(t, sub.Children, 4)
	for _, c := range sub.Children {
		assert.Same(t, sub, c.Parent)
	}
	assert.Nil(t, sub.Parent)
	assert.Len(t, p.Top, 6)
	assert.Equal(t, []string{"SequenceFlow_3"}, ids(p.Node("StartEvent_2").Outgoing))

	boundary := p.Node("BoundaryEvent_1")
	assert.True(t, boundary.CancelActivity)
	require.NotNil(t, boundary.Events[0].Error)
	assert.Equal(t, "OUT_OF_STOCK", boundary.Events[0].Error.Code)
	assert.Equal(t, "LATE", p.Node("EndEvent_3").Events[0].Escalation.Code)
	assert.Equal(t, "order-cancelled", p.Node("EndEvent_1").Events[0].Signal.Name)

	evsp := p.Node("SubProcess_2")
	assert.True(t, evsp.TriggeredByEvent)
	start := p.Node("StartEvent_3")
	assert.False(t, start.CancelActivity)
	assert.Equal(t, model.EventTerminate, p.Node("EndEvent_4").Events[0].Kind)
	assert.True(t, p.Node("StartEvent_1").CancelActivity)
}

func TestImport_DefaultNamespaceDelivery(t *testing.T) {
	d := load(t, "delivery_default_ns.bpmn")
	p := d.Process("PROCESS_shop")
	assert.Equal(t, "delivered", p.Node("_8").Events[0].Message.Name, "tns: prefixed messageRef resolves")
	assert.Equal(t, "P3D", p.Node("_10").Events[0].Timer.Duration.Text)
	assert.Empty(t, p.Node("_10").Events[0].Timer.Duration.Language, "a document-level XPath default is not held against expressions")
	assert.Equal(t, "stop", p.Node("_11").Events[0].Signal.Name)

	cx := p.Node("_22")
	assert.Equal(t, "activationCount >= 1", cx.ActivationCondition.Text)
	assert.Equal(t, "_24", cx.Default.ID)
	assert.Equal(t, "finish", p.Node("_25").Events[0].LinkName)
	assert.Equal(t, "stock > 0", p.Node("_28").Events[0].Condition.Text)
	end := p.Node("_9")
	require.Len(t, end.Events, 1)
	assert.Nil(t, end.Events[0].Message, "a message throw without messageRef imports (validation refuses it: EXT.127)")
	assert.Equal(t, []string{"_27", "_29"}, ids(end.Incoming))

	courier := d.Process("PROCESS_courier")
	assert.Equal(t, "order", courier.Node("_21").Events[0].Message.Name)
	assert.Equal(t, "delivered", courier.Node("_33").Events[0].Message.Name)
}

func TestImport_SignavioTravel(t *testing.T) {
	d := load(t, "travel_signavio.bpmn")
	p := d.Process("sid-travel-process")
	assert.False(t, p.Executable)
	start := p.Node("sid-E1A2B3C4-START")
	assert.True(t, start.ParallelMultiple)
	require.Len(t, start.Events, 2)
	assert.Equal(t, model.EventMessage, start.Events[0].Kind)
	assert.Equal(t, model.EventSignal, start.Events[1].Kind)
	assert.Equal(t, "Either a booking message or a campaign signal starts a booking.", start.Documentation)
	assert.Equal(t, model.EventCompensation, p.Node("sid-BOUNDARY-COMP").Events[0].Kind)
	assert.Equal(t, model.EventCompensation, p.Node("sid-THROW-COMP").Events[0].Kind)
	assert.Equal(t, "http://www.w3.org/TR/XPath", p.Node("sid-GW-OK").Outgoing[0].Condition.Language)
}

// ids returns the ids of flows.
func ids(fs []*model.Flow) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.ID
	}
	return out
}

// doc wraps process content in a bpmn: definitions element.
func doc(content string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d">` + content + `</bpmn:definitions>`
}

func TestImport_Problems(t *testing.T) {
	tests := []struct {
		name    string
		xml     string
		element string
		ruleID  string
		rule    string // a prefix of the message
	}{
		{"malformed", "<bpmn:definitions xmlns:bpmn=\"http://www.omg.org/spec/BPMN/20100524/MODEL\">\n<bpmn:process>\n</bpmn:definitions>", "", "FT.xml", "t.bpmn: malformed XML at line 3"},
		{"empty", "", "", "FT.xml", "t.bpmn: malformed XML at line 1: no root element"},
		{"not bpmn", `<definitions xmlns="http://example.com"/>`, "", "FT.document", "t.bpmn: root element is {http://example.com}definitions, not a BPMN 2.0 definitions element"},
		{"choreography task", doc(`<bpmn:process id="p"><bpmn:choreographyTask id="ct"/></bpmn:process>`), "ct", "EXT.036", "unsupported element bpmn:choreographyTask"},
		{"adHocOrdering", doc(`<bpmn:process id="p"><bpmn:adHocSubProcess id="ah" ordering="Random"><bpmn:task id="t"/></bpmn:adHocSubProcess></bpmn:process>`), "ah", "XSD.enumeration", `ordering "Random" is neither Parallel nor Sequential`},
		{"adHocCancel", doc(`<bpmn:process id="p"><bpmn:adHocSubProcess id="ah" cancelRemainingInstances="yes"><bpmn:task id="t"/></bpmn:adHocSubProcess></bpmn:process>`), "ah", "XSD.boolean", `cancelRemainingInstances "yes" is not true or false`},
		{"adHocEndEvent", doc(`<bpmn:process id="p"><bpmn:adHocSubProcess id="ah"><bpmn:task id="t"/><bpmn:endEvent id="e"/></bpmn:adHocSubProcess></bpmn:process>`), "e", "EXT.062", "bpmn:endEvent cannot be inside an ad-hoc sub-process"},
		{"unknown bpmn element", doc(`<bpmn:process id="p"><bpmn:fancyTask id="f"/></bpmn:process>`), "f", "FT.unsupported", "unsupported element bpmn:fancyTask"},
		{"negative loop maximum", doc(`<bpmn:process id="p"><bpmn:task id="t"><bpmn:standardLoopCharacteristics loopMaximum="-1"/></bpmn:task></bpmn:process>`), "t", "XSD.integer", `loopMaximum "-1" is not a non-negative whole number`},
		{"unknown target", doc(`<bpmn:process id="p"><bpmn:startEvent id="s"/><bpmn:sequenceFlow id="f" sourceRef="s" targetRef="nowhere"/></bpmn:process>`), "f", "REF.19", "bpmn:sequenceFlow targetRef nowhere points to no element"},
		{"target of a wrong type", doc(`<bpmn:process id="p"><bpmn:startEvent id="s"/><bpmn:textAnnotation id="a"/><bpmn:sequenceFlow id="f" sourceRef="s" targetRef="a"/></bpmn:process>`), "f", "REF.19", "bpmn:sequenceFlow targetRef a points to a bpmn:textAnnotation, not a bpmn:activity"},
		{"target in another process", doc(`<bpmn:process id="p"><bpmn:startEvent id="s"/><bpmn:sequenceFlow id="f" sourceRef="s" targetRef="e"/></bpmn:process><bpmn:process id="q"><bpmn:endEvent id="e"/></bpmn:process>`), "f", "EXT.028", "targetRef e names an element outside process p"},
		{"missing source", doc(`<bpmn:process id="p"><bpmn:endEvent id="e"/><bpmn:sequenceFlow id="f" targetRef="e"/></bpmn:process>`), "f", "XSD.required", "sequence flow f has no sourceRef"},
		{"unknown message", doc(`<bpmn:process id="p"><bpmn:intermediateCatchEvent id="c"><bpmn:messageEventDefinition messageRef="m"/></bpmn:intermediateCatchEvent></bpmn:process>`), "c", "REF.93", "bpmn:messageEventDefinition messageRef m points to no element"},
		{"message of a wrong type", doc(`<bpmn:signal id="m"/><bpmn:process id="p"><bpmn:intermediateCatchEvent id="c"><bpmn:messageEventDefinition messageRef="m"/></bpmn:intermediateCatchEvent></bpmn:process>`), "c", "REF.93", "bpmn:messageEventDefinition messageRef m points to a bpmn:signal, not a bpmn:message"},
		{"unknown signal", doc(`<bpmn:process id="p"><bpmn:endEvent id="e"><bpmn:signalEventDefinition signalRef="s"/></bpmn:endEvent></bpmn:process>`), "e", "REF.95", "bpmn:signalEventDefinition signalRef s points to no element"},
		{"unknown error", doc(`<bpmn:process id="p"><bpmn:endEvent id="e"><bpmn:errorEventDefinition errorRef="x"/></bpmn:endEvent></bpmn:process>`), "e", "REF.89", "bpmn:errorEventDefinition errorRef x points to no element"},
		{"unknown escalation", doc(`<bpmn:process id="p"><bpmn:endEvent id="e"><bpmn:escalationEventDefinition escalationRef="x"/></bpmn:endEvent></bpmn:process>`), "e", "REF.90", "bpmn:escalationEventDefinition escalationRef x points to no element"},
		{"unknown receive message", doc(`<bpmn:process id="p"><bpmn:receiveTask id="r" messageRef="m"/></bpmn:process>`), "r", "REF.55", "bpmn:receiveTask messageRef m points to no element"},
		{"unknown default", doc(`<bpmn:process id="p"><bpmn:exclusiveGateway id="g" default="nope"/></bpmn:process>`), "g", "REF.96", "bpmn:exclusiveGateway default nope points to no element"},
		{"unknown attachedTo", doc(`<bpmn:process id="p"><bpmn:boundaryEvent id="b" attachedToRef="t"/></bpmn:process>`), "b", "REF.87", "bpmn:boundaryEvent attachedToRef t points to no element"},
		{"unknown event definition", doc(`<bpmn:process id="p"><bpmn:endEvent id="e"><bpmn:eventDefinitionRef>x</bpmn:eventDefinitionRef></bpmn:endEvent></bpmn:process>`), "e", "REF.86", "bpmn:eventDefinitionRef eventDefinitionRef x points to no element"},
		{"duplicate id", doc(`<bpmn:process id="p"><bpmn:task id="t"/><bpmn:task id="t"/></bpmn:process>`), "t", "XSD.id", "duplicate id"},
		{"missing id", doc(`<bpmn:process id="p"><bpmn:task/></bpmn:process>`), "", "EXT.003", "bpmn:task has no id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Import("t.bpmn", []byte(tt.xml))
			require.Error(t, err)
			// What is BPMN is returned beside the problems, for the later
			// checks; what is not has nothing to check.
			bpmn := tt.ruleID != "FT.xml" && tt.ruleID != "FT.document"
			assert.Equal(t, bpmn, d != nil, "definitions returned")
			var p *model.Problem
			require.True(t, errors.As(err, &p), "%T is not a *model.Problem", err)
			assert.Equal(t, tt.element, p.ElementID)
			assert.Equal(t, tt.ruleID, p.RuleID)
			assert.True(t, strings.HasPrefix(p.Rule, tt.rule), "rule %q does not start with %q", p.Rule, tt.rule)
		})
	}
}

func TestImport_ProblemPositions(t *testing.T) {
	xml := doc(`<bpmn:process id="p">
  <bpmn:startEvent id="s"/>
  <bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="nowhere"/>
    <bpmn:task/>
</bpmn:process>`)
	_, err := Import("t.bpmn", []byte(xml))
	var joined interface{ Unwrap() []error }
	require.ErrorAs(t, err, &joined)
	var got []string
	for _, e := range joined.Unwrap() {
		p := e.(*model.Problem)
		got = append(got, fmt.Sprintf("%d:%d %s", p.Pos.Line, p.Pos.Column, p.RuleID))
	}
	// doc puts its content on line 2; the problems come in document order.
	assert.Equal(t, []string{"4:3 REF.19", "5:5 EXT.003"}, got)
}

func TestImport_Ignored(t *testing.T) {
	// Artifacts, data, lanes, foreign extensions and a catch-all error
	// boundary import without complaint.
	d, err := Import("t.bpmn", []byte(doc(`
	<bpmn:process id="p" isExecutable="true" xmlns:foo="urn:foo">
	  <bpmn:extensionElements><foo:anything deep="yes"><foo:more/></foo:anything></bpmn:extensionElements>
	  <bpmn:laneSet id="ls"><bpmn:lane id="l"><bpmn:flowNodeRef>s</bpmn:flowNodeRef></bpmn:lane></bpmn:laneSet>
	  <bpmn:dataObject id="do"/><bpmn:dataObjectReference id="dor" dataObjectRef="do"/>
	  <bpmn:dataStoreReference id="dsr"/>
	  <bpmn:textAnnotation id="ta"><bpmn:text>note</bpmn:text></bpmn:textAnnotation>
	  <bpmn:association id="as" sourceRef="ta" targetRef="t"/>
	  <bpmn:startEvent id="s"/>
	  <bpmn:task id="t"><bpmn:dataInputAssociation id="dia"><bpmn:sourceRef>dor</bpmn:sourceRef></bpmn:dataInputAssociation></bpmn:task>
	  <bpmn:boundaryEvent id="b" attachedToRef="t"><bpmn:errorEventDefinition/></bpmn:boundaryEvent>
	  <bpmn:endEvent id="e"/>
	  <foo:node id="x"/>
	  <bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="t"/>
	  <bpmn:sequenceFlow id="f2" sourceRef="t" targetRef="e"/>
	  <bpmn:sequenceFlow id="f3" sourceRef="b" targetRef="e"/>
	</bpmn:process>`)))
	require.NoError(t, err)
	require.NoError(t, model.Validate(d))
	p := d.Process("p")
	assert.Len(t, p.Nodes, 4)
	assert.Nil(t, p.Node("b").Events[0].Error, "an error boundary without errorRef catches any error")
}

func TestImport_Charsets(t *testing.T) {
	tests := []struct {
		encoding string
		raw      byte
		want     string
	}{
		{"ISO-8859-1", 0xE9, "café"},
		{"WINDOWS-1252", 0x80, "caf€"},
	}
	for _, tt := range tests {
		t.Run(tt.encoding, func(t *testing.T) {
			data := []byte(`<?xml version="1.0" encoding="` + tt.encoding + `"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL"><process id="p"><task id="t" name="caf` + string([]byte{tt.raw}) + `"/></process></definitions>`)
			d, err := Import("t.bpmn", data)
			require.NoError(t, err)
			assert.Equal(t, tt.want, d.Process("p").Node("t").Name)
		})
	}
}

// diagram matches the diagram interchange section of a BPMN file.
var diagram = regexp.MustCompile(`(?s)<(\w+:)?BPMNDiagram.*</(\w+:)?BPMNDiagram>`)

// FuzzImport checks that Import and Validate never panic and that Import
// fails only with Problems.
//
// The seeds are the testdata files without their diagram interchange, which
// Import skips anyway: the fuzzer minimises every new interesting input,
// and with 13 KB seeds minimising (up to -fuzzminimizetime, 60 s by
// default) crowds out fuzzing. Run with -fuzzminimizetime=2s for best
// throughput.
func FuzzImport(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.bpmn"))
	require.NoError(f, err)
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(f, err)
		f.Add(diagram.ReplaceAll(data, nil))
	}
	f.Add([]byte(doc(`<bpmn:process id="p"><bpmn:startEvent id="s"/><bpmn:exclusiveGateway id="g" default="f2"/><bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="g"/><bpmn:sequenceFlow id="f2" sourceRef="g" targetRef="s"><bpmn:conditionExpression>= x</bpmn:conditionExpression></bpmn:sequenceFlow></bpmn:process>`)))
	f.Add([]byte(doc(`<bpmn:process id="p"><bpmn:subProcess id="s"><bpmn:boundaryEvent attachedToRef="s"/></bpmn:subProcess><bpmn:sequenceFlow sourceRef="s" targetRef="s" id="f"/></bpmn:process>`)))
	// Item types, operations, resources and multiplicities (itemtypes.go,
	// catalogue.go).
	f.Add([]byte(`<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL"><itemDefinition id="I" structureRef="a" isCollection="true"/>` +
		`<message id="M" itemRef="I"/><interface id="F"><operation id="O"><inMessageRef>M</inMessageRef><outMessageRef>M</outMessageRef></operation></interface>` +
		`<resource id="R"><resourceParameter id="RP"/></resource><collaboration id="c"><participant id="pa" processRef="p"><participantMultiplicity minimum="2" maximum="x"/></participant></collaboration>` +
		`<process id="p"><ioSpecification><dataOutput id="po"/></ioSpecification><serviceTask id="t" operationRef="O"><ioSpecification><dataInput id="di" itemSubjectRef="I"/><dataOutput id="do"/>` +
		`<inputSet/><outputSet/></ioSpecification><performer><resourceParameterBinding parameterRef="RP"/></performer><dataInputAssociation><sourceRef>po</sourceRef></dataInputAssociation>` +
		`<multiInstanceLoopCharacteristics><loopDataInputRef>di</loopDataInputRef><inputDataItem itemSubjectRef="I"/><completionCondition>'1'</completionCondition></multiInstanceLoopCharacteristics>` +
		`</serviceTask><property id="pr"/></process></definitions>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Import("fuzz.bpmn", data)
		if err != nil {
			var p *model.Problem
			if !errors.As(err, &p) {
				t.Fatalf("Import returned %T, not a *model.Problem: %v", err, err)
			}
		}
		if d != nil {
			// Validation runs on what a refused document imported too.
			_ = model.Validate(d)
		}
	})
}

func TestImport_Quantities(t *testing.T) {
	d, err := Import("t.bpmn", []byte(doc(`<bpmn:process id="p"><bpmn:task id="t" startQuantity=" 2 " completionQuantity="3"/><bpmn:task id="plain" startQuantity="1"/></bpmn:process>`)))
	require.NoError(t, err)
	p := d.Process("p")
	assert.Equal(t, 2, p.Node("t").StartQuantity)
	assert.Equal(t, 3, p.Node("t").CompletionQuantity)
	assert.Zero(t, p.Node("plain").StartQuantity, "1 is the default, kept as 0")
	assert.Zero(t, p.Node("plain").CompletionQuantity)
}
