package expr

import (
	"encoding/json"
	"math"

	"github.com/flowtrack/flowtrack/internal/value"

	"github.com/cockroachdb/apd/v3"
)

// Why are FEEL numbers float64 or *apd.Decimal?
//
// DMN numbers are decimals (IEEE 754-2008 decimal128: 34 significant
// digits, rounding half even), so 0.1 + 0.2 = 0.3 and 1.005 * 1000 = 1005
// must hold and integers above 2^53 must stay exact. Most numbers a
// process meets (amounts, counts, variables that arrived as JSON numbers)
// are the shortest decimal form of a float64, and a float64 compares with
// another exactly as their shortest decimal forms do. So a FEEL number is
// a float64 when it is the shortest decimal form of that float64 (every
// decimal of up to 15 significant digits is) and an *apd.Decimal,
// never mutated once made, otherwise (more digits, as 1/3 or 2^60 + 1
// have). Every float64 variable is a FEEL number as it is, comparisons of
// float64s stay float comparisons (a typical condition costs no decimal
// work), and arithmetic is decimal: exact float64 integer arithmetic
// below 2^53 where it is provably exact, apd otherwise, with the result
// brought back to a float64 when it is one (numberOf). Each value has
// one form, so == on float64s and the equality of FEEL agree.
//
// Outside the evaluator the engine holds the same split in JSON's terms
// (Number): a float64, or a json.Number with the exact text of a number no
// float64 holds. Variables given as json.Number or as Go integers above
// 2^53 become decimals exactly when an operator reads them, and a decimal
// result leaves Eval as a json.Number, so no digit is lost on the way
// through mappings, jobs, messages, checkpoints and the wasm boundary
// (RATIONALE.md, "How do decimals cross the runtime and the ABI?").

// decContext is decimal128's arithmetic: 34 digits, rounding half even.
var decContext = apd.Context{
	Precision:   34,
	MaxExponent: value.MaxExponent,
	MinExponent: value.MinExponent,
	Rounding:    apd.RoundHalfEven,
	Traps:       apd.DefaultTraps,
}

// The number model itself is package value's (internal/value): the
// evaluator reads a number into a decimal with decOf, writes one back
// with numberOf, and the engine normalizes variables with the same code.
const maxExact = value.MaxExact

func decOf(v any, d *apd.Decimal) bool        { return value.Decimal(v, d) }
func setFloat(d *apd.Decimal, f float64) bool { return value.SetFloat(d, f) }
func numberOf(d *apd.Decimal) any             { return value.FromDecimal(d) }
func decimalJSON(d *apd.Decimal) json.Number  { return value.DecimalJSON(d) }

// Number returns the number v in the engine's value model (value.Number).
func Number(v any) (any, bool) { return value.Number(v) }

// canonical returns a number of any Go type as a FEEL number.
func canonical(v any) any {
	var d apd.Decimal
	if !decOf(v, &d) {
		return nil
	}
	return numberOf(&d)
}

// isNumber reports whether v is a number of any Go type.
func isNumber(v any) bool {
	switch v.(type) {
	case float64, *apd.Decimal, int, int64, int32, int16, int8, uint, uint64, uint32, uint16, uint8, float32, json.Number:
		return true
	}
	return false
}

// parseNumber reads the text of a FEEL number ("1.5", "1e3", "-.5").
func parseNumber(s string) (any, bool) {
	var d apd.Decimal
	if _, _, err := d.SetString(s); err != nil || d.Form != apd.Finite {
		return nil, false
	}
	n := numberOf(&d)
	return n, n != nil
}

// arithOp is an operation of decArith.
type arithOp uint8

const (
	opAdd arithOp = iota
	opSub
	opMul
	opQuo
)

// decArith applies a decimal operation to two numbers; null when either
// is no number or the operation fails (division by zero, overflow). The
// operation is a code, not a function value, so that the operands stay on
// the stack.
func decArith(a, b any, op arithOp) any {
	var x, y, z apd.Decimal
	if !decOf(a, &x) || !decOf(b, &y) {
		return nil
	}
	var err error
	switch op {
	case opAdd:
		_, err = decContext.Add(&z, &x, &y)
	case opSub:
		_, err = decContext.Sub(&z, &x, &y)
	case opMul:
		_, err = decContext.Mul(&z, &x, &y)
	case opQuo:
		_, err = decContext.Quo(&z, &x, &y)
	}
	if err != nil {
		return nil
	}
	return numberOf(&z)
}

