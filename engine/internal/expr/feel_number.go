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
		return setFloat(d, x)
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

// setFloat sets d to the shortest decimal form of f, without allocating:
// it has at most 17 digits, so its coefficient fits an int64.
func setFloat(d *apd.Decimal, f float64) bool {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return false
	}
	// Most numbers have few digits: the first k for which f·10^k is an
	// integer r below 10^15 that divides back to f gives the shortest
	// form r·10^-k (at 15 digits or fewer, no other decimal of as many
	// digits rounds to f), with two float operations a step.
	for k := range 16 {
		r := math.Round(f * pow10[k])
		if math.Abs(r) >= 1e15 {
			break
		}
		if r/pow10[k] == f {
			d.SetFinite(int64(r), int32(-k))
			return true
		}
	}
	var buf [32]byte
	s := strconv.AppendFloat(buf[:0], f, 'e', -1, 64) // -d.ddde±dd
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	var coeff int64
	digits := int32(0)
	i := 0
	for ; i < len(s) && s[i] != 'e'; i++ {
		if s[i] == '.' {
			continue
		}
		coeff = coeff*10 + int64(s[i]-'0')
		digits++
	}
	exp, err := strconv.Atoi(string(s[i+1:]))
	if err != nil {
		return false
	}
	if neg {
		coeff = -coeff
	}
	d.SetFinite(coeff, int32(exp)-digits+1)
	return true
}

// pow10 are the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

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
	if r.NumDigits() <= 15 && r.Exponent >= -22 && r.Exponent <= 22 {
		// A coefficient below 2^53 times or over an exact power of ten
		// is rounded once: the float64 nearest the decimal, whose
		// shortest form it is (15 digits survive the round trip).
		if r.Coeff.IsInt64() {
			f := float64(r.Coeff.Int64())
			if r.Negative {
				f = -f
			}
			if r.Exponent >= 0 {
				return f * pow10[r.Exponent]
			}
			return f / pow10[-r.Exponent]
		}
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

// Number returns the number v (a Go number of any type or a json.Number)
// in the engine's value model: the float64 whose shortest decimal form is
// v's exact value, or else a json.Number holding v's exact value in
// canonical text (decimalJSON: no trailing zeros after the point, an
// exponent only past 40 digits). So every number has one form, a float64 when
// it fits one, and no digit is lost: 12345678901234567890 and 1/3 at 34
// digits stay json.Number, 1.50 and 1e3 become float64. ok is false when
// v is no finite number or lies outside decimal128's range.
func Number(v any) (any, bool) {
	var d apd.Decimal
	if !decOf(v, &d) {
		return nil, false
	}
	n := numberOf(&d)
	if x, isDec := n.(*apd.Decimal); isDec {
		return decimalJSON(x), true
	}
	return n, n != nil
}

// decimalJSON writes a reduced decimal that is no float64's shortest form
// as JSON number text: plain digits (an integer in full, 2^64 as
// 18446744073709551616) unless that would take more than 40 of them.
func decimalJSON(d *apd.Decimal) json.Number {
	if n := int32(d.NumDigits()); d.Exponent >= 0 && n+d.Exponent <= 40 || d.Exponent < 0 && -d.Exponent <= 40 {
		return json.Number(d.Text('f'))
	}
	return json.Number(d.String())
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
