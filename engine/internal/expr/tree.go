package expr

import (
	"fmt"

	"github.com/expr-lang/expr/ast"
)

// maxTreeDepth bounds the depth of an expression's syntax tree. expr-lang's
// checker and compiler recurse once or more per level, and inside the
// WebAssembly module every Go call is a call on the host's own stack, the
// smallest of which (Node's) overflows near a thousand levels of a member
// path. Chains that the parsers read with loops, not recursion (a.b.c,
// a[1][2], 1 + 2 + 3), are bounded here.
const maxTreeDepth = 200

// walkTree calls visit for every node of the tree at root, parents before
// children, with the node's depth (root is 1). It uses its own stack, not
// recursion, and does not descend below maxTreeDepth: it returns the first
// node found deeper, or nil.
func walkTree(root *ast.Node, visit func(n *ast.Node, depth int)) (tooDeep ast.Node) {
	type entry struct {
		n     *ast.Node
		depth int
	}
	stack := []entry{{root, 1}}
	for len(stack) > 0 {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if *e.n == nil {
			continue
		}
		if e.depth > maxTreeDepth {
			return *e.n
		}
		visit(e.n, e.depth)
		kids := children(*e.n)
		for i := len(kids) - 1; i >= 0; i-- {
			stack = append(stack, entry{kids[i], e.depth + 1})
		}
	}
	return nil
}

// children returns pointers to the child slots of the node kinds the
// parsers build.
func children(n ast.Node) []*ast.Node {
	switch n := n.(type) {
	case *ast.NilNode, *ast.IdentifierNode, *ast.FloatNode, *ast.BoolNode, *ast.StringNode,
		*ast.ConstantNode, *ast.PointerNode:
		return nil
	case *ast.CallNode:
		out := []*ast.Node{&n.Callee}
		for i := range n.Arguments {
			out = append(out, &n.Arguments[i])
		}
		return out
	case *ast.BuiltinNode:
		out := make([]*ast.Node, len(n.Arguments))
		for i := range n.Arguments {
			out[i] = &n.Arguments[i]
		}
		return out
	case *ast.PredicateNode:
		return []*ast.Node{&n.Node}
	case *ast.VariableDeclaratorNode:
		return []*ast.Node{&n.Value, &n.Expr}
	case *ast.SequenceNode:
		out := make([]*ast.Node, len(n.Nodes))
		for i := range n.Nodes {
			out[i] = &n.Nodes[i]
		}
		return out
	case *ast.ConditionalNode:
		return []*ast.Node{&n.Cond, &n.Exp1, &n.Exp2}
	case *ast.ArrayNode:
		out := make([]*ast.Node, len(n.Nodes))
		for i := range n.Nodes {
			out[i] = &n.Nodes[i]
		}
		return out
	case *ast.MapNode:
		out := make([]*ast.Node, len(n.Pairs))
		for i := range n.Pairs {
			out[i] = &n.Pairs[i]
		}
		return out
	case *ast.PairNode:
		return []*ast.Node{&n.Key, &n.Value}
	}
	panic(fmt.Sprintf("expr: internal: no children for %T", n))
}
