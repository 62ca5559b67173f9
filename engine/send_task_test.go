package engine_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// sendTaskDefs: process "p" sends message "go" (keyed by variable key)
// from element "send" (which goes on to end event "e" unless it is an
// end event itself); process "r" waits for it in a receive task, process
// "m" is started by it (and opens a job of type "started").
func sendTaskDefs(send string) string {
	if !strings.HasPrefix(send, "<bpmn:endEvent") {
		send += `<bpmn:endEvent id="e"/><bpmn:sequenceFlow id="f2" sourceRef="send" targetRef="e"/>`
	}
	return `<?xml version="1.0"?><bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" ` +
		`xmlns:zeebe="http://camunda.org/schema/zeebe/1.0" id="d" targetNamespace="t">` + goMessage +
		`<bpmn:process id="p" isExecutable="true"><bpmn:startEvent id="s"/>` + send +
		`<bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="send"/></bpmn:process>` +
		`<bpmn:process id="r" isExecutable="true"><bpmn:startEvent id="rs"/><bpmn:receiveTask id="recv" messageRef="Msg_go"/><bpmn:endEvent id="re"/>` +
		`<bpmn:sequenceFlow id="r1" sourceRef="rs" targetRef="recv"/><bpmn:sequenceFlow id="r2" sourceRef="recv" targetRef="re"/></bpmn:process>` +
		`<bpmn:process id="m" isExecutable="true"><bpmn:startEvent id="ms"><bpmn:messageEventDefinition messageRef="Msg_go"/></bpmn:startEvent>` +
		`<bpmn:serviceTask id="started"><bpmn:extensionElements><zeebe:taskDefinition type="started"/></bpmn:extensionElements></bpmn:serviceTask>` +
		`<bpmn:sequenceFlow id="m1" sourceRef="ms" targetRef="started"/></bpmn:process>` +
		`</bpmn:definitions>`
}

// TestSendTask_MessageRefSendsTheMessage: a send task with a messageRef and
// no job type sends its message itself, as a message throw event does
// (BPMN 2.0 §10.3.3: the message is sent when the task runs); the waiting
// receive task of another instance correlates by key. With a job type it
// is a job for a worker, as in Zeebe.
func TestSendTask_MessageRefSendsTheMessage(t *testing.T) {
	for _, tc := range []struct{ name, send string }{
		{"send task", `<bpmn:sendTask id="send" messageRef="Msg_go"/>`},
		{"looping send task", `<bpmn:sendTask id="send" messageRef="Msg_go"><bpmn:standardLoopCharacteristics loopMaximum="1"/></bpmn:sendTask>`},
		{"message throw event", `<bpmn:intermediateThrowEvent id="send"><bpmn:messageEventDefinition messageRef="Msg_go"/></bpmn:intermediateThrowEvent>`},
		{"message end event", `<bpmn:endEvent id="send"><bpmn:messageEventDefinition messageRef="Msg_go"/></bpmn:endEvent>`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEngine(t)
			deploy(t, e, sendTaskDefs(tc.send))
			receiver, err := e.Start(ctxT(t), "r", map[string]any{"key": "order-1"})
			require.NoError(t, err)
			other, err := e.Start(ctxT(t), "r", map[string]any{"key": "order-2"})
			require.NoError(t, err)
			require.NoError(t, e.Settle(ctxT(t)))
			sender := start(t, e, map[string]any{"key": "order-1"})
			assert.Equal(t, engine.Completed, sender.State(), "sending needs no worker")
			assert.Equal(t, 1, count(sender, engine.MessagePublished, "send"))
			assert.Equal(t, engine.Completed, receiver.State(), "the receive task with the same key got the message")
			assert.Equal(t, engine.Active, other.State(), "another key did not")
			assert.Len(t, e.Jobs(engine.JobFilter{Type: "started"}), 1, "the message started process m")
			assert.Empty(t, e.Jobs(engine.JobFilter{Type: "sendTask"}), "no job for the send task")
		})
	}
	t.Run("job type", func(t *testing.T) {
		e := newEngine(t)
		deploy(t, e, sendTaskDefs(`<bpmn:sendTask id="send" messageRef="Msg_go"><bpmn:extensionElements>`+
			`<zeebe:taskDefinition type="mailer"/></bpmn:extensionElements></bpmn:sendTask>`))
		receiver, err := e.Start(ctxT(t), "r", map[string]any{"key": "order-1"})
		require.NoError(t, err)
		sender := start(t, e, map[string]any{"key": "order-1"})
		require.NoError(t, e.CompleteJob(ctxT(t), jobOf(t, e, "mailer").Key, nil))
		st, _ := sender.Wait(ctxT(t))
		assert.Equal(t, engine.Completed, st)
		assert.Equal(t, 0, count(sender, engine.MessagePublished, "send"), "a worker sends it, not the engine")
		assert.Equal(t, engine.Active, receiver.State())
	})
}