// wholeExact reports whether x and y are float64 integers whose sum,
// difference and (for mul) product float64 computes exactly.
func wholeExact(x, y float64) bool {
	return x == math.Trunc(x) && y == math.Trunc(y) && math.Abs(x) < maxExact/2 && math.Abs(y) < maxExact/2
}

func numAdd(x, y float64) any {
	if wholeExact(x, y) {
		return x + y
	}
	return decArith(x, y, opAdd)
}

func numSub(x, y float64) any {
	if wholeExact(x, y) {
		return x - y
	}
	return decArith(x, y, opSub)
}

func numMul(x, y float64) any {
	if wholeExact(x, y) {
		if r := x * y; math.Abs(r) < maxExact {
			return r + 0 // 0 * -1 is -0 in float64; a FEEL number has no negative zero
		}
	}
	return decArith(x, y, opMul)
}

func numDiv(x, y float64) any {
	if wholeExact(x, y) && y != 0 {
		// A whole quotient of integers below 2^53 is exact when it
		// multiplies back.
		if r := x / y; r == math.Trunc(r) && r*y == x {
			return r + 0 // 0 / -5 is -0 in float64, as for numMul
		}
	}
	return decArith(x, y, opQuo)
}

// numPow raises a to b: exactly (to 34 digits) for whole exponents up to
// maxDecPow, through float64 otherwise (a fractional power is irrational).
func numPow(a, b any) any {
	var x, y apd.Decimal
	if !decOf(a, &x) || !decOf(b, &y) {
		return nil
	}
	if e, err := y.Int64(); err == nil && e >= -maxDecPow && e <= maxDecPow {
		switch {
		case e == 0:
			return 1.0 // 0 ** 0 too, as Java's BigDecimal.pow has it
		case x.IsZero() && e < 0:
			return nil
		}
		var z apd.Decimal
		if _, err := decContext.Pow(&z, &x, &y); err != nil {
			return nil
		}
		return numberOf(&z)
	}
	fx, _ := toFloat(a)
	fy, _ := toFloat(b)
	r := math.Pow(fx, fy)
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return nil
	}
	return r
}

// maxDecPow bounds the whole exponents numPow computes in decimal.
const maxDecPow = 10000

// numCmp orders two numbers of any Go types exactly.
func numCmp(a, b any) (int, bool) {
	if x, ok := a.(float64); ok {
		if y, ok := b.(float64); ok {
			return cmpFloat(x, y)
		}
	}
	var x, y apd.Decimal
	if !decOf(a, &x) || !decOf(b, &y) {
		return 0, false
	}
	return x.Cmp(&y), true
}

// numNeg negates a number.
func numNeg(a any) any {
	if x, ok := a.(float64); ok {
		return -x + 0 // no negative zero
	}
	var x apd.Decimal
	if !decOf(a, &x) {
		return nil
	}
	x.Neg(&x)
	return numberOf(&x)
}

// numAbs is the absolute value of a number.
func numAbs(a any) any {
	if x, ok := a.(float64); ok {
		return math.Abs(x)
	}
	var x apd.Decimal
	if !decOf(a, &x) {
		return nil
	}
	x.Abs(&x)
	return numberOf(&x)
}

// numText formats a number as FEEL's string() does: the shortest decimal
// form, integers without a fraction, decimals in full.
func numText(v any) (string, bool) {
	if d, ok := v.(*apd.Decimal); ok {
		if d.Exponent > 0 || d.Exponent < -100 {
			return d.String(), true // scientific, as BigDecimal's toString
		}
		return d.Text('f'), true
	}
	if f, ok := toFloat(v); ok {
		return formatNumber(f), true
	}
	return "", false
}

// sumOfNumbers adds numbers exactly; null when one is no number.
func sumOfNumbers(items []any) (*apd.Decimal, bool) {
	var s, x apd.Decimal
	for _, e := range items {
		if !decOf(e, &x) {
			return nil, false
		}
		if _, err := decContext.Add(&s, &s, &x); err != nil {
			return nil, false
		}
	}
	return &s, true
}
