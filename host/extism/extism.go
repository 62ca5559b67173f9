// Package extism runs flowtrack's Extism plug-in build (wasm/EXTISM.md) in
// the Extism Go SDK, behind the same Go API as package host: New returns a
// *host.Engine whose operations are Extism calls of the plug-in's exports.
// Package host encodes every request and decodes every response either
// way, so an Engine over the plug-in answers exactly as one over the
// module of wasm/ABI.md; the conformance corpus checks that.
//
//	p, err := extism.Compile(ctx, wasm) // wasm: host/flowtrack.extism.wasm (make wasm)
//	defer p.Close(ctx)
//	e, err := p.New(ctx)
//	defer e.Close(ctx)
//	e.Deploy(ctx, "order.bpmn", xml)
//
// A program that only wants the JSON operations, in Go or any language
// Extism serves, calls the plug-in directly (examples/extism-go); this
// package is for Go programs that want the typed API over the plug-in.
package extism

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	sdk "github.com/extism/go-sdk"
	"github.com/tetratelabs/wazero"

	"github.com/flowtrack/flowtrack/host"
)

// Plugin is the plug-in compiled once; each New instantiates it afresh.
type Plugin struct{ compiled *sdk.CompiledPlugin }

// Compile compiles the plug-in wasm with WASI, in wazero's compiler (never
// its interpreter, ~300x slower) and a compilation cache on disk under
// os.UserCacheDir()/flowtrack, so that only a process's first Compile of a
// given plug-in compiles from scratch (about a second).
func Compile(ctx context.Context, wasm []byte) (*Plugin, error) {
	rc := wazero.NewRuntimeConfigCompiler()
	if dir, err := os.UserCacheDir(); err == nil {
		if cache, err := wazero.NewCompilationCacheWithDir(filepath.Join(dir, "flowtrack", "wazero")); err == nil {
			rc = rc.WithCompilationCache(cache)
		}
	}
	manifest := sdk.Manifest{Wasm: []sdk.Wasm{sdk.WasmData{Data: wasm}}}
	c, err := sdk.NewCompiledPlugin(ctx, manifest, sdk.PluginConfig{EnableWasi: true, RuntimeConfig: rc}, nil)
	if err != nil {
		return nil, fmt.Errorf("flowtrack extism: compile plug-in: %w", err)
	}
	return &Plugin{compiled: c}, nil
}

// New instantiates the plug-in and returns an Engine over it: one engine
// with its own virtual clock, as host.New gives. Of the options only
// host.WithLimits applies.
func (p *Plugin) New(ctx context.Context, opts ...host.Option) (*host.Engine, error) {
	// The module's clocks are the host's (as host.New's WithSysWalltime
	// and WithSysNanotime): the engine's own clock is virtual either way.
	mc := wazero.NewModuleConfig().WithSysWalltime().WithSysNanotime()
	inst, err := p.compiled.Instance(ctx, sdk.PluginInstanceConfig{ModuleConfig: mc})
	if err != nil {
		return nil, fmt.Errorf("flowtrack extism: instantiate plug-in: %w", err)
	}
	return host.NewWithTransport(ctx, transport{inst}, opts...)
}

// Close releases the compiled plug-in and every Engine made from it.
func (p *Plugin) Close(ctx context.Context) error { return p.compiled.Close(ctx) }

// transport runs operations as Extism calls.
type transport struct{ p *sdk.Plugin }

// Call implements host.Transport. Error responses are outputs like any
// other; an Extism error or a non-zero return is a failed plug-in.
func (t transport) Call(ctx context.Context, op string, req []byte) ([]byte, error) {
	rc, out, err := t.p.CallWithContext(ctx, op, req)
	if err != nil {
		return nil, err
	}
	if rc != 0 {
		return nil, fmt.Errorf("plug-in function %s returned %d", op, rc)
	}
	return out, nil
}

// Close implements host.Transport.
func (t transport) Close(ctx context.Context) error { return t.p.Close(ctx) }
