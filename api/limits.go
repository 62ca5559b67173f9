package api

// Limits are the budgets that bound what one model, expression or input
// can make an engine do (docs/limits.md), as one value, so that every
// surface sets them alike: natively with engine.WithLimits, in the
// WebAssembly module with the configure operation's "limits"
// (wasm/ABI.md), in the Go host with host.WithLimits, in the SDK with
// Engine.create({limits}). A zero field keeps the default; a negative one
// is refused with an error naming the field by its JSON name
// ("limits.maxTokens (-1): must not be negative").
//
// The per-input budgets (the fields ending in PerInput, and MaxTokens)
// bound the work one outside input (a start, a job completion or error, a
// message, a signal, a timer firing, a command) can make an instance do,
// so that a model whose handlers rethrow what they catch, whose cycles
// fork, or which starts itself cannot take the engine's time and memory.
// An instance's work counts from the moment no token of it is moving until
// none is again. When a budget is exceeded, the instance is held: one
// incident names the budget, the element and the figure, and every token
// stops at its next element, so the engine settles. Resolving the
// incident grants a fresh budget and lets the tokens go on; cancelling
// the instance ends it.
type Limits struct {
	// MaxSteps is how many elements a token may pass without waiting
	// before the engine opens an incident at the element it reached
	// (default 10,000).
	MaxSteps int `json:"maxSteps,omitempty"`
	// MaxStepsPerInput is how many elements the tokens of one instance
	// may pass, together, for one input (default 100,000).
	MaxStepsPerInput int `json:"maxStepsPerInput,omitempty"`
	// MaxTokensPerInput is how many tokens one instance may create for
	// one input (default 10,000).
	MaxTokensPerInput int `json:"maxTokensPerInput,omitempty"`
	// MaxRecordsPerInput is how many history records one instance may
	// write for one input (default 500,000).
	MaxRecordsPerInput int `json:"maxRecordsPerInput,omitempty"`
	// MaxTokens is how many tokens may be alive in one instance at once
	// (default 10,000).
	MaxTokens int `json:"maxTokens,omitempty"`
	// MaxStartsPerInput is how many instances one input may start,
	// counting those started by messages and signals thrown and by call
	// activities in the instances it started, and in theirs (default
	// 1,000). The throw or call activity that would exceed it holds its
	// token with an incident; a PublishMessage or BroadcastSignal whose
	// start events alone would exceed it fails and publishes nothing.
	MaxStartsPerInput int `json:"maxStartsPerInput,omitempty"`
	// MaxEvalSteps is how much work one evaluation of an expression may
	// do (default 1,000,000): every operator or function applied, loop
	// iteration, list or context entry built, and entry or 64 bytes of
	// text a function reads is a step. An evaluation that exceeds it
	// fails like any expression error (an incident, or an error for the
	// call that triggered it) naming the budget and its figure, so no
	// expression can hold an instance, or a WebAssembly module, for long.
	MaxEvalSteps int64 `json:"maxEvalSteps,omitempty"`
	// MaxEvalBytes is how much one evaluation of an expression may
	// allocate (default 16 MiB): the text of every string and 16 bytes per
	// entry of every list and context it makes. It also bounds the size of
	// the variable a mapping sets, counted as a tree (a value shared in
	// several places counts in each).
	MaxEvalBytes int64 `json:"maxEvalBytes,omitempty"`
}

// Check returns an error wrapping ErrInvalidArgument naming the first
// negative field by its JSON name, as "limits.maxTokens (-1): must not be
// negative".
func (l Limits) Check() error {
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"maxSteps", int64(l.MaxSteps)}, {"maxStepsPerInput", int64(l.MaxStepsPerInput)},
		{"maxTokensPerInput", int64(l.MaxTokensPerInput)}, {"maxRecordsPerInput", int64(l.MaxRecordsPerInput)},
		{"maxTokens", int64(l.MaxTokens)}, {"maxStartsPerInput", int64(l.MaxStartsPerInput)},
		{"maxEvalSteps", l.MaxEvalSteps}, {"maxEvalBytes", l.MaxEvalBytes},
	} {
		if f.v < 0 {
			return InvalidArgument("limits.%s (%d): must not be negative", f.name, f.v)
		}
	}
	return nil
}

// MaxVariableDepth is how deeply arrays and objects may nest inside one
// variable's value: 1 is a flat array or object, a scalar is 0. Every
// surface enforces the same limit before it decodes or walks a value: the
// Go API (ErrBadVariables), the WebAssembly module on the request's
// JSON bytes (BAD_REQUEST, wasm/ABI.md), the Go host through the module,
// and the JavaScript SDK before it stringifies a request.
//
// # Why 64?
//
// Every walk of a value (normalizing, cloning, encoding, decoding, FEEL
// paths) recurses once per level, and the smallest stack of any host is
// Node's: the module traps there at about 3,000 levels. 64 keeps every
// walk far below that with room for the frames around it, while no
// realistic business document comes near it (they rarely pass 10).
const MaxVariableDepth = 64
