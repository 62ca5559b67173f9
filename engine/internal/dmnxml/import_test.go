package dmnxml

import (
	"errors"
	"strings"
	"testing"

	"github.com/flowtrack/flowtrack/engine/internal/model"
)

func TestImport_EveryVersion(t *testing.T) {
	for ns, version := range namespaces {
		doc := `<definitions xmlns="` + ns + `" id="m" name="m" namespace="urn:m">` +
			`<decision id="d" name="d"><variable name="d" typeRef="feel:number"/>` +
			`<decisionTable hitPolicy="COLLECT" aggregation="SUM"><input><inputExpression><text>x</text></inputExpression>` +
			`<inputValues><text>1, 2</text></inputValues></input><output name="o"/>` +
			`<rule id="r"><inputEntry><text>1</text></inputEntry><outputEntry><text>5</text></outputEntry></rule></decisionTable></decision></definitions>`
		d, err := Import("m.dmn", []byte(doc))
		if err != nil {
			t.Fatalf("DMN %s: %v", version, err)
		}
		if !IsDMN([]byte(doc)) {
			t.Errorf("DMN %s: IsDMN false", version)
		}
		tab, ok := d.Decisions[0].Logic.(*model.DecisionTable)
		if !ok || tab.Aggregation != "SUM" || tab.Inputs[0].InputValues != "1, 2" || tab.Rules[0].ID != "r" || d.Decisions[0].Variable.TypeRef != "number" {
			t.Errorf("DMN %s: %+v", version, d.Decisions[0])
		}
	}
	if IsDMN([]byte(`<bpmn:definitions xmlns:bpmn="http://www.omg.org/spec/BPMN/20100524/MODEL"/>`)) {
		t.Error("BPMN is DMN")
	}
}

func TestImport_ErrorsSayWhere(t *testing.T) {
	ns := "https://www.omg.org/spec/DMN/20230324/MODEL/"
	for _, c := range []struct {
		name, doc, says string
		line            int
	}{
		{"malformed", "<definitions xmlns=\"" + ns + "\">\n<decision>\n</definitions>", "malformed XML", 3},
		{"not DMN", `<definitions xmlns="urn:other"/>`, "no DMN", 1},
		{"hit policy", "<definitions xmlns=\"" + ns + "\">\n<decision id=\"d\">\n  <decisionTable hitPolicy=\"MOST\"><output/></decisionTable></decision></definitions>", `unknown hit policy "MOST"`, 3},
		{"columns", "<definitions xmlns=\"" + ns + "\"><decision id=\"d\"><decisionTable><input><inputExpression><text>x</text></inputExpression></input><output/>\n" +
			"<rule id=\"r1\"><outputEntry><text>1</text></outputEntry></rule></decisionTable></decision></definitions>", "0 input entries for 1 inputs", 2},
		{"aggregation", "<definitions xmlns=\"" + ns + "\"><decision id=\"d\"><decisionTable hitPolicy=\"FIRST\" aggregation=\"SUM\"><output/></decisionTable></decision></definitions>", "only COLLECT", 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Import("m.dmn", []byte(c.doc))
			var ie *Error
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.says) || ie.Line != c.line || !strings.HasPrefix(err.Error(), "m.dmn:") {
				t.Errorf("got %v (line %d), want m.dmn:%d saying %q", err, lineOf(ie), c.line, c.says)
			}
		})
	}
}

func lineOf(e *Error) int {
	if e == nil {
		return 0
	}
	return e.Line
}
