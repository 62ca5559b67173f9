// Package value is the value model every surface holds variables in:
// JSON values, with numbers as the float64 whose shortest decimal form
// they are, or else as a json.Number with their exact text (decimal128's
// range and 34 digits: RATIONALE.md, "How do decimals cross the runtime
// and the ABI?"). The native engine normalizes what it is given to it
// (Normalize), the Go host what the WebAssembly module returns, and the
// expression evaluator (engine/internal/expr) reads numbers through
// Decimal and writes them back through FromDecimal, so a value has one
// form wherever it is. It depends on package api and a decimal library
// only, so the Go host links no engine.
package value

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/cockroachdb/apd/v3"
)

// MaxExponent and MinExponent are decimal128's exponent range, the range
// of the numbers the value model holds.
const (
	MaxExponent = 6144
	MinExponent = -6143
)

// MaxExact is 2^53: float64 integers below it add, subtract and multiply
// exactly while the result stays below it.
const MaxExact = 1 << 53

// Decimal sets d to the number v: a float64 as its shortest decimal form,
// Go integers and json.Number exactly. It reports false for anything that
// is no number.
func Decimal(v any, d *apd.Decimal) bool {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < MaxExact {
			d.SetInt64(int64(x))
			return true
		}
		return SetFloat(d, x)
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

// SetFloat sets d to the shortest decimal form of f, without allocating:
// it has at most 17 digits, so its coefficient fits an int64.
func SetFloat(d *apd.Decimal, f float64) bool {
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

// FromDecimal returns d as a number of the value model (a FEEL number): the float64 whose shortest form d
// is, or else a new *apd.Decimal; null when d is not finite or out of
// decimal128's range.
func FromDecimal(d *apd.Decimal) any {
	if d.Form != apd.Finite {
		return nil
	}
	if d.IsZero() {
		return 0.0 // no negative zero
	}
	var r apd.Decimal
	r.Reduce(d)
	if adj := r.Exponent + int32(r.NumDigits()) - 1; adj > MaxExponent || adj < MinExponent-33 {
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
// canonical text (DecimalJSON: no trailing zeros after the point, an
// exponent only past 40 digits). So every number has one form, a float64 when
// it fits one, and no digit is lost: 12345678901234567890 and 1/3 at 34
// digits stay json.Number, 1.50 and 1e3 become float64. ok is false when
// v is no finite number or lies outside decimal128's range.
func Number(v any) (any, bool) {
	var d apd.Decimal
	if !Decimal(v, &d) {
		return nil, false
	}
	n := FromDecimal(&d)
	if x, isDec := n.(*apd.Decimal); isDec {
		return DecimalJSON(x), true
	}
	return n, n != nil
}

// DecimalJSON writes a reduced decimal that is no float64's shortest form
// as JSON number text: plain digits (an integer in full, 2^64 as
// 18446744073709551616) unless that would take more than 40 of them.
func DecimalJSON(d *apd.Decimal) json.Number {
	if n := int32(d.NumDigits()); d.Exponent >= 0 && n+d.Exponent <= 40 || d.Exponent < 0 && -d.Exponent <= 40 {
		return json.Number(d.Text('f'))
	}
	return json.Number(d.String())
}
