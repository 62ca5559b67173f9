// Command extism runs an order process on flowtrack's Extism plug-in
// (wasm/EXTISM.md) with the Extism Go SDK and nothing of flowtrack on the
// host side: every operation is a plug-in function that takes the JSON
// request and returns the JSON response, as in any language Extism
// serves. main.mjs makes the same calls from Node, and the README's "Use
// flowtrack from any language" shows them in Python, Rust and Java. It
// exits non-zero if the order does not end as the model says it must.
//
//	make wasm && go run ./examples/extism
package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"log"

	extism "github.com/extism/go-sdk"
)

//go:embed order-payment.bpmn
var orderXML string

func main() {
	plugin := flag.String("plugin", "host/flowtrack.extism.wasm", "the plug-in (make wasm builds it)")
	flag.Parse()
	if err := run(*plugin); err != nil {
		log.Fatal("example: ", err)
	}
	fmt.Println("example: ok")
}

func run(path string) error {
	ctx := context.Background()
	manifest := extism.Manifest{Wasm: []extism.Wasm{extism.WasmFile{Path: path}}}
	p, err := extism.NewPlugin(ctx, manifest, extism.PluginConfig{EnableWasi: true}, nil)
	if err != nil {
		return err
	}
	defer p.Close(ctx)

	// call runs one operation and returns the result of a response with
	// "ok": true, or the response's error code and message.
	call := func(op string, req any) (json.RawMessage, error) {
		in, err := json.Marshal(req)
		if err != nil {
			return nil, err
		}
		_, out, err := p.Call(op, in)
		if err != nil {
			return nil, err // the plug-in trapped: discard it
		}
		var res struct {
			OK     bool            `json:"ok"`
			Result json.RawMessage `json:"result"`
			Error  struct{ Code, Message string }
		}
		if err := json.Unmarshal(out, &res); err != nil {
			return nil, err
		}
		if !res.OK {
			return nil, fmt.Errorf("%s: %s: %s", op, res.Error.Code, res.Error.Message)
		}
		return res.Result, nil
	}

	if _, err := call("deploy", map[string]any{"name": "order-payment.bpmn", "xml": orderXML}); err != nil {
		return err
	}
	out, err := call("start", map[string]any{"processId": "payment", "variables": map[string]any{"orderId": "A-100", "amount": 40}})
	if err != nil {
		return err
	}
	var started struct{ InstanceKey int64 }
	if err := json.Unmarshal(out, &started); err != nil {
		return err
	}
	// Each call returns once the engine has settled: the check-order job
	// is open now.
	out, err = call("jobs", map[string]any{"instanceKey": started.InstanceKey})
	if err != nil {
		return err
	}
	var jobs []struct {
		Key  int64
		Type string
	}
	if err := json.Unmarshal(out, &jobs); err != nil {
		return err
	}
	if len(jobs) != 1 || jobs[0].Type != "check-order" {
		return fmt.Errorf("want one check-order job, got %+v", jobs)
	}
	if _, err := call("complete_job", map[string]any{"jobKey": jobs[0].Key, "variables": map[string]any{"valid": true}}); err != nil {
		return err
	}
	if _, err := call("publish_message", map[string]any{"name": "payment", "correlationKey": "A-100", "variables": map[string]any{"paidAmount": 40}}); err != nil {
		return err
	}
	out, err = call("instance", map[string]any{"instanceKey": started.InstanceKey})
	if err != nil {
		return err
	}
	var inst struct {
		State     string
		Variables map[string]any
	}
	if err := json.Unmarshal(out, &inst); err != nil {
		return err
	}
	fmt.Printf("order A-100: %s %v\n", inst.State, inst.Variables)
	if inst.State != "completed" || inst.Variables["paidAmount"] != 40.0 || inst.Variables["valid"] != true {
		return fmt.Errorf("order ended %s with %v; want completed, valid and paid", inst.State, inst.Variables)
	}
	// Bad input is an error response, not a failed call.
	_, err = call("complete_job", map[string]any{"jobKey": jobs[0].Key})
	if err == nil {
		return fmt.Errorf("completing a job twice succeeded")
	}
	fmt.Println("as expected:", err)
	return nil
}
