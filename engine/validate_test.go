package engine_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// validateOnlyRules are rules only Validate can break: they need the
// documents a model imports, which Deploy does not have
// (TestValidate_Imports).
var validateOnlyRules = []string{"EXT.002"}

// validateRules returns the rules of Validate's problems for doc, which
// imports from files.
func validateRules(t *testing.T, doc string, files map[string]string) []string {
	t.Helper()
	_, err := engine.Validate("v.bpmn", []byte(doc), func(location string) ([]byte, error) {
		if f, ok := files[location]; ok {
			return []byte(f), nil
		}
		return nil, os.ErrNotExist
	})
	if err == nil {
		return nil
	}
	var de *engine.DeployError
	require.ErrorAs(t, err, &de)
	var rules []string
	for _, p := range de.Problems {
		rules = append(rules, p.RuleID)
	}
	return rules
}

// TestValidate_EveryProcess holds a process that is not executable to
// the catalogue in Validate, while Deploy, which does not execute it,
// lets it by.
func TestValidate_EveryProcess(t *testing.T) {
	// Data input di is listed by no input set (EXT.084).
	descriptive := `<bpmn:process id="q" isExecutable="false"><bpmn:task id="qt"><bpmn:ioSpecification><bpmn:dataInput id="di"/>` +
		`<bpmn:inputSet id="is"/><bpmn:outputSet id="os"/></bpmn:ioSpecification></bpmn:task></bpmn:process>`
	doc := ruleDoc(descriptive, startEnd)
	_, warnings := deployRules(t, newEngine(t), doc)
	assert.Contains(t, warnings, "EXT.084", "Deploy warns of what the process it does not run breaks")
	assert.Equal(t, []string{"EXT.084"}, validateRules(t, doc, nil))
	// A document Deploy refuses anyway names what its descriptive
	// processes break too.
	alone := `<?xml version="1.0"?><bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" id="d" targetNamespace="t">` +
		descriptive + `</bpmn:definitions>`
	errs, _ := deployRules(t, newEngine(t), alone)
	assert.ElementsMatch(t, []string{"FT.executable", "EXT.084"}, errs)
	assert.Equal(t, []string{"EXT.084"}, validateRules(t, alone, nil))

	// EXT.150 in a process that is not executable: where a level has a
	// start event, every flow node has an incoming flow.
	sketch := `<bpmn:process id="q" isExecutable="false"><bpmn:startEvent id="qs"/><bpmn:task id="qa"/><bpmn:task id="qb"/>` +
		`<bpmn:endEvent id="qe"/><bpmn:sequenceFlow id="qf1" sourceRef="qs" targetRef="qa"/><bpmn:sequenceFlow id="qf2" sourceRef="qb" targetRef="qe"/></bpmn:process>`
	assert.Equal(t, []string{"EXT.150"}, validateRules(t, ruleDoc(sketch, startEnd), nil))
	// A descriptive call of a process without a none start event
	// (EXT.099), and a descriptive timer typed formal but empty (EXT.013).
	caller := `<bpmn:process id="q" isExecutable="false"><bpmn:startEvent id="qs"/><bpmn:callActivity id="qc" calledElement="r"/>` +
		`<bpmn:intermediateCatchEvent id="qt"><bpmn:timerEventDefinition><bpmn:timeDuration xsi:type="bpmn:tFormalExpression"/></bpmn:timerEventDefinition></bpmn:intermediateCatchEvent>` +
		`<bpmn:endEvent id="qe"/>` + flows("qs", "qc", "qc", "qt", "qt", "qe") + `</bpmn:process>` +
		`<bpmn:process id="r" isExecutable="false"><bpmn:startEvent id="rs"><bpmn:signalEventDefinition/></bpmn:startEvent></bpmn:process>`
	assert.ElementsMatch(t, []string{"EXT.099", "EXT.013"}, validateRules(t, ruleDoc(caller, startEnd), nil))
	assert.Empty(t, validateRules(t, ruleDoc(strings.Replace(sketch, `</bpmn:process>`, `<bpmn:sequenceFlow id="qf3" sourceRef="qa" targetRef="qb"/></bpmn:process>`, 1), startEnd), nil))

	// A valid descriptive model is valid, though nothing would deploy.
	only := strings.Replace(ruleDoc("", startEnd), `isExecutable="true"`, `isExecutable="false"`, 1)
	v, err := engine.Validate("v.bpmn", []byte(only), nil)
	require.NoError(t, err)
	assert.Empty(t, v.Executable)
	v, err = engine.Validate("v.bpmn", []byte(ruleDoc("", startEnd)), nil)
	require.NoError(t, err)
	assert.Equal(t, []string{"p"}, v.Executable)
}

// TestValidate_Imports resolves imports (EXT.001, EXT.002): the imported
// document is where its location says, declares the namespace the import
// names, and, imported into its own namespace, repeats none of the
// importing document's ids.
func TestValidate_Imports(t *testing.T) {
	imp := func(typ, ns, loc string) string {
		return `<bpmn:import importType="` + typ + `" namespace="` + ns + `" location="` + loc + `"/>`
	}
	const xsdType, bpmnType = "http://www.w3.org/2001/XMLSchema", "http://www.omg.org/spec/BPMN/20100524/MODEL"
	schema := `<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" targetNamespace="http://example.com/types"/>`
	other := func(ns, id string) string {
		return `<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL" id="o" targetNamespace="` + ns + `">` +
			`<bpmn:process id="` + id + `" isExecutable="false"/></bpmn:definitions>`
	}
	files := map[string]string{"types.xsd": schema, "same.bpmn": other("t", "p"), "apart.bpmn": other("t", "other")}
	for _, tc := range []struct {
		name, decl string
		want       []string
	}{
		{"schema found", imp(xsdType, "http://example.com/types", "types.xsd"), nil},
		{"location unreadable", imp(xsdType, "http://example.com/types", "missing.xsd"), []string{"EXT.001"}},
		{"namespace not the document's", imp(xsdType, "http://example.com/other", "types.xsd"), []string{"EXT.001"}},
		{"type not a URI", imp("xsd", "http://example.com/types", "types.xsd"), []string{"EXT.001"}},
		{"same namespace, own ids", imp(bpmnType, "t", "apart.bpmn"), []string{"EXT.001"}}, // "t" is not an absolute URI
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, validateRules(t, ruleDoc(tc.decl, startEnd), files))
		})
	}
	// The importing document's own namespace, an absolute URI this time.
	ns := "http://example.com/orders"
	files["same.bpmn"], files["apart.bpmn"] = other(ns, "p"), other(ns, "other")
	doc := func(loc string) string {
		return strings.Replace(ruleDoc(imp(bpmnType, ns, loc), startEnd), `targetNamespace="t"`, `targetNamespace="`+ns+`"`, 1)
	}
	assert.Empty(t, validateRules(t, doc("apart.bpmn"), files))
	assert.Equal(t, []string{"EXT.002"}, validateRules(t, doc("same.bpmn"), files))
	// Deploy has no documents to read: the import is checked for its
	// attributes only.
	_, err := newEngine(t).Deploy("v.bpmn", []byte(doc("same.bpmn")))
	require.NoError(t, err)
}
