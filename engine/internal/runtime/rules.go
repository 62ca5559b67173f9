package runtime

import (
	"errors"
	"fmt"
)

// ruleError is a compile error that names the rule of the model it breaks
// (see model.Problem.RuleID), so Compile can report it as a Problem with
// that rule.
type ruleError struct {
	rule string
	err  error
}

func (e *ruleError) Error() string { return e.err.Error() }
func (e *ruleError) Unwrap() error { return e.err }

// broke returns an error saying that rule is broken.
func broke(rule, format string, args ...any) error {
	return &ruleError{rule: rule, err: fmt.Errorf(format, args...)}
}

// ruleOf returns the rule err names, or fallback.
func ruleOf(err error, fallback string) string {
	var re *ruleError
	if errors.As(err, &re) {
		return re.rule
	}
	return fallback
}
