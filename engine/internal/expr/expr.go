// Package expr compiles and evaluates every expression in the engine:
// sequence flow conditions, correlation keys, timer values, job types,
// input/output mappings and activation conditions.
//
// Expressions are compiled once, at deploy, and evaluated many times without
// recompiling. The dialect is chosen by the text:
//
//   - "= ..." is FEEL (Camunda 8);
//   - "${...}" is JUEL (Camunda 7);
//   - anything else is a bare expression in the JUEL dialect when compiled
//     as a condition or value, or a literal string when compiled as Static.
package expr

import (
	"fmt"
	"strings"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"

	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// Mode says what the compiled expression is for, which decides how plain
// text is read and what result type is required.
type Mode uint8

const (
	// Condition expressions must yield a boolean. Plain text is an
	// expression.
	Condition Mode = iota
	// Value expressions yield any JSON-compatible value. Plain text is an
	// expression.
	Value
	// Static expressions are literal strings unless written as "= ..." or
	// "${...}" (job types, timer values, correlation key literals).
	Static
)

// SyntaxError reports an expression that does not compile.
type SyntaxError struct {
	// Text is the expression as written.
	Text string
	// Pos is the byte offset of the problem within Text, or -1.
	Pos int
	// Msg says what is wrong.
	Msg string
}

func (e *SyntaxError) Error() string {
	if e.Pos >= 0 {
		return fmt.Sprintf("expression %q: at %d: %s", e.Text, e.Pos, e.Msg)
	}
	return fmt.Sprintf("expression %q: %s", e.Text, e.Msg)
}

// Program is a compiled expression. It is immutable and safe for concurrent
// use.
type Program struct {
	text    string
	mode    Mode
	literal any
	prog    *vm.Program
	clock   clock.Clock
}

// Text returns the expression as written.
func (p *Program) Text() string { return p.text }

// Options configure compilation. The zero value uses the real clock for
// now() and today().
type Options struct {
	Clock clock.Clock
}

// Compile compiles e for the given mode.
func Compile(e model.Expression, mode Mode, opts Options) (*Program, error) {
	text := strings.TrimSpace(e.Text)
	p := &Program{text: e.Text, mode: mode, clock: opts.Clock}
	if p.clock == nil {
		p.clock = clock.Real{}
	}
	if lang := strings.ToLower(e.Language); lang != "" && !knownLanguage(lang) {
		return nil, &SyntaxError{Text: e.Text, Pos: -1, Msg: fmt.Sprintf("unknown expression language %q", e.Language)}
	}
	body := text
	switch {
	case strings.HasPrefix(text, "="):
		body = strings.TrimSpace(text[1:])
	case strings.HasPrefix(text, "${") && strings.HasSuffix(text, "}"):
		body = strings.TrimSpace(text[2 : len(text)-1])
	case mode == Static:
		p.literal = text
		return p, nil
	}
	if body == "" {
		return nil, &SyntaxError{Text: e.Text, Pos: -1, Msg: "empty expression"}
	}
	prog, err := expr.Compile(body, expr.AllowUndefinedVariables())
	if err != nil {
		return nil, &SyntaxError{Text: e.Text, Pos: -1, Msg: err.Error()}
	}
	p.prog = prog
	return p, nil
}

func knownLanguage(lang string) bool {
	switch lang {
	case "feel", "juel", "http://www.omg.org/spec/feel/20140401", "https://www.omg.org/spec/dmn/20191111/feel/",
		"http://www.w3.org/1999/xpath", "http://www.omg.org/spec/bpmn/20100524/model":
		return true
	}
	return strings.Contains(lang, "feel") || strings.Contains(lang, "juel")
}

// Eval evaluates the program over vars, the variables visible where it is
// evaluated. vars is only read.
func (p *Program) Eval(vars map[string]any) (any, error) {
	if p.prog == nil {
		return p.literal, nil
	}
	out, err := expr.Run(p.prog, vars)
	if err != nil {
		return nil, fmt.Errorf("evaluate %q: %w", p.text, err)
	}
	return out, nil
}

// EvalBool evaluates a condition. A non-boolean result is an error, never
// silently false.
func (p *Program) EvalBool(vars map[string]any) (bool, error) {
	v, err := p.Eval(vars)
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("evaluate %q: condition yielded %T, not a boolean", p.text, v)
	}
	return b, nil
}

// EvalString evaluates an expression that must yield text (a job type, a
// correlation key, an ISO-8601 timer value). Numbers are formatted as FEEL
// and Zeebe do for correlation keys.
func (p *Program) EvalString(vars map[string]any) (string, error) {
	v, err := p.Eval(vars)
	if err != nil {
		return "", err
	}
	switch v := v.(type) {
	case string:
		return v, nil
	case float64:
		if v == float64(int64(v)) {
			return fmt.Sprintf("%d", int64(v)), nil
		}
		return fmt.Sprint(v), nil
	case int, int64, int32:
		return fmt.Sprint(v), nil
	case time.Duration:
		return v.String(), nil
	case nil:
		return "", fmt.Errorf("evaluate %q: yielded null, not text", p.text)
	}
	return "", fmt.Errorf("evaluate %q: yielded %T, not text", p.text, v)
}
