// Command wasm is flowtrack's WebAssembly module: a WASI preview 1 reactor
// that holds one engine on a virtual clock and exports one function per
// operation. Requests and responses are JSON in linear memory; wasm/ABI.md
// is the contract, and host/ and sdk-js/ are its two callers.
//
// Build it with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o host/flowtrack.wasm ./wasm
//
// The operations themselves are plain Go in internal/dispatch, which builds
// and tests on every platform (and serves them over NATS too); only the
// exports (exports_wasip1.go, exports_extism.go) need wasip1.
package main

// main is not called in a reactor: hosts call _initialize, which runs
// package initialisation only (in the module make wasm builds, it already
// ran at build time: host/internal/modulegen's preinit).
func main() {}
