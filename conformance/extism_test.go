package conformance

import (
	"context"
	"errors"
	"os"
	"sync"

	"github.com/flowtrack/flowtrack/host/extism"
)

// The extism runner plays the corpus on the Extism plug-in build
// (wasm/EXTISM.md) in the Extism Go SDK, through the same Go API as the
// host runner, so every observation comes from the plug-in's responses.
func init() { Register(Factory{Name: "extism", New: newExtism}) }

// extismPlugin is the plug-in, which make wasm (go generate ./host) builds,
// compiled once for the test binary.
var extismPlugin = sync.OnceValues(func() (*extism.Plugin, error) {
	wasm, err := os.ReadFile("../host/flowtrack.extism.wasm")
	if err != nil {
		return nil, errors.New("the Extism plug-in is not built: run `make wasm` (or `go generate ./host`): " + err.Error())
	}
	return extism.Compile(context.Background(), wasm)
})

func newExtism() (Runner, error) {
	p, err := extismPlugin()
	if err != nil {
		return nil, err
	}
	e, err := p.New(context.Background())
	if err != nil {
		return nil, err
	}
	return &Host{e: e}, nil
}
