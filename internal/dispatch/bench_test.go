package dispatch

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/flowtrack/flowtrack/internal/wire"
)

// BenchmarkModule_StartStraight10 measures one start call inside the
// module (decode, run, settle, encode), without a host: run it compiled to
// wasip1 to see what the module itself costs per call.
func BenchmarkModule_StartStraight10(b *testing.B) {
	xml, err := os.ReadFile("../../../shared/workloads/straight.bpmn")
	if err != nil {
		b.Skipf("workload: %v", err)
	}
	for _, events := range []bool{true, false} {
		name := map[bool]string{true: "events", false: "noEvents"}[events]
		b.Run(name, func(b *testing.B) {
			m := New()
			defer m.eng.Close(context.Background())
			req, _ := json.Marshal(map[string]any{"name": "straight.bpmn", "xml": string(xml)})
			m.Call("deploy", req)
			m.Call("configure", []byte(`{"events":`+map[bool]string{true: "true", false: "false"}[events]+`}`))
			start := []byte(`{"processId":"straight"}`)
			b.ReportAllocs()
			for b.Loop() {
				m.Call("start", start)
			}
		})
	}
}

// BenchmarkDecode compares strict decoding (the scan for nesting,
// duplicate keys and exact-case names, then encoding/json), its fast path
// (wire.Decoder) and encoding/json alone, on a start request with a few
// variables.
func BenchmarkDecode(b *testing.B) {
	data := []byte(`{"processId":"order","variables":{"amount":250,"customer":{"name":"Ann","tags":["a","b"]},"ok":true}}`)
	var req struct {
		ProcessID string         `json:"processId"`
		Variables map[string]any `json:"variables"`
	}
	b.Run("strict", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := decode("start", data, &req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var req wire.StartRequest
			if !fastStart(data, &req) {
				b.Fatal("fast path declined a plain request")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := decodeJSON("start", data, &req); err != nil {
				b.Fatal(err)
			}
		}
	})
}
