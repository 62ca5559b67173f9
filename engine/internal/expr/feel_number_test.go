package expr

import (
	"encoding/json"
	"math"
	"strconv"
	"testing"

	"github.com/cockroachdb/apd/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine/internal/model"
)

// FEEL numbers are decimals (DMN 1.5 10.3.2.3.1): these fail with binary
// floats.
func TestFEEL_DecimalNumbers(t *testing.T) {
	runEvalCases(t, []evalCase{
		{`= 0.1 + 0.2 = 0.3`, true, ""},
		{`= 0.1 + 0.2`, 0.3, ""},
		{`= 1.005 * 1000 = 1005`, true, ""},
		{`= 0.3 - 0.1`, 0.2, ""},
		{`= 1.1 * 1.1`, 1.21, ""},
		{`= 0.3 / 0.1`, 3.0, ""},
		{`= 9007199254740993 - 9007199254740992`, 1.0, ""},
		{`= 9007199254740993 = 9007199254740992`, false, ""},
		{`= 9007199254740993 > 9007199254740992`, true, ""},
		{`= string(9007199254740993)`, "9007199254740993", ""},
		{`= string(2 ** 64)`, "18446744073709551616", ""},
		{`= string(1 / 3)`, "0.3333333333333333333333333333333333", ""},
		{`= 1 / 3 * 3 = 1`, false, ""}, // 34 digits, as decimal128
		{`= decimal(1 / 3, 2)`, 0.33, ""},
		{`= round half up(2.675, 2)`, 2.68, ""},
		{`= floor(-1.5)`, -2.0, ""},
		{`= ceiling(0.07)`, 1.0, ""},
		{`= floor(-0.07)`, -1.0, ""},
		{`= round up(0.001, 2)`, 0.01, ""},
		{`= round half up(0.005, 2)`, 0.01, ""},
		{`= round half up(0.0049, 2)`, 0.0, ""},
		{`= round down(-0.07, 0)`, 0.0, ""},
		{`= ceiling(-0.07, 1)`, 0.0, ""},
		{`= floor(123.456, -1)`, 120.0, ""},
		{`= decimal(99.995, 2)`, 100.0, ""},
		{`= ceiling(1.0000000000000000001)`, 2.0, ""},
		{`= modulo(-12, 5)`, 3.0, ""},
		{`= modulo(12.5, -5)`, -2.5, ""},
		{`= sum([0.1, 0.2, 0.3])`, 0.6, ""},
		{`= mean([0.1, 0.2])`, 0.15, ""},
		{`= product([0.1, 0.2, 3])`, 0.06, ""},
		{`= median([0.1, 0.3, 0.2, 0.4])`, 0.25, ""},
		{`= number("0.1") + number("0.2")`, 0.3, ""},
		{`= abs(-9007199254740993) = 9007199254740993`, true, ""},
		{`= -0`, 0.0, ""},
		{`= 10 ** -2`, 0.01, ""},
		{`= 0 ** 0`, 1.0, ""},
		{`= 0 ** -1`, nil, ""},
		{`= 2 ** 0.5`, 1.4142135623730951, ""},
		// Leaving Eval, a decimal no float64 stands for is a json.Number
		// with every digit; one a float64 holds is that float64.
		{`= 9007199254740993`, json.Number("9007199254740993"), ""},
		{`= 1 / 3`, json.Number("0.3333333333333333333333333333333333"), ""},
		{`= 2 ** 64`, json.Number("18446744073709551616"), ""},
		{`= 123456789012345678901234567890123456789 * 1000`, json.Number("1.234567890123456789012345678901235E+41"), ""}, // 34 digits, as decimal128
		{`= [1 / 3, {a: 9007199254740993}]`, []any{json.Number("0.3333333333333333333333333333333333"),
			map[string]any{"a": json.Number("9007199254740993")}}, ""},
		{`= 1.50`, 1.5, ""},
		{`= 2 ** 53`, 9007199254740992.0, ""},
		{`= amount * 1.19`, 178.5, ""},
	}, Options{})
}

