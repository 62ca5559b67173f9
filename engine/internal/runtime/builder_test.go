package runtime

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// graph builds a process for tests from a compact description: nodes as
// "id:kind" and flows as "from>to" or "from>to?condition" or "from>to!"
// (default flow). Kinds are BPMN local names; "terminate" is a terminate
// end event.
type graph struct {
	t     *testing.T
	p     *model.Process
	nodes map[string]*model.Node
}

func newGraph(t *testing.T, id string) *graph {
	return &graph{t: t, p: &model.Process{ID: id, Executable: true}, nodes: map[string]*model.Node{}}
}

func (g *graph) node(spec ...string) *graph {
	for _, s := range spec {
		id, kindName, _ := strings.Cut(s, ":")
		n := &model.Node{ID: id, Name: id}
		if kindName == "terminate" {
			n.Kind = model.KindEndEvent
			n.Events = []*model.EventDefinition{{Kind: model.EventTerminate}}
		} else {
			k, ok := model.KindByName(kindName)
			require.True(g.t, ok, "kind %s", kindName)
			n.Kind = k
		}
		g.nodes[id] = n
		g.p.Nodes = append(g.p.Nodes, n)
		g.p.Top = append(g.p.Top, n)
	}
	return g
}

func (g *graph) flow(spec ...string) *graph {
	for _, s := range spec {
		isDefault := strings.HasSuffix(s, "!")
		s = strings.TrimSuffix(s, "!")
		edge, cond, _ := strings.Cut(s, "?")
		from, to, ok := strings.Cut(edge, ">")
		require.True(g.t, ok, "flow %s", s)
		src, dst := g.nodes[from], g.nodes[to]
		require.NotNil(g.t, src, from)
		require.NotNil(g.t, dst, to)
		f := &model.Flow{ID: from + "_" + to, Source: src, Target: dst, Condition: model.Expression{Text: cond}, IsDefault: isDefault}
		src.Outgoing = append(src.Outgoing, f)
		dst.Incoming = append(dst.Incoming, f)
		if isDefault {
			src.Default = f
		}
		g.p.Flows = append(g.p.Flows, f)
	}
	return g
}

func (g *graph) plan(opts CompileOptions) *Plan {
	require.NoError(g.t, g.p.Index())
	plan, err := Compile(g.p, opts)
	require.NoError(g.t, err)
	return plan
}
