package runtime

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine/internal/expr"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// flowsNode builds a node of kind k with one outgoing flow per condition
// ("" for none, "default" for the default flow) and its plan.
func flowsNode(t *testing.T, k model.Kind, conds ...string) *nodePlan {
	t.Helper()
	n := &model.Node{ID: "n", Kind: k}
	np := &nodePlan{node: n, fork: k == model.KindParallelGateway}
	for i, c := range conds {
		f := &model.Flow{ID: string(rune('a' + i)), Source: n}
		var prog *expr.Program
		switch c {
		case "default":
			f.IsDefault = true
			n.Default = f
		case "":
		default:
			var err error
			prog, err = expr.Compile(model.Expression{Text: c}, expr.Condition, expr.Options{})
			require.NoError(t, err)
			f.Condition = model.Expression{Text: c}
		}
		n.Outgoing = append(n.Outgoing, f)
		np.conds = append(np.conds, prog)
	}
	return np
}

func TestSelectFlows(t *testing.T) {
	vars := func() map[string]any { return map[string]any{"x": 5.0} }
	tests := []struct {
		name    string
		kind    model.Kind
		conds   []string
		want    string // ids of the flows taken
		wantErr string
	}{
		{"activity: unconditional and true taken, false not, default not", model.KindTask, []string{"", "= x > 1", "= x > 9", "default"}, "ab", ""},
		{"activity: default beside an unconditional flow when no condition holds", model.KindTask, []string{"", "= x > 9", "default"}, "ac", ""},
		{"activity: default alone when no condition holds", model.KindTask, []string{"= x > 9", "default"}, "b", ""},
		{"activity: unconditional flows fork", model.KindServiceTask, []string{"", ""}, "ab", ""},
		{"activity: no flow can be taken", model.KindTask, []string{"= x > 9", "= x > 8"}, "", "no outgoing sequence flow"},
		{"event: as an activity", model.KindIntermediateThrowEvent, []string{"", "= x > 9", "default"}, "ac", ""},
		{"exclusive: first that holds", model.KindExclusiveGateway, []string{"= x > 9", "= x > 1", "= x > 2", "default"}, "b", ""},
		{"exclusive: default when none holds", model.KindExclusiveGateway, []string{"= x > 9", "default"}, "b", ""},
		{"exclusive: none and no default", model.KindExclusiveGateway, []string{"= x > 9", "= x > 8"}, "", "no outgoing sequence flow"},
		{"inclusive: every one that holds, not the default", model.KindInclusiveGateway, []string{"= x > 1", "", "= x > 9", "default"}, "ab", ""},
		{"inclusive: default when none holds", model.KindInclusiveGateway, []string{"= x > 9", "default"}, "b", ""},
		{"parallel: all, conditions ignored", model.KindParallelGateway, []string{"= x > 9", "= x > 8"}, "ab", ""},
		{"condition error names the flow", model.KindTask, []string{"= y > 1", ""}, "", "sequence flow a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := selectFlows(flowsNode(t, tt.kind, tt.conds...), vars)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			ids := ""
			for _, f := range got {
				ids += f.ID
			}
			assert.Equal(t, tt.want, ids)
		})
	}
}
