package expr

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// JUEL keeps Camunda 7's behaviour, which is the Unified Expression
// Language 2.2 specification's (JSR 245, chapter 1) as JUEL implements
// it. Each case names the section whose rule it checks. Numbers: a JSON
// number is EL's Long when whole and Double otherwise (both float64
// here), a decimal variable (json.Number) EL's BigDecimal or BigInteger.
func TestJUEL_Coercions(t *testing.T) {
	vars := map[string]any{
		"n": nil, "s5": "5", "s5d": "5.5", "blank": "", "padded": " 5", "padded2": " 5.5 ",
		"t": true, "f": false, "yes": "yes", "TRUE": "TRUE", "i": 7.0, "d": 2.5,
		"big": json.Number("12345678901234567890"), "big1": json.Number("12345678901234567891"),
		"dec": json.Number("0.10000000000000000001"), "list": []any{}, "m": map[string]any{}, "one": []any{1.0},
	}
	cases := []struct {
		rule, text string
		want       any
		err        string
	}{
		// 1.8.1 A {+,-,*} B: both null is 0; text without ".", "e", "E" is a Long, with one a Double.
		{"1.8.1 null+null", `${n + n}`, 0.0, ""},
		{"1.8.1 null is 0", `${n + 1}`, 1.0, ""},
		{"1.8.1 text as Long", `${s5 + 1}`, 6.0, ""},
		{"1.8.1 text as Double", `${s5d * 2}`, 11.0, ""},
		{"1.8.1 exponent text is a Double", `${'1e2' + 1}`, 101.0, ""},
		{"1.8.1 Double arithmetic", `${0.1 + 0.2}`, 0.30000000000000004, ""},
		{"1.8.1 text that is no number", `${'abc' + 1}`, nil, `cannot coerce "abc" to a number`},
		{"1.8.1 no string concatenation", `${'a' + 'b'}`, nil, `cannot coerce "a" to a number`},
		{"1.8.1 boolean is no number", `${t + 1}`, nil, "cannot coerce boolean"},
		{"1.18.3 empty text is 0", `${blank + 1}`, 1.0, ""},
		{"1.18.3 Long.valueOf allows no blanks", `${padded + 1}`, nil, `cannot coerce " 5" to a number`},
		{"1.18.3 Double.valueOf trims", `${padded2 + 1}`, 6.5, ""},
		{"1.18.3 no hex", `${'0x10' + 1}`, nil, `cannot coerce "0x10"`},
		{"1.18.3 no NaN text", `${'NaN' + 1}`, nil, `cannot coerce "NaN"`},
		{"1.8.1 BigInteger is exact", `${big + 1}`, json.Number("12345678901234567891"), ""},
		{"1.8.1 BigDecimal is exact", `${dec * 10}`, json.Number("1.0000000000000000001"), ""},
		// 1.8.2 A {/,div} B: a Double quotient; BigDecimal exact (decimal128 here).
		{"1.8.2 Double quotient", `${7 / 2}`, 3.5, ""},
		{"1.8.2 null/null", `${n div 1}`, 0.0, ""},
		{"1.8.2 BigDecimal quotient", `${big / 10}`, json.Number("1234567890123456789"), ""},
		{"1.8.2 by zero (Java: Infinity, no JSON value)", `${1 / 0}`, nil, "division by zero"},
		{"1.8.2 BigDecimal by zero", `${big / 0}`, nil, "division by zero"},
		// 1.8.3 A {%,mod} B.
		{"1.8.3 Long remainder", `${i % 3}`, 1.0, ""},
		{"1.8.3 Double remainder", `${i mod d}`, 2.0, ""},
		{"1.8.3 text remainder", `${'7.5' % 2}`, 1.5, ""},
		{"1.8.3 by zero", `${i % 0}`, nil, "division by zero"},
		// 1.8.4 -A.
		{"1.8.4 null", `${-n}`, 0.0, ""},
		{"1.8.4 text", `${-s5}`, -5.0, ""},
		{"1.8.4 BigInteger", `${-big}`, json.Number("-12345678901234567890"), ""},
		{"1.8.4 boolean", `${-t}`, nil, "cannot coerce boolean"},
		// 1.9 A {<,>,<=,>=} B.
		{"1.9 A==B holds for <=", `${n <= n}`, true, ""},
		{"1.9 A==B not for <", `${n < n}`, false, ""},
		{"1.9 null is false", `${n < 1}`, false, ""},
		{"1.9 null is false (>=)", `${1 >= n}`, false, ""},
		{"1.9 number against text: Long", `${s5 > 10}`, false, ""},
		{"1.9 text against text: lexical", `${'10' < '9'}`, true, ""},
		{"1.9 text that is no number", `${'abc' < 1}`, nil, `cannot coerce "abc"`},
		{"1.9 text against boolean: as text", `${'true' >= t}`, true, ""},
		{"1.9 Boolean is Comparable", `${f < t}`, true, ""},
		{"1.9 BigInteger exactly", `${big < big1}`, true, ""},
		// 1.10 A {==,!=} B.
		{"1.10 null == null", `${n == n}`, true, ""},
		{"1.10 null != anything", `${n != ''}`, true, ""},
		{"1.10 numbers as Long", `${s5 == 5}`, true, ""},
		{"1.10 numbers as Double", `${s5d == 5.5}`, true, ""},
		{"1.10 BigInteger exactly", `${big == big1}`, false, ""},
		{"1.10 BigDecimal against Double", `${dec == 0.1}`, false, ""},
		{"1.10 number against non-number text", `${'abc' == 1}`, nil, `cannot coerce "abc"`},
		{"1.10 number against boolean", `${1 == t}`, nil, "cannot coerce boolean"},
		{"1.10 Boolean.valueOf ignores case", `${TRUE == t}`, true, ""},
		{"1.10 other text is false", `${yes == t}`, false, ""},
		{"1.10 text", `${'a' eq 'a'}`, true, ""},
		// 1.11 empty A.
		{"1.11 null", `${empty n}`, true, ""},
		{"1.11 empty text", `${empty blank}`, true, ""},
		{"1.11 empty list", `${empty list}`, true, ""},
		{"1.11 empty map", `${empty m}`, true, ""},
		{"1.11 a list with an entry", `${empty one}`, false, ""},
		{"1.11 a number is never empty", `${empty 0}`, false, ""},
		// 1.18.5 coerce to Boolean in and/or/not and ?:.
		{"1.18.5 null is false", `${not n}`, true, ""},
		{"1.18.5 empty text is false", `${blank ? 1 : 2}`, 2.0, ""},
		{"1.18.5 text other than true", `${yes or f}`, false, ""},
		{"1.18.5 a number is an error", `${i and t}`, nil, "cannot coerce number to boolean"},
		// 1.18.2 coerce to String in templates: null is "".
		{"1.18.2 null is empty", `a${n}b`, "ab", ""},
		{"1.18.2 BigInteger in full", `id-${big}`, "id-12345678901234567890", ""},
	}
	for _, tc := range cases {
		t.Run(tc.rule, func(t *testing.T) {
			p, err := Compile(model.Expression{Text: tc.text}, Value, Options{})
			require.NoError(t, err, tc.text)
			got, err := p.Eval(vars)
			if tc.err != "" {
				require.Error(t, err, "%s = %v", tc.text, got)
				assert.Contains(t, err.Error(), tc.err, tc.text)
				return
			}
			require.NoError(t, err, tc.text)
			assert.Equal(t, tc.want, got, tc.text)
		})
	}
}
