package runtime

import "github.com/flowtrack/flowtrack/engine/internal/model"

// linked records that tv left the link throw event throw for the link
// catch event of its name, where it goes on. No sequence flow is taken:
// as in Zeebe, the history shows the throw left and the catch entered.
func (inst *Instance) linked(tv *tokenView, throw *model.Node) {
	catch := inst.plan.nodes[throw.Index].link
	inst.recordStep(codeLeft, throw, nil, tv.id)
	tv.node = catch
	tv.atJoin = false
	inst.recordStep(codeEntered, catch, nil, tv.id)
}
