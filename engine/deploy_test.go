package engine_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// TestEngine_DeployMissingReference checks that an event definition whose
// optional reference is absent is rejected by Deploy with a DeployError
// naming the element, never a panic (issue 22 item 9: a top-level signal
// start event without signalRef crashed while registering start events).
func TestEngine_DeployMissingReference(t *testing.T) {
	for _, tc := range []struct {
		name, body, element string
	}{
		{"signal start", `<bpmn:startEvent id="s"><bpmn:signalEventDefinition/></bpmn:startEvent><bpmn:endEvent id="e"/>` +
			`<bpmn:sequenceFlow id="f" sourceRef="s" targetRef="e"/>`, "s"},
		{"message start", `<bpmn:startEvent id="s"><bpmn:messageEventDefinition/></bpmn:startEvent><bpmn:endEvent id="e"/>` +
			`<bpmn:sequenceFlow id="f" sourceRef="s" targetRef="e"/>`, "s"},
		{"signal throw", `<bpmn:startEvent id="s"/><bpmn:intermediateThrowEvent id="t"><bpmn:signalEventDefinition/></bpmn:intermediateThrowEvent>` +
			`<bpmn:sequenceFlow id="f" sourceRef="s" targetRef="t"/>`, "t"},
		{"signal end", `<bpmn:startEvent id="s"/><bpmn:endEvent id="t"><bpmn:signalEventDefinition/></bpmn:endEvent>` +
			`<bpmn:sequenceFlow id="f" sourceRef="s" targetRef="t"/>`, "t"},
		{"signal boundary", `<bpmn:startEvent id="s"/><bpmn:userTask id="u"/><bpmn:boundaryEvent id="b" attachedToRef="u"><bpmn:signalEventDefinition/></bpmn:boundaryEvent>` +
			`<bpmn:endEvent id="e"/><bpmn:sequenceFlow id="f" sourceRef="s" targetRef="u"/><bpmn:sequenceFlow id="f2" sourceRef="b" targetRef="e"/>`, "b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newEngine(t).Deploy("missing.bpmn", []byte(process(tc.body)))
			var de *engine.DeployError
			require.True(t, errors.As(err, &de), "got %v", err)
			assert.Equal(t, tc.element, de.ElementID)
		})
	}
}

// referenceAttr matches a reference attribute of a BPMN element: the
// attributes whose absence or dangling value every path reading an
// optional reference must handle.
var referenceAttr = regexp.MustCompile(`\s(?:sourceRef|targetRef|attachedToRef|default|messageRef|signalRef|errorRef|escalationRef|calledElement|processId)="[^"]*"`)

// referenceModels returns the valid models the reference tests mutate:
// the engine's test data and the conformance scenarios.
func referenceModels(tb testing.TB) [][]byte {
	tb.Helper()
	var files []string
	for _, pattern := range []string{"testdata/*.bpmn", "../conformance/scenarios/*.bpmn"} {
		m, err := filepath.Glob(pattern)
		require.NoError(tb, err)
		files = append(files, m...)
	}
	require.NotEmpty(tb, files)
	out := make([][]byte, len(files))
	for i, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(tb, err)
		out[i] = data
	}
	return out
}

// withoutReference returns model with its i-th reference attribute
// removed (dangling false) or pointing nowhere (dangling true), and
// whether there was an i-th one.
func withoutReference(model []byte, i int, dangling bool) ([]byte, bool) {
	locs := referenceAttr.FindAllIndex(model, -1)
	if i >= len(locs) {
		return nil, false
	}
	loc := locs[i]
	repl := []byte{}
	if dangling {
		attr := model[loc[0]:loc[1]]
		name, _, _ := bytes.Cut(attr, []byte("="))
		repl = append(append(repl, name...), `="nowhere"`...)
	}
	return slices.Concat(model[:loc[0]], repl, model[loc[1]:]), true
}