// Numbers arriving as json.Number or Go integers above 2^53 are read
// exactly; EvalString writes a decimal in full.
func TestFEEL_DecimalBoundary(t *testing.T) {
	vars := map[string]any{
		"j":   json.Number("12345678901234567890.5"),
		"big": int64(1)<<60 + 1,
		"u":   uint64(1) << 63,
	}
	for _, tc := range []struct{ text, want string }{
		{`= j + 0.5`, "12345678901234567891"},
		{`= big`, "1152921504606846977"},
		{`= big - 1`, "1152921504606846976"},
		{`= u + 1`, "9223372036854775809"},
		{`= 0.1 + 0.2`, "0.3"},
	} {
		t.Run(tc.text, func(t *testing.T) {
			p, err := Compile(model.Expression{Text: tc.text}, Value, Options{})
			require.NoError(t, err)
			got, err := p.EvalString(vars)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
	p, err := Compile(model.Expression{Text: `= big = 1152921504606846976`}, Condition, Options{})
	require.NoError(t, err)
	ok, err := p.EvalBool(vars)
	require.NoError(t, err)
	assert.False(t, ok, "2^60 + 1 is not 2^60")
}

func TestFEEL_NumberLiteralOutOfRange(t *testing.T) {
	_, err := Compile(model.Expression{Text: `= 1e9999999`}, Value, Options{})
	var se *SyntaxError
	require.ErrorAs(t, err, &se)
	assert.Contains(t, se.Msg, "number out of range")
}

// An expression's number has no negative zero (decimal128 zeros compare
// and print alike): the float64 fast paths of * and / in FEEL, and JUEL's
// double arithmetic, made one from 0 * -1, which a checkpoint wrote "-0"
// and read back as 0.
func TestEval_NoNegativeZero(t *testing.T) {
	for _, text := range []string{`= 0 * -1`, `= -1 * 0`, `= 0.0 * -1`, `= 0 / -5`, `= 0 - 0`, `= -0`, `= -(0)`, `= 0 * -1.5`, `= 0 * -9007199254740993`, `= modulo(0, -5)`, `= abs(-0)`, `= sum([0, -0])`, `= product([0, -1])`, `= -1 * 0 + 0`, `${0 * -1}`, `${0 / -5}`, `${0.0 - 0.0 * -1}`, `${-1 * 0 % 5}`} {
		t.Run(text, func(t *testing.T) {
			p, err := Compile(model.Expression{Text: text}, Value, Options{})
			require.NoError(t, err)
			got, err := p.Eval(nil)
			require.NoError(t, err)
			f, ok := got.(float64)
			require.True(t, ok, "%s is %T %v", text, got, got)
			assert.Equal(t, 0.0, f)
			assert.False(t, math.Signbit(f), "%s gives -0", text)
		})
	}
}

// setFloat must give the shortest decimal form strconv gives, on its fast
// path and off it.
func TestSetFloat_Shortest(t *testing.T) {
	values := []float64{0.1, 0.2, 0.3, 1.19, 150.25, 2.675, 1e-7, 123456789012345, 1234567890123456,
		0.30000000000000004, 1.0 / 3, 9007199254740993, 1e22, 1e23, 5e-324, 1.7976931348623157e308,
		-0.5, -1234.5678, 0.000123, 99999999999999.9, 0.1 + 0.7}
	for i := range 2000 {
		values = append(values, float64(i)*0.01, float64(i)/7, float64(i)*1.1e-5, float64(i)*123.456)
	}
	for _, f := range values {
		var d apd.Decimal
		require.True(t, setFloat(&d, f))
		want, _, err := apd.NewFromString(strconv.FormatFloat(f, 'g', -1, 64))
		require.NoError(t, err)
		assert.Zero(t, d.Cmp(want), "%v: got %s", f, d.String())
		back, err := d.Float64()
		require.NoError(t, err)
		assert.Equal(t, f, back)
		// And back through numberOf, a float64 is itself.
		assert.Equal(t, f, numberOf(&d), "%v", f)
	}
}
