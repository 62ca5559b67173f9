// Command native plays the conformance scenarios on the native engine and
// prints each scenario's normalized observations as JSON, so the SDK's
// conformance test (sdk-js/conformance/run.mjs) can check that the
// WebAssembly module driven from JavaScript observes exactly the same.
//
//	go run ./sdk-js/conformance/native conformance/scenarios
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/flowtrack/flowtrack/conformance"
)

// outcome is one scenario's native result: observations, or the error that
// stopped the run.
type outcome struct {
	Observations []conformance.Observation `json:"observations,omitempty"`
	Mismatches   []string                  `json:"mismatches,omitempty"`
	Error        string                    `json:"error,omitempty"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: native <scenario dir>")
		os.Exit(2)
	}
	scenarios, err := conformance.Load(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out := map[string]outcome{}
	for _, s := range scenarios {
		out[s.Name] = play(s)
	}
	enc := json.NewEncoder(os.Stdout)
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func play(s *conformance.Scenario) outcome {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := conformance.NewNative()
	if err != nil {
		return outcome{Error: err.Error()}
	}
	defer r.Close(ctx)
	res, err := conformance.Run(ctx, r, s)
	if err != nil {
		return outcome{Error: err.Error()}
	}
	return outcome{Observations: res.Observations, Mismatches: res.Mismatches}
}
