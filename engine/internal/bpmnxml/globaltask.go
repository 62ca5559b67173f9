package bpmnxml

import "github.com/flowtrack/flowtrack/engine/internal/model"

// globalTaskKinds maps the BPMN global tasks (reusable task definitions at
// the definitions level) to the kind of task they are.
var globalTaskKinds = map[string]model.Kind{
	"globalTask":             model.KindTask,
	"globalScriptTask":       model.KindScriptTask,
	"globalUserTask":         model.KindUserTask,
	"globalManualTask":       model.KindManualTask,
	"globalBusinessRuleTask": model.KindBusinessRuleTask,
}

// calledGlobalTask returns the global task a bpmn:callActivity calls, or
// nil when it calls a process. BPMN 2.0 (10.2.5) lets a call activity
// call a global task as well as a process: the call activity then runs
// that task in its place, so it is imported as a node of the task's kind
// under the call activity's id, flows, boundary events and loop
// characteristics, with what the global task says (globalTask reads it).
// A zeebe:calledElement names a process, never a global task.
func (b *builder) calledGlobalTask(e *element) *element {
	if e.local != "callActivity" {
		return nil
	}
	if ext := e.child(nsBPMN, "extensionElements"); ext != nil && ext.child(nsZeebe, "calledElement") != nil {
		return nil
	}
	g, ok := lookup(b.imp.elements, e.get("calledElement"))
	if !ok || g.space != nsBPMN {
		return nil
	}
	if _, ok := globalTaskKinds[g.local]; !ok {
		return nil
	}
	return g
}

// globalTask reads into n, a call activity imported as the task it calls,
// what global task g says: its script, its extension elements, and
// nothing of the call (n calls no process).
func (b *builder) globalTask(n *model.Node, g *element) {
	n.CalledElement = model.Expression{}
	if n.Kind == model.KindScriptTask {
		n.ScriptFormat = g.get("scriptFormat")
		if s := g.child(nsBPMN, "script"); s != nil {
			n.Script = s.content()
		}
	}
	if ext := g.child(nsBPMN, "extensionElements"); ext != nil {
		b.extensions(n, ext)
	}
}
