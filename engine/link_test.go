package engine_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// linkPair is start → t (link throw with definition throwDef) and c (link
// catch with definition catchDef) → work (job) → end.
func linkPair(throwDef, catchDef string) string {
	return defs(``, `<bpmn:startEvent id="s"/><bpmn:intermediateThrowEvent id="t">`+throwDef+`</bpmn:intermediateThrowEvent>`+
		`<bpmn:intermediateCatchEvent id="c">`+catchDef+`</bpmn:intermediateCatchEvent>`+task("work", "work")+`<bpmn:endEvent id="e"/>`+
		flows("s", "t", "c", "work", "work", "e"))
}

// TestLink_PairedByReference: BPMN 2.0 pairs a link throw event with its
// catch by the definitions' bpmn:target and bpmn:source references; the
// names may differ (modellers name each event for its diagram) or be
// missing. The throw jumps to the catch they name. A document that pairs
// by reference writes both ends (EXT.124, EXT.125: TestLink_Refused).
func TestLink_PairedByReference(t *testing.T) {
	for name, pair := range map[string][2]string{
		"target and source, names differ": {`<bpmn:linkEventDefinition id="lt" name="to payment"><bpmn:target>lc</bpmn:target></bpmn:linkEventDefinition>`,
			`<bpmn:linkEventDefinition id="lc" name="payment"><bpmn:source>lt</bpmn:source></bpmn:linkEventDefinition>`},
		"by name": {`<bpmn:linkEventDefinition id="lt" name="a"/>`, `<bpmn:linkEventDefinition id="lc" name="a"/>`},
	} {
		t.Run(name, func(t *testing.T) {
			e := newEngine(t)
			deploy(t, e, linkPair(pair[0], pair[1]))
			inst := start(t, e, nil)
			complete(t, e, "work")
			state, err := inst.Wait(ctxT(t))
			require.NoError(t, err)
			assert.Equal(t, engine.Completed, state)
			assert.Equal(t, []string{"s", "t", "c", "work", "e"}, left(inst))
		})
	}
}

// TestLink_Refused: a link throw event with no catch to jump to is refused
// naming EXT.118; one whose catch is in another scope (by reference or by
// name) naming EXT.126; one whose name two catches share naming
// FT.link-name.
func TestLink_Refused(t *testing.T) {
	sub := func(inner string) string {
		return `<bpmn:subProcess id="sub"><bpmn:startEvent id="ss"/><bpmn:endEvent id="se"/>` + flows("ss", "se") + inner + `</bpmn:subProcess>`
	}
	withSub := func(throwDef, inner string) string {
		return defs(``, `<bpmn:startEvent id="s"/><bpmn:intermediateThrowEvent id="t">`+throwDef+`</bpmn:intermediateThrowEvent>`+
			sub(inner)+`<bpmn:endEvent id="e"/>`+flows("s", "t", "sub", "e"))
	}
	catchIn := func(id, def string) string {
		return `<bpmn:intermediateCatchEvent id="` + id + `">` + def + `</bpmn:intermediateCatchEvent><bpmn:endEvent id="` + id + `_e"/>` + flows(id, id+"_e")
	}
	for _, tc := range []struct{ name, doc, rule string }{
		{"no catch", linkPair(`<bpmn:linkEventDefinition id="lt" name="a"/>`, `<bpmn:linkEventDefinition id="lc" name="b"/>`), "EXT.118"},
		{"target is no catch", linkPair(`<bpmn:linkEventDefinition id="lt" name="a"><bpmn:target>lt</bpmn:target></bpmn:linkEventDefinition>`, `<bpmn:linkEventDefinition id="lc" name="a"/>`), "EXT.118"},
		{"target only: the catch lists no source", linkPair(`<bpmn:linkEventDefinition id="lt"><bpmn:target>lc</bpmn:target></bpmn:linkEventDefinition>`, `<bpmn:linkEventDefinition id="lc"/>`), "EXT.124"},
		{"source only: the throw names no target", linkPair(`<bpmn:linkEventDefinition id="lt" name="a"/>`, `<bpmn:linkEventDefinition id="lc" name="b"><bpmn:source>lt</bpmn:source></bpmn:linkEventDefinition>`), "EXT.125"},
		{"target in a sub-process", withSub(`<bpmn:linkEventDefinition id="lt" name="a"><bpmn:target>lc</bpmn:target></bpmn:linkEventDefinition>`,
			catchIn("c", `<bpmn:linkEventDefinition id="lc" name="b"/>`)), "EXT.126"},
		{"name in a sub-process", withSub(`<bpmn:linkEventDefinition id="lt" name="a"/>`, catchIn("c", `<bpmn:linkEventDefinition id="lc" name="a"/>`)), "EXT.126"},
		{"two catches of one name", defs(``, `<bpmn:startEvent id="s"/><bpmn:intermediateThrowEvent id="t"><bpmn:linkEventDefinition id="lt" name="a"/></bpmn:intermediateThrowEvent>`+
			catchIn("c1", `<bpmn:linkEventDefinition id="l1" name="a"/>`)+catchIn("c2", `<bpmn:linkEventDefinition id="l2" name="a"/>`)+flows("s", "t")), "FT.link-name"},
		{"two catches list it as source", defs(``, `<bpmn:startEvent id="s"/><bpmn:intermediateThrowEvent id="t"><bpmn:linkEventDefinition id="lt" name="a"/></bpmn:intermediateThrowEvent>`+
			catchIn("c1", `<bpmn:linkEventDefinition id="l1" name="b"><bpmn:source>lt</bpmn:source></bpmn:linkEventDefinition>`)+
			catchIn("c2", `<bpmn:linkEventDefinition id="l2" name="c"><bpmn:source>lt</bpmn:source></bpmn:linkEventDefinition>`)+flows("s", "t")), "FT.link-name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEngine(t)
			_, err := e.Deploy("link.bpmn", []byte(tc.doc))
			var de *engine.DeployError
			require.ErrorAs(t, err, &de)
			var rules []string
			for _, p := range de.Problems {
				rules = append(rules, p.RuleID)
			}
			assert.Contains(t, rules, tc.rule)
		})
	}
}
