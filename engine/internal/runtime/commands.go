// Commands: requests from outside that an instance's loop answers.

package runtime

// cmdOp is the operation of a command.
type cmdOp uint8

const (
	cmdCompleteJob cmdOp = iota + 1
	cmdFailJob
	cmdThrowError
	cmdCancel
	cmdTokens
	cmdIncidents
	cmdResolveIncident
	cmdHistory
	cmdCheckpoint
	cmdActivateJob
	cmdUpdateRetries
	cmdSetVariables
	cmdScopeVariables
	cmdModify
	cmdActivateAdHoc
	cmdDehydrate
	cmdChoose
)

// readOnly reports whether the operation only reads the instance (a
// dehydration changes how it is kept, not its state).
func (op cmdOp) readOnly() bool {
	return op == cmdTokens || op == cmdIncidents || op == cmdHistory || op == cmdCheckpoint || op == cmdScopeVariables ||
		op == cmdDehydrate
}

// command is a request from outside handled by the loop. The loop answers
// on reply exactly once.
type command struct {
	op      cmdOp
	key     int64
	vars    map[string]any
	retries int
	code    string
	msg     string
	// job carries the job-worker fields of a command (activation.go).
	job JobArgs
	// scope and local say where cmdSetVariables and cmdScopeVariables
	// work (setvars.go).
	scope int
	local bool
	// modify is cmdModify's modification (modify.go).
	modify *Modification
	reply  chan error
	// answered is set once the loop has sent on reply.
	answered bool

	tokens    []Token
	incidents []Incident
	history   []Event

	activated *Job // cmdActivateJob: the job as activated

	index *planIndex // cmdCheckpoint: the plan's names
	doc   *InstDoc   // cmdCheckpoint: the instance's state
	from  int        // cmdCheckpoint: the first history record to write

	ids []string // cmdActivateAdHoc: the elements to activate (msg names the ad-hoc sub-process); cmdChoose: the flows chosen

	token int // cmdChoose: the token waiting for the choice
}

// command applies a request from outside and answers it.
func (inst *Instance) command(c *command) {
	var err error
	switch c.op {
	case cmdCompleteJob:
		err = inst.completeJob(c)
	case cmdFailJob:
		err = inst.failJob(c)
	case cmdThrowError:
		err = inst.throwError(c)
	case cmdCancel:
		inst.stopAll(Terminated, c.msg)
	case cmdTokens:
		c.tokens = inst.tokenSnapshot()
	case cmdIncidents:
		for _, k := range sortedKeys(inst.incidents) {
			c.incidents = append(c.incidents, inst.incidents[k].incident)
		}
	case cmdResolveIncident:
		err = inst.resolveIncident(c.key)
	case cmdHistory:
		c.history = inst.expandHistory()
	case cmdCheckpoint:
		c.doc, err = inst.checkpoint(c.index, c.from)
	case cmdActivateAdHoc:
		err = inst.activateAdHocCmd(c.msg, c.ids)
	case cmdActivateJob:
		err = inst.activateJob(c)
	case cmdUpdateRetries:
		err = inst.updateRetries(c)
	case cmdSetVariables:
		err = inst.setVariables(c)
	case cmdScopeVariables:
		err = inst.scopeVariables(c)
	case cmdModify:
		err = inst.modify(c)
	case cmdChoose:
		err = inst.choose(c)
	case cmdDehydrate:
		// Answered at the next idle point, once dry (atIdle), and counted
		// as running work until then, so that Settle waits for it.
		inst.dryReqs = append(inst.dryReqs, c)
		inst.eng.busy.add(1)
		return
	}
	inst.answer(c, err)
}

// answer sends a command's answer, once.
func (inst *Instance) answer(c *command, err error) {
	c.answered = true
	c.reply <- err
}

func (inst *Instance) tokenSnapshot() []Token {
	out := make([]Token, 0, len(inst.tokens))
	for _, id := range sortedKeys(inst.tokens) {
		tv := inst.tokens[id]
		if tv.node == nil {
			continue
		}
		tok := Token{ID: id, ElementID: tv.node.ID, Waiting: tv.wait, JobKey: tv.jobKey, IncidentKey: tv.incident}
		if tv.wait == WaitChoice {
			tok.Choice = choiceAt(&inst.plan.nodes[tv.node.Index], tv.scope.visible)
		}
		out = append(out, tok)
	}
	return out
}
