//go:build !extism

package main

import "github.com/flowtrack/flowtrack/internal/dispatch"

// init makes the first call of every engine start (the host's configure,
// the SDK's now, or advance in its real-time mode) on an engine that is
// then dropped, so that what their
// first run builds once per module instance is built here instead:
// encoding/json's field and encoder caches for those requests and
// responses, and the main goroutine's grown stack, on which every export
// runs. `make wasm` pre-initialises the module (host/internal/modulegen),
// so this runs once, at build time; in a first Engine.create in Node it
// also spares the lazy compilation of that code (RATIONALE.md).
func init() {
	warm := dispatch.New()
	warm.Call("configure", []byte(`{"events":true}`))
	warm.Call("now", []byte(`{}`))
	warm.Call("advance", []byte(`{"to":"2026-01-01T00:00:00Z"}`))
}
