package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"

	"github.com/flowtrack/flowtrack/internal/wire"
)

// deepArray is JSON of depth levels of arrays around 1.
func deepArray(depth int) string {
	return strings.Repeat("[", depth) + "1" + strings.Repeat("]", depth)
}

// TestModule_StrictRequests checks that requests are decoded strictly:
// exact-case field names, no unknown fields, no duplicate keys at any
// level, each a BAD_REQUEST naming the key, and no variable nested deeper
// than engine.MaxVariableDepth, a BAD_VARIABLES (as natively) naming the
// limit (a BAD_REQUEST through call, whose scan meets it first); and that
// the module runs a normal instance afterwards.
func TestModule_StrictRequests(t *testing.T) {
	m := New()
	t.Cleanup(func() { _ = m.eng.Close(context.Background()) })
	deployOrder(t, m)
	limit := fmt.Sprint(engine.MaxVariableDepth)
	for _, tc := range []struct {
		op, req, names string
		code           wire.Code
	}{
		{"start", `{"PROCESSID":"order"}`, `"PROCESSID"`, wire.CodeBadRequest},
		{"start", `{"processid":"order"}`, `"processid"`, wire.CodeBadRequest},
		{"start", `{"processId":"order","extra":1}`, `"extra"`, wire.CodeBadRequest},
		{"start", `{"processId":"order","processId":"other"}`, `"processId"`, wire.CodeBadRequest},
		{"start", `{"processId":"order","variables":{"a":1,"a":2}}`, `"a"`, wire.CodeBadRequest},
		{"start", `{"processId":"order","variables":{"a":{"b":1,"\u0062":2}}}`, `"b"`, wire.CodeBadRequest},
		{"publish_message", `{"name":"m","Name":"n"}`, `"Name"`, wire.CodeBadRequest},
		{"complete_job", `{"jobKey":1,"JobKey":2}`, `"JobKey"`, wire.CodeBadRequest},
		{"call", `{"op":"start","request":{"processId":"order","PROCESSID":"x"}}`, `"PROCESSID"`, wire.CodeBadRequest},
		{"call", `{"op":"start","OP":"now"}`, `"OP"`, wire.CodeBadRequest},
		{"start", `{"processId":"order","variables":{"deep":` + deepArray(engine.MaxVariableDepth+1) + `}}`, limit, wire.CodeBadVariables},
		{"start", `{"processId":"order","variables":{"deep":` + deepArray(10_000) + `}}`, limit, wire.CodeBadVariables},
		{"start", `{"processId":"order","variables":{"deep":` + deepArray(100_000) + `}}`, limit, wire.CodeBadVariables},
		{"call", `{"op":"start","request":{"processId":"order","variables":{"deep":` + deepArray(engine.MaxVariableDepth+1) + `}}}`, limit, wire.CodeBadRequest},
		{"broadcast_signal", `{"name":"s","variables":{"deep":` + deepArray(engine.MaxVariableDepth+1) + `}}`, limit, wire.CodeBadVariables},
		{"now", deepArray(engine.MaxVariableDepth + 3), limit, wire.CodeBadRequest},
	} {
		env := callT(t, m, tc.op, tc.req)
		require.Equal(t, tc.code, errCode(env), "%s %.80s: %v", tc.op, tc.req, env)
		assert.Contains(t, env["error"].(map[string]any)["message"], tc.names, "%s %.80s", tc.op, tc.req)
	}
	assert.Empty(t, m.eng.Instances(), "nothing started")

	// At the limit, directly and through call, the request is accepted.
	for _, req := range []struct{ op, req string }{
		{"start", `{"processId":"order","variables":{"amount":1,"deep":` + deepArray(engine.MaxVariableDepth) + `}}`},
		{"call", `{"op":"start","request":{"processId":"order","variables":{"amount":1,"deep":` + deepArray(engine.MaxVariableDepth) + `}}}`},
	} {
		env := callT(t, m, req.op, req.req)
		require.Equal(t, true, env["ok"], "%v", env)
	}
	completeAll(t, m)
	for _, inst := range m.eng.Instances() {
		t.Errorf("instance %d still %s", inst.Key(), inst.State())
	}
}

func deployOrder(t *testing.T, m *Module) {
	t.Helper()
	xml, err := os.ReadFile("../../engine/testdata/order.bpmn")
	require.NoError(t, err)
	req, _ := json.Marshal(map[string]any{"name": "order.bpmn", "xml": string(xml)})
	env := callT(t, m, "deploy", string(req))
	require.Equal(t, true, env["ok"], "%v", env)
}

// completeAll completes every job until none is left.
func completeAll(t *testing.T, m *Module) {
	t.Helper()
	for range 100 {
		jobs := m.eng.Jobs(engine.JobFilter{})
		if len(jobs) == 0 {
			return
		}
		for _, j := range jobs {
			env := callT(t, m, "complete_job", fmt.Sprintf(`{"jobKey":%d}`, j.Key))
			require.Equal(t, true, env["ok"], "%v", env)
		}
	}
	t.Fatal("jobs never ran out")
}

func TestScanRequest(t *testing.T) {
	for _, tc := range []struct {
		data      string
		duplicate string
		deep      bool
		keys      []string
	}{
		{`{"a":"{[{[","b":"\"}]","c":{"a":1}}`, "", false, []string{"a", "b", "c"}},
		{`{"a\"b":1,"a\"b":2}`, `a"b`, false, []string{`a"b`, `a"b`}},
		{`{"x":[{"k":1},{"k":2}]}`, "", false, []string{"x"}},
		{`{"x":{"k":1,"y":{"k":2},"k":3}}`, "k", false, []string{"x"}},
		{`[[[[1]]]]`, "", true, nil},
		{`{"x":[[[1]]]}`, "", true, []string{"x"}},
		{`{"x":"unterminated`, "", false, []string{"x"}},
		{`}}]]{"`, "", false, nil},
	} {
		s := scanRequest([]byte(tc.data), 3)
		assert.Equal(t, tc.duplicate, string(s.duplicate), tc.data)
		assert.Equal(t, tc.deep, s.deep, tc.data)
		var keys []string
		for _, k := range s.keys {
			keys = append(keys, string(k))
		}
		assert.Equal(t, tc.keys, keys, tc.data)
	}
	many := `{`
	for i := range 40 {
		many += fmt.Sprintf(`"k%d":%d,`, i, i)
	}
	assert.Equal(t, "k7", string(scanRequest([]byte(many+`"k7":0}`), 4).duplicate), "found among many keys")
	assert.Nil(t, scanRequest([]byte(many+`"k40":0}`), 4).duplicate)
}
