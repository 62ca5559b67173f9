//go:build !wasm && !flowtrack_direct

package runtime

// DefaultResumption is how a native engine runs tokens unless told
// otherwise: a goroutine each. Build with the flowtrack_direct tag to make
// direct resumption the default, as the test suite does for its second
// run.
const DefaultResumption = ResumeGoroutines
