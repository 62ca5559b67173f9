package expr

import (
	"fmt"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/vm"
)

// Why a meter in an expr-lang variable?
//
// Every operator and function of both dialects is a call to one of our
// functions (see build.go), so counting the work of an evaluation means
// counting in those calls. They need per-evaluation state, but a Program
// is shared by every goroutine that evaluates it. Copying the variables
// into a new environment holding the meter would cost every evaluation a
// map copy. Instead every call gets the meter as its first argument, read
// from expr-lang variable 0 (meterVar): the program declares it with
// "let", the store of the declaration is removed from the bytecode, and
// run sets the slot on the pooled VM before running. expr-lang's own
// memory budget, which counts loop iterations and the entries of the lists
// and contexts it builds, is set to the step budget.

// meterVar is the expr-lang variable holding the evaluation's *meter.
const meterVar = funcPrefix + "meter"

// meter counts one evaluation's steps and bytes against its budgets.
type meter struct {
	steps, bytes       int64
	maxSteps, maxBytes int64
	// calls is how deep user function calls are nested now.
	calls int
}

// step charges n steps.
func (m *meter) step(n int64) error {
	m.steps += n
	if m.steps > m.maxSteps {
		return &BudgetError{Budget: "step", Limit: m.maxSteps}
	}
	return nil
}

// read charges the steps of reading v whole: one per value, list or
// context entry and 64 bytes of text. It walks with its own stack and
// stops at the budget, so its own cost is bounded by it.
func (m *meter) read(v any) error {
	switch x := v.(type) {
	case []any, map[string]any:
	case string:
		return m.step(1 + int64(len(x))/64)
	default:
		return m.step(1)
	}
	stack := []any{v}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := int64(1)
		switch x := v.(type) {
		case string:
			n += int64(len(x)) / 64
		case []any:
			stack = append(stack, x...)
		case map[string]any:
			for k, e := range x {
				n += int64(len(k)) / 64
				stack = append(stack, e)
			}
		}
		if err := m.step(n); err != nil {
			return err
		}
	}
	return nil
}

// alloc charges the bytes of a value a function yields: its text, or 16
// bytes per list entry and 16 plus the key per context entry. Entries are
// not followed: they were charged when they were made.
func (m *meter) alloc(v any) error {
	m.bytes += allocSize(v)
	if m.bytes > m.maxBytes {
		return &BudgetError{Budget: "byte", Limit: m.maxBytes}
	}
	return nil
}

// allocSize is the size alloc charges for v.
func allocSize(v any) int64 {
	var n int64
	switch x := v.(type) {
	case string:
		n = int64(len(x))
	case []any:
		n = 16 * int64(len(x))
	case map[string]any:
		for k := range x {
			n += 16 + int64(len(k))
		}
	}
	return n
}

// metered wraps f for a program: the call's first argument is the
// evaluation's meter. A call costs a step; unless f only looks at or
// picks from its arguments (view), it also costs reading its arguments
// and the bytes of its result.
func metered(f fnInfo) func(...any) (any, error) {
	return func(args ...any) (any, error) {
		m := args[0].(*meter)
		withMeter := args
		args = args[1:]
		if err := m.step(1); err != nil {
			return nil, err
		}
		if f.view {
			if _, list := args[0].([]any); !f.projects || !list {
				return f.fn(args...)
			}
		}
		var size int64
		for _, a := range args {
			if err := m.read(a); err != nil {
				return nil, err
			}
			size += allocSize(a)
		}
		// Most results are no larger than the arguments together (a
		// concatenation is as large), so a call that could not afford that
		// is refused before it allocates.
		if m.bytes+size > m.maxBytes {
			return nil, &BudgetError{Budget: "byte", Limit: m.maxBytes}
		}
		var out any
		var err error
		if f.calls {
			out, err = f.fn(withMeter...)
		} else {
			out, err = f.fn(args...)
		}
		if err != nil {
			return nil, err
		}
		if err := m.alloc(out); err != nil {
			return nil, err
		}
		return out, nil
	}
}

// addMeter gives every call in the tree at root the meter as its first
// argument and returns root wrapped in the declaration of meterVar.
func addMeter(root ast.Node) ast.Node {
	seen := map[*ast.CallNode]bool{}
	walkTree(&root, func(n *ast.Node, _ int) {
		call, ok := (*n).(*ast.CallNode)
		if !ok || seen[call] {
			return
		}
		seen[call] = true
		m := at(&ast.IdentifierNode{Value: meterVar}, call.Location().From, call.Location().To)
		call.Arguments = append([]ast.Node{m}, call.Arguments...)
	})
	loc := root.Location()
	return at(&ast.VariableDeclaratorNode{
		Name:  meterVar,
		Value: at(&ast.NilNode{}, loc.From, loc.To),
		Expr:  root,
	}, loc.From, loc.To)
}

// keepMeter removes the store that declares meterVar, the program's first
// two instructions, so that the slot keeps the meter run puts there.
func keepMeter(prog *vm.Program) error {
	if len(prog.Bytecode) < 2 || prog.Bytecode[0] != vm.OpNil || prog.Bytecode[1] != vm.OpStore || prog.Arguments[1] != 0 {
		return fmt.Errorf("%w: program does not start by declaring the meter", errInternal)
	}
	prog.Bytecode[1] = vm.OpPop
	return nil
}
