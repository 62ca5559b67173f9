package runtime

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/flowtrack/flowtrack/engine/internal/expr"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// DefaultRetries is the retries of a job whose task does not say.
const DefaultRetries = 3

// Plan is a deployed process compiled for execution: every expression
// compiled, and per-node execution data kept in slices indexed by
// model.Node.Index. A Plan is immutable and shared by all its instances.
type Plan struct {
	Process *model.Process
	// Key identifies this version of the process; Version counts the
	// deployments of the same process id from 1.
	Key     int64
	Version int

	nodes []nodePlan
	// start is the none start event instances begin at, or nil when the
	// process can only be started by an event.
	start *model.Node
}

// nodePlan is what a track needs to execute one node.
type nodePlan struct {
	node *model.Node
	// conds holds the compiled condition of each outgoing flow, in the
	// order of node.Outgoing; nil where a flow has none.
	conds []*expr.Program
	// join marks a synchronising gateway with more than one incoming flow.
	join bool
	// fork marks a node whose outgoing flows are all taken at once.
	fork bool

	jobType     *expr.Program
	jobTypeName string // the type when no expression is given
	retries     int
	headers     map[string]string
}

// CompileOptions say how to compile a process.
type CompileOptions struct {
	Expr expr.Options
	// Strict rejects job tasks that name no job type.
	Strict bool
}

// Compile turns a validated process into a Plan. Elements the runtime does
// not execute, and expressions that do not compile, are reported as
// *model.Problem values naming the element.
func Compile(p *model.Process, opts CompileOptions) (*Plan, error) {
	plan := &Plan{Process: p, nodes: make([]nodePlan, len(p.Nodes))}
	var errs []error
	problem := func(n string, format string, args ...any) {
		errs = append(errs, &model.Problem{ProcessID: p.ID, ElementID: n, Rule: fmt.Sprintf(format, args...)})
	}
	for _, n := range p.Nodes {
		np := &plan.nodes[n.Index]
		np.node = n
		if err := supported(n); err != nil {
			problem(n.ID, "%s", err)
			continue
		}
		np.conds = make([]*expr.Program, len(n.Outgoing))
		for i, f := range n.Outgoing {
			if f.Condition.IsZero() {
				continue
			}
			prog, err := expr.Compile(f.Condition, expr.Condition, opts.Expr)
			if err != nil {
				problem(f.ID, "condition: %v", err)
				continue
			}
			np.conds[i] = prog
		}
		switch n.Kind {
		case model.KindParallelGateway:
			np.join = len(n.Incoming) > 1
			np.fork = true
		case model.KindStartEvent:
			if len(n.Events) == 0 && n.Parent == nil && plan.start == nil {
				plan.start = n
			}
		}
		if n.Kind.IsJobTask() {
			if err := compileJob(np, opts); err != nil {
				problem(n.ID, "%v", err)
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return plan, nil
}

// supported reports elements the runtime cannot execute yet.
func supported(n *model.Node) error {
	unsupported := func() error { return fmt.Errorf("unsupported element bpmn:%s", n.Kind) }
	switch n.Kind {
	case model.KindStartEvent:
		if len(n.Events) > 0 || n.Parent != nil {
			return fmt.Errorf("unsupported element bpmn:%s with %s trigger", n.Kind, n.Events[0].Kind)
		}
	case model.KindEndEvent:
		for _, d := range n.Events {
			if d.Kind != model.EventTerminate {
				return fmt.Errorf("unsupported element bpmn:%s with %s trigger", n.Kind, d.Kind)
			}
		}
	case model.KindIntermediateThrowEvent:
		if len(n.Events) > 0 {
			return fmt.Errorf("unsupported element bpmn:%s with %s trigger", n.Kind, n.Events[0].Kind)
		}
	case model.KindTask, model.KindManualTask, model.KindExclusiveGateway, model.KindParallelGateway:
	case model.KindServiceTask, model.KindUserTask, model.KindSendTask, model.KindBusinessRuleTask, model.KindScriptTask:
	default:
		return unsupported()
	}
	if len(n.Boundaries) > 0 {
		return fmt.Errorf("unsupported element bpmn:boundaryEvent (id %s)", n.Boundaries[0].ID)
	}
	return nil
}

func compileJob(np *nodePlan, opts CompileOptions) error {
	n := np.node
	np.retries = DefaultRetries
	np.jobTypeName = n.Kind.String()
	if n.Kind == model.KindScriptTask && n.Job == nil {
		np.jobTypeName = "script"
		np.headers = map[string]string{"scriptFormat": n.ScriptFormat, "script": n.Script}
		return nil
	}
	if n.Job == nil || n.Job.Type.IsZero() {
		if opts.Strict {
			return fmt.Errorf("%s has no job type (strict mode requires zeebe:taskDefinition or camunda:topic)", n.Kind)
		}
	} else {
		prog, err := expr.Compile(n.Job.Type, expr.Static, opts.Expr)
		if err != nil {
			return fmt.Errorf("job type: %w", err)
		}
		np.jobType = prog
	}
	if n.Job == nil {
		return nil
	}
	if !n.Job.Retries.IsZero() {
		r, err := strconv.Atoi(n.Job.Retries.Text)
		if err != nil || r < 0 {
			return fmt.Errorf("job retries %q is not a non-negative whole number", n.Job.Retries.Text)
		}
		np.retries = r
	}
	if len(n.Job.Headers) > 0 {
		np.headers = make(map[string]string, len(n.Job.Headers))
		for _, h := range n.Job.Headers {
			np.headers[h.Key] = h.Value
		}
	}
	return nil
}
