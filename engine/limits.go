package engine

// WithLimits sets the engine's budgets (Limits, api.Limits): every
// non-zero field of l replaces the one set so far, so several WithLimits
// compose. It is the one way to set them natively, as the WebAssembly
// module's configure operation, host.WithLimits and the SDK's
// Engine.create({limits}) are elsewhere. New refuses a negative field
// with an error wrapping ErrInvalidArgument that names it by its JSON
// name ("limits.maxTokens (-1): must not be negative").
func WithLimits(l Limits) Option {
	return func(cfg *config) {
		c := &cfg.limits
		for _, f := range []struct{ from, to *int }{
			{&l.MaxSteps, &c.MaxSteps}, {&l.MaxStepsPerInput, &c.MaxStepsPerInput},
			{&l.MaxTokensPerInput, &c.MaxTokensPerInput}, {&l.MaxRecordsPerInput, &c.MaxRecordsPerInput},
			{&l.MaxTokens, &c.MaxTokens}, {&l.MaxStartsPerInput, &c.MaxStartsPerInput},
		} {
			if *f.from != 0 {
				*f.to = *f.from
			}
		}
		if l.MaxEvalSteps != 0 {
			c.MaxEvalSteps = l.MaxEvalSteps
		}
		if l.MaxEvalBytes != 0 {
			c.MaxEvalBytes = l.MaxEvalBytes
		}
	}
}
