package expr

import (
	"encoding/json"
	"math"
	"strconv"

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
// Variables given as json.Number or as Go integers above 2^53 become
// decimals exactly when an operator reads them. Results leave Eval as
// float64 (JSON's number): a decimal that is no float64's shortest form
// (1/3, 2^60 + 1) is rounded to the nearest float64 there, and EvalString
// writes it in full. Keeping such values exact across the engine needs the
// runtime to store numbers as decimals (see RATIONALE.md).

// decContext is decimal128's arithmetic: 34 digits, rounding half even.
var decContext = apd.Context{
	Precision:   34,
	MaxExponent: 6144,
	MinExponent: -6143,
	Rounding:    apd.RoundHalfEven,
	Traps:       apd.DefaultTraps,
}

// maxExact is 2^53: float64 integers below it add, subtract and multiply
// exactly while the result stays below it.
const maxExact = 1 << 53

// decOf sets d to the number v: a float64 as its shortest decimal form,
// Go integers and json.Number exactly. It reports false for anything that
// is no number.
func decOf(v any, d *apd.Decimal) bool {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < maxExact {
			d.SetInt64(int64(x))
			return true
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
		_, err := d.SetFloat64(x)
		return err == nil
	case *apd.Decimal:
		d.Set(x)
		return true
	case int:
		d.SetInt64(int64(x))
	case int64:
		d.SetInt64(x)
	case int32:
		d.SetInt64(int64(x))
	case int16:
		d.SetInt64(int64(x))
	case int8:
		d.SetInt64(int64(x))
	case uint8:
		d.SetInt64(int64(x))
	case uint16:
		d.SetInt64(int64(x))
	case uint32:
		d.SetInt64(int64(x))
	case uint:
		d.Coeff.SetUint64(uint64(x))
		d.Exponent, d.Negative, d.Form = 0, false, apd.Finite
	case uint64:
		d.Coeff.SetUint64(x)
		d.Exponent, d.Negative, d.Form = 0, false, apd.Finite
	case float32:
		_, _, err := d.SetString(strconv.FormatFloat(float64(x), 'g', -1, 32))
		return err == nil
	case json.Number:
		_, _, err := d.SetString(string(x))
		return err == nil && d.Form == apd.Finite
	default:
		return false
	}
	return true
}

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

// numberOf returns d as a FEEL number: the float64 whose shortest form d
// is, or else a new *apd.Decimal; null when d is not finite or out of
// decimal128's range.
func numberOf(d *apd.Decimal) any {
	if d.Form != apd.Finite {
		return nil
	}
	if d.IsZero() {
		return 0.0 // no negative zero
	}
	var r apd.Decimal
	r.Reduce(d)
	if adj := r.Exponent + int32(r.NumDigits()) - 1; adj > decContext.MaxExponent || adj < decContext.MinExponent-33 {
		return nil
	}
	if r.Exponent == 0 && r.NumDigits() <= 15 {
		i, _ := r.Int64()
		return float64(i)
	}
	f, err := r.Float64()
	if err == nil && !math.IsInf(f, 0) && f != 0 {
		if r.NumDigits() <= 15 && math.Abs(f) > 1e-300 {
			return f // 15 digits survive the round trip through a float64
		}
		var back apd.Decimal
		if _, err := back.SetFloat64(f); err == nil && back.Cmp(&r) == 0 {
			return f
		}
	}
	out := new(apd.Decimal)
	out.Set(&r)
	return out
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

// decArith applies a decimal operation to two numbers; null when either
// is no number or the operation fails (division by zero, overflow).
func decArith(a, b any, op func(z, x, y *apd.Decimal) (apd.Condition, error)) any {
	var x, y, z apd.Decimal
	if !decOf(a, &x) || !decOf(b, &y) {
		return nil
	}
	if _, err := op(&z, &x, &y); err != nil {
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
	return decArith(x, y, decContext.Add)
}

func numSub(x, y float64) any {
	if wholeExact(x, y) {
		return x - y
	}
	return decArith(x, y, decContext.Sub)
}

func numMul(x, y float64) any {
	if wholeExact(x, y) {
		if r := x * y; math.Abs(r) < maxExact {
			return r
		}
	}
	return decArith(x, y, decContext.Mul)
}

func numDiv(x, y float64) any {
	if wholeExact(x, y) && y != 0 {
		// A whole quotient of integers below 2^53 is exact when it
		// multiplies back.
		if r := x / y; r == math.Trunc(r) && r*y == x {
			return r
		}
	}
	return decArith(x, y, decContext.Quo)
}

// numPow raises a to b: exactly (to 34 digits) for whole exponents up to
// maxDecPow, through float64 otherwise (a fractional power is irrational).
func numPow(a, b any) any {
	var x, y apd.Decimal
	if !decOf(a, &x) || !decOf(b, &y) {
		return nil
	}
	if e, err := y.Int64(); err == nil && e >= -maxDecPow && e <= maxDecPow {
		if x.IsZero() && e < 0 {
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
