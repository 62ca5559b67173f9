//go:build wasm || flowtrack_direct

package runtime

// DefaultResumption is how the WebAssembly build runs tokens: the loop
// resumes them itself, since goroutine switches there cost many times what
// they cost natively (RATIONALE.md, "Why are tokens continuations?").
const DefaultResumption = ResumeDirect
