package bpmnxml

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestLiteralKind holds what counts as a condition that is never a boolean
// (EXT.071, EXT.072, FT.boolean): a literal number or string, in any
// dialect's wrapping, and nothing that computes.
func TestLiteralKind(t *testing.T) {
	for text, want := range map[string]string{
		"23":                 "number",
		" = -1.5e3 ":         "number",
		"${23}":              "number",
		"#{ .5 }":            "number",
		`"done"`:             "string",
		`= 'done'`:           "string",
		`${"yes"}`:           "string",
		"true":               "",
		"= x > 1":            "",
		`${a == "b"}`:        "",
		`"a" == "b"`:         "",
		"= count(items)":     "",
		"":                   "",
		`"`:                  "",
		"1 + 1":              "",
		"${integerVariable}": "",
	} {
		assert.Equal(t, want, literalKind(text), "%q", text)
	}
}
