package engine

// Limits are the budgets that bound what one model, expression or input
// can make the engine do (README, "Limits"), as one value, so that every
// surface sets them alike: natively with WithLimits, in the WebAssembly
// module with the configure operation's "limits" (wasm/ABI.md), in the Go
// host with host.WithLimits, in the SDK with Engine.create({limits}). A
// zero field keeps the default; a negative one makes New fail.
type Limits struct {
	// MaxSteps is WithMaxSteps: elements one token may pass without waiting.
	MaxSteps int `json:"maxSteps,omitempty"`
	// MaxStepsPerInput is WithMaxStepsPerInput.
	MaxStepsPerInput int `json:"maxStepsPerInput,omitempty"`
	// MaxTokensPerInput is WithMaxTokensPerInput.
	MaxTokensPerInput int `json:"maxTokensPerInput,omitempty"`
	// MaxRecordsPerInput is WithMaxRecordsPerInput.
	MaxRecordsPerInput int `json:"maxRecordsPerInput,omitempty"`
	// MaxTokens is WithMaxTokens: tokens alive in one instance at once.
	MaxTokens int `json:"maxTokens,omitempty"`
	// MaxStartsPerInput is WithMaxStartsPerInput.
	MaxStartsPerInput int `json:"maxStartsPerInput,omitempty"`
	// MaxEvalSteps is WithMaxEvalSteps: the work of one expression
	// evaluation.
	MaxEvalSteps int64 `json:"maxEvalSteps,omitempty"`
	// MaxEvalBytes is WithMaxEvalBytes: what one evaluation may allocate.
	MaxEvalBytes int64 `json:"maxEvalBytes,omitempty"`
}

// WithLimits sets every non-zero field of l, as the option of the same
// name would.
func WithLimits(l Limits) Option {
	return func(cfg *config) {
		for _, o := range []struct {
			v   int
			opt func(int) Option
		}{
			{l.MaxSteps, WithMaxSteps}, {l.MaxStepsPerInput, WithMaxStepsPerInput},
			{l.MaxTokensPerInput, WithMaxTokensPerInput}, {l.MaxRecordsPerInput, WithMaxRecordsPerInput},
			{l.MaxTokens, WithMaxTokens}, {l.MaxStartsPerInput, WithMaxStartsPerInput},
		} {
			if o.v != 0 {
				o.opt(o.v)(cfg)
			}
		}
		if l.MaxEvalSteps != 0 {
			WithMaxEvalSteps(l.MaxEvalSteps)(cfg)
		}
		if l.MaxEvalBytes != 0 {
			WithMaxEvalBytes(l.MaxEvalBytes)(cfg)
		}
	}
}