// checkDeploy deploys data and fails unless it deploys or is rejected
// with a DeployError whose problems are the model's, not flowtrack's.
func checkDeploy(t *testing.T, e *engine.Engine, data []byte) {
	t.Helper()
	_, err := e.Deploy("mutated.bpmn", data)
	if err == nil {
		return
	}
	var de *engine.DeployError
	require.ErrorAs(t, err, &de)
	require.NotEmpty(t, de.Problems)
	assert.False(t, errors.Is(err, &engine.Problem{RuleID: "FT.internal"}), "internal error deploying:\n%s\n%v", data, de.Problems)
}

// TestEngine_DeployWithoutReference removes, or points nowhere, each
// reference of each valid model in turn: Deploy must reject or accept the
// result, never crash (issue 22 item 9).
func TestEngine_DeployWithoutReference(t *testing.T) {
	e := newEngine(t)
	n := 0
	for _, model := range referenceModels(t) {
		for i := 0; ; i++ {
			removed, ok := withoutReference(model, i, false)
			if !ok {
				break
			}
			dangling, _ := withoutReference(model, i, true)
			checkDeploy(t, e, removed)
			checkDeploy(t, e, dangling)
			n++
		}
	}
	assert.Greater(t, n, 500, "references mutated")
}

// FuzzDeploy_WithoutReferences removes a fuzzer-chosen set of references
// from a valid model (and may make others dangle) and deploys the result.
func FuzzDeploy_WithoutReferences(f *testing.F) {
	models := referenceModels(f)
	f.Add(uint16(0), uint64(1), uint64(0))
	f.Add(uint16(3), uint64(0b1010), uint64(0b0100))
	f.Fuzz(func(t *testing.T, which uint16, remove, dangle uint64) {
		model := models[int(which)%len(models)]
		// Walk from the last reference back, so earlier offsets stay valid.
		count := len(referenceAttr.FindAllIndex(model, -1))
		for i := min(count, 64) - 1; i >= 0; i-- {
			switch {
			case remove&(1<<i) != 0:
				model, _ = withoutReference(model, i, false)
			case dangle&(1<<i) != 0:
				model, _ = withoutReference(model, i, true)
			}
		}
		e, err := engine.New()
		require.NoError(t, err)
		defer e.Close(context.Background())
		checkDeploy(t, e, model)
	})
}

// TestEngine_DeployReportsEveryStage checks that a document with a problem
// found at import (a reference pointing nowhere), one found by validation
// (a gateway flow without condition) and two found at compilation (an
// expression that does not parse, a timer duration that is not ISO-8601)
// reports all of them at once, in document order: the modeller fixes the
// file once, not once per stage.
func TestEngine_DeployReportsEveryStage(t *testing.T) {
	doc := `<?xml version="1.0"?>
<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d" targetNamespace="t">
<bpmn:process id="p" isExecutable="true">
<bpmn:startEvent id="s"/>
<bpmn:exclusiveGateway id="g"/>
<bpmn:intermediateCatchEvent id="wait"><bpmn:timerEventDefinition><bpmn:timeDuration>3 days</bpmn:timeDuration></bpmn:timerEventDefinition></bpmn:intermediateCatchEvent>
<bpmn:endEvent id="e"/>
<bpmn:sequenceFlow id="f1" sourceRef="s" targetRef="g"/>
<bpmn:sequenceFlow id="f2" sourceRef="g" targetRef="wait"><bpmn:conditionExpression>= x &gt;</bpmn:conditionExpression></bpmn:sequenceFlow>
<bpmn:sequenceFlow id="f3" sourceRef="g" targetRef="e"/>
<bpmn:sequenceFlow id="f4" sourceRef="wait" targetRef="nowhere"/>
</bpmn:process>
</bpmn:definitions>`
	_, err := newEngine(t).Deploy("stages.bpmn", []byte(doc))
	var de *engine.DeployError
	require.ErrorAs(t, err, &de)
	var got []string
	for _, p := range de.Problems {
		got = append(got, fmt.Sprintf("%d %s %s", p.Line, p.RuleID, p.ElementID))
	}
	assert.Equal(t, []string{
		"5 FT.condition g",
		"6 FT.timer-duration wait",
		"9 FT.expression f2",
		"11 REF.19 f4",
	}, got)
}
