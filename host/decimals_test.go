package host_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
)

// Decimals cross the module boundary with every digit, both ways: a
// number no float64 holds travels as its JSON text and arrives as the
// json.Number a native engine gives (engine/decimals_test.go), one a
// float64 holds arrives as that float64.
func TestDecimals_ExactAcrossTheModule(t *testing.T) {
	ctx := ctxT(t)
	e := newHost(t)
	xml, err := os.ReadFile("../engine/testdata/decimals.bpmn")
	require.NoError(t, err)
	_, err = e.Deploy(ctx, "decimals.bpmn", xml)
	require.NoError(t, err)
	var seen []map[string]any
	defer e.Subscribe(func(ev engine.Event) {
		if ev.Variables != nil {
			seen = append(seen, ev.Variables)
		}
	})()
	key, err := e.Start(ctx, "decimals", map[string]any{"big": json.Number("12345678901234567890")})
	require.NoError(t, err)

	vars, err := e.Variables(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, 0.3, vars["sum"], "0.1 + 0.2 is exactly 0.3, a float64")
	assert.Equal(t, 1005.0, vars["scaled"])
	assert.Equal(t, json.Number("0.3333333333333333333333333333333333"), vars["third"])
	assert.Equal(t, json.Number("12345678901234567891"), vars["next"])
	assert.Equal(t, []any{json.Number("12345678901234567890"), 2.5}, vars["list"])

	jobs, err := e.Jobs(ctx, engine.JobFilter{Type: "work"})
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	assert.Equal(t, json.Number("12345678901234567890"), jobs[0].Variables["bigIn"], "a job's variables keep every digit")
	require.NoError(t, e.CompleteJob(ctx, jobs[0].Key, map[string]any{"paid": json.Number("98765432109876543210.5"), "count": int64(1<<60 + 1),
		"tiny": json.Number("1e-400"), "huge": json.Number("2.5E+400")}))

	doc, err := e.Checkpoint(ctx)
	require.NoError(t, err)
	assert.Contains(t, string(doc), `"count":1152921504606846977`, "the module's document holds the digits")
	require.NoError(t, e.Restore(ctx, doc))
	again, err := e.Checkpoint(ctx)
	require.NoError(t, err)
	assert.Equal(t, string(doc), string(again), "a restore reads back every digit, byte for byte")

	require.NoError(t, e.PublishMessage(ctx, engine.Message{Name: "paid", CorrelationKey: "12345678901234567891",
		Variables: map[string]any{"fee": json.Number("0.10000000000000000001")}}))
	info, err := e.Instance(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, info.State, "the correlation key is next's full text")
	assert.Equal(t, json.Number("98765432109876543210.5"), info.Variables["paid"])
	assert.Equal(t, json.Number("1152921504606846977"), info.Variables["count"])
	assert.Equal(t, json.Number("0.10000000000000000001"), info.Variables["fee"])
	assert.Equal(t, json.Number("1E-400"), info.Variables["tiny"], "a short number beyond float64's range, written with an exponent")
	assert.Equal(t, json.Number("2.5E+400"), info.Variables["huge"])

	var fee any
	for _, v := range seen {
		if f, ok := v["fee"]; ok {
			fee = f
		}
	}
	assert.Equal(t, json.Number("0.10000000000000000001"), fee, "observers see the digits too")

	hist, err := e.History(ctx, key)
	require.NoError(t, err)
	var paid any
	for _, ev := range hist {
		if p, ok := ev.Variables["paid"]; ok {
			paid = p
		}
	}
	assert.Equal(t, json.Number("98765432109876543210.5"), paid, "history records keep every digit")
}
