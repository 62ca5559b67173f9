package dispatch

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/flowtrack/flowtrack/internal/wire"
)

// FuzzRequest sends arbitrary bytes as the request of the operations that
// take variables and keys (start, publish_message, broadcast_signal,
// complete_job, call) to a module with the order process deployed. Every
// answer must be a well-formed envelope, ok or with an error code, and the
// module must still start and work an instance afterwards: bad input loses
// nothing and never traps (issue #22). Each input also goes through the
// fast decoders of the hot requests, which must accept only what the
// strict decoder accepts, with the same request (sameAsStrict).
func FuzzRequest(f *testing.F) {
	xml, err := os.ReadFile("../../engine/testdata/order.bpmn")
	if err != nil {
		f.Fatal(err)
	}
	deploy, _ := json.Marshal(map[string]any{"name": "order.bpmn", "xml": string(xml)})
	ops := []string{"start", "publish_message", "broadcast_signal", "complete_job", "call"}
	for i, seed := range []string{
		`{"processId":"order","variables":{"amount":5}}`,
		`{"name":"paid","correlationKey":"k","variables":{"a":[1,{"b":null}]},"ttl":"PT1M"}`,
		`{"name":"s","variables":{"x":"\u00e9\ud83d\ude00"}}`,
		`{"jobKey":1,"variables":{"deep":[[[[[[[[1]]]]]]]]}}`,
		`{"op":"start","request":{"processId":"order","PROCESSID":"x"}}`,
		`{"processId":"order","variables":{"a":1,"a":2}}`,
		`{"processId":"order","variables":{"n":1e400}}`,
		`[{"processId":"order"}]`,
		`{"jobKey":7,"variables":{"s":"\n\u00e9","f":-1.25e-9,"t":true,"z":[]}}`,
		`{"byMs":1.5}`,
		`{"name":"m","ttlMs":100,"messageId":"x","correlationKey":"c"}`,
	} {
		f.Add(uint8(i), []byte(seed))
	}
	f.Fuzz(func(t *testing.T, which uint8, req []byte) {
		sameAsStrict(t, req)
		m := New()
		defer func() { _ = m.eng.Close(context.Background()) }()
		if env := envelope(t, m.Call("deploy", deploy)); env["ok"] != true {
			t.Fatalf("deploy failed: %v", env)
		}
		op := ops[int(which)%len(ops)]
		env := envelope(t, m.Call(op, req))
		if env["ok"] != true {
			e, _ := env["error"].(map[string]any)
			if code, _ := e["code"].(string); code == "" || code == string(wire.CodeInternal) {
				t.Fatalf("%s %q: want ok or a client error code, got %v", op, req, env)
			}
		}
		env = envelope(t, m.Call("start", []byte(`{"processId":"order","variables":{"amount":5}}`)))
		if env["ok"] != true {
			t.Fatalf("after %s %q the module no longer starts instances: %v", op, req, env)
		}
	})
}

// envelope decodes a response, which must be JSON with the envelope's
// fields whatever the request was.
func envelope(t *testing.T, resp []byte) map[string]any {
	t.Helper()
	var env map[string]any
	// Numbers as their text: a variable may hold one no float64 can
	// (1E+400), which is valid JSON all the same.
	dec := json.NewDecoder(bytes.NewReader(resp))
	dec.UseNumber()
	if err := dec.Decode(&env); err != nil {
		t.Fatalf("response is not JSON: %v: %q", err, resp)
	}
	for _, k := range []string{"ok", "events", "now"} {
		if _, ok := env[k]; !ok {
			t.Fatalf("response has no %q: %q", k, resp)
		}
	}
	return env
}
