package expr

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"
)

// JUEL runtime, following the Unified Expression Language 2.2 coercion
// rules (JSR 245, 1.8-1.18) as Camunda 7 evaluates them: unknown variables
// and impossible coercions are errors (the engine raises an incident),
// null coerces to false, 0 or "" where EL says so, and operators coerce
// their operands to a common type. A whole JSON number is EL's Long, any
// other float64 its Double, a decimal variable (json.Number) its
// BigDecimal or BigInteger, computed exactly. juel_coercion_test.go holds
// one case per rule, and the deviations: a zero divisor is an error where
// Java's Double gives Infinity or NaN, which no JSON value holds, and a
// Double that is whole prints without ".0" (JSON keeps no Long/Double
// distinction).

// errUnknownVariable is wrapped by errors for a variable that is not set.
var errUnknownVariable = errors.New("unknown variable")

func juelVar(a ...any) (any, error) {
	env, _ := a[0].(map[string]any)
	name := a[1].(string)
	v, ok := env[name]
	if !ok {
		return nil, fmt.Errorf("%w %q", errUnknownVariable, name)
	}
	return v, nil
}

// juelBool coerces to boolean: null is false, text is true only when it is
// "true" in any case.
func juelBool(v any) (bool, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case nil:
		return false, nil
	case string:
		return strings.EqualFold(x, "true"), nil
	}
	return false, fmt.Errorf("cannot coerce %s to boolean", typeName(v))
}

// juelNumber coerces to a number (EL 2.2, 1.18.3): null and "" are 0;
// text must be what Java reads as the number: with a ".", "e" or "E" a
// Double (Double.valueOf, surrounding blanks allowed), otherwise a Long
// (Long.valueOf: an optional sign and digits, nothing else); a boolean is
// an error. Text is read exactly (a FEEL number), as are variables that
// are decimals: EL's BigDecimal.
func juelNumber(v any) (any, error) {
	switch x := v.(type) {
	case nil:
		return 0.0, nil
	case float64, *apd.Decimal, json.Number:
		return x, nil
	case string:
		if x == "" {
			return 0.0, nil
		}
		if n, ok := juelNumberText(x); ok {
			return n, nil
		}
		return nil, fmt.Errorf("cannot coerce %q to a number", x)
	case bool:
		return nil, fmt.Errorf("cannot coerce boolean to a number")
	}
	if isNumber(v) {
		return canonical(v), nil
	}
	return nil, fmt.Errorf("cannot coerce %s to a number", typeName(v))
}

// juelNumberText reads text as EL coerces it to a number (juelNumber).
func juelNumberText(s string) (any, bool) {
	if strings.ContainsAny(s, ".eE") {
		s = strings.TrimSpace(s) // Double.valueOf trims
	}
	digits := strings.TrimLeft(s, "+-")
	if len(s)-len(digits) > 1 || digits == "" {
		return nil, false
	}
	for i := range len(digits) {
		c := digits[i]
		if (c < '0' || c > '9') && c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-' {
			return nil, false // no hex, "NaN", "Infinity" or blanks inside
		}
	}
	return parseNumber(s)
}

// juelNum is juelNumber as a float64, for indexes and positions.
func juelNum(v any) (float64, error) {
	n, err := juelNumber(v)
	if err != nil {
		return 0, err
	}
	f, _ := toFloat(n)
	return f, nil
}

// juelDecimal reports whether a number is no float64: a variable EL would
// hold as a BigDecimal or BigInteger, whose arithmetic is exact.
func juelDecimal(v any) bool {
	switch v.(type) {
	case *apd.Decimal, json.Number:
		return true
	}
	return false
}

// juelStr coerces to text: null is "".
func juelStr(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return string(x) // in full, as BigInteger's and BigDecimal's toString
	case *apd.Decimal:
		return string(decimalJSON(x))
	}
	var b strings.Builder
	writeFEEL(&b, v, false)
	return b.String()
}

// juelEqual is EL "==" (EL 2.2, 1.10): null equals only null; with a
// number on either side both are coerced to numbers (text that is no
// number is an error), then with a boolean to booleans, then with text
// to text; otherwise values compare as they are.
func juelEqual(a, b any) (bool, error) {
	if a == nil || b == nil {
		return a == nil && b == nil, nil
	}
	if x, ok := a.(string); ok {
		if y, ok := b.(string); ok {
			return x == y, nil
		}
	}
	switch {
	case isNumber(a) || isNumber(b):
		c, err := juelNumCmp(a, b)
		return c == 0, err
	}
	if _, ok := a.(bool); ok {
		y, err := juelBool(b)
		return a == y, err
	}
	if _, ok := b.(bool); ok {
		x, err := juelBool(a)
		return x == b, err
	}
	if _, ok := a.(string); ok {
		return a == juelStr(b), nil
	}
	if _, ok := b.(string); ok {
		return juelStr(a) == b, nil
	}
	r := feelEqual(a, b)
	return r == true, nil
}

// juelNumCmp coerces both to numbers and compares them exactly.
func juelNumCmp(a, b any) (int, error) {
	x, err := juelNumber(a)
	if err != nil {
		return 0, err
	}
	y, err := juelNumber(b)
	if err != nil {
		return 0, err
	}
	if fx, ok := x.(float64); ok {
		if fy, ok := y.(float64); ok {
			c, _ := cmpFloat(fx, fy)
			return c, nil
		}
	}
	c, _ := numCmp(x, y)
	return c, nil
}

// juelCompare is EL "<" and friends (EL 2.2, 1.9): null against null is
// equal (so "<=" holds), null against anything else is false; with a
// number on either side both are coerced to numbers, then with text on
// either side both to text, compared lexically; booleans order false
// before true (Boolean.compareTo); dates and durations as FEEL orders
// them.
func juelCompare(test func(int) bool) func(...any) (any, error) {
	return func(a ...any) (any, error) {
		x, y := a[0], a[1]
		if fx, ok := x.(float64); ok {
			if fy, ok := y.(float64); ok {
				c, _ := cmpFloat(fx, fy)
				return test(c), nil
			}
		}
		if x == nil && y == nil {
			return test(0), nil
		}
		if x == nil || y == nil {
			return false, nil
		}
		if isNumber(x) || isNumber(y) {
			c, err := juelNumCmp(x, y)
			if err != nil {
				return nil, err
			}
			return test(c), nil
		}
		if c, ok := compare(x, y); ok {
			return test(c), nil
		}
		_, xs := x.(string)
		_, ys := y.(string)
		if xs || ys {
			return test(strings.Compare(juelStr(x), juelStr(y))), nil
		}
		if bx, ok := x.(bool); ok {
			if by, ok := y.(bool); ok {
				return test(boolIndex(bx) - boolIndex(by)), nil
			}
		}
		return nil, fmt.Errorf("cannot compare %s with %s", typeName(x), typeName(y))
	}
}

func boolIndex(b bool) int {
	if b {
		return 1
	}
	return 0
}

// juelArith is EL's "+", "-", "*", "/" and "%" (EL 2.2, 1.8): operands
// are coerced to numbers (null is 0, text must be a number); doubles and
// longs compute in float64, as Java's Double does; an operand that is a
// decimal (EL's BigDecimal or BigInteger) makes the operation exact,
// decimal128 for a quotient (the remainder stays a double, as EL has it).
// A zero divisor is an error (Java's Double
// would give Infinity or NaN, which no JSON value holds).
func juelArith(op func(x, y float64) (float64, error), dop arithOp) func(...any) (any, error) {
	return func(a ...any) (any, error) {
		if x, ok := a[0].(float64); ok {
			if y, ok := a[1].(float64); ok {
				return op(x, y)
			}
		}
		x, err := juelNumber(a[0])
		if err != nil {
			return nil, err
		}
		y, err := juelNumber(a[1])
		if err != nil {
			return nil, err
		}
		if dop != opDouble && (juelDecimal(x) || juelDecimal(y)) {
			if dop == opQuo {
				if c, _ := numCmp(y, 0.0); c == 0 {
					return nil, errDivZero
				}
			}
			if r := decArith(x, y, dop); r != nil {
				return r, nil
			}
			return nil, errors.New("result is out of decimal128's range")
		}
		fx, _ := toFloat(x)
		fy, _ := toFloat(y)
		return op(fx, fy)
	}
}

// opDouble marks the remainder, which EL computes in Double even for a
// BigDecimal (EL 2.2, 1.8.3).
const opDouble arithOp = 255

var errDivZero = errors.New("division by zero")

// finite returns f, the result of double arithmetic, as an engine number:
// an error for an infinity or NaN, 0 for -0.
func finite(f float64) (float64, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, errors.New("result is not a finite number")
	}
	return f + 0, nil // -0 + 0 is 0
}

// juelGet is a.b and a["b"]: a map entry (null when absent), a list
// element by 0-based index (null when out of range).
func juelGet(a ...any) (any, error) {
	switch x := a[0].(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return x[juelStr(a[1])], nil
	case []any:
		f, err := juelNum(a[1])
		if err != nil {
			return nil, fmt.Errorf("list index: %w", err)
		}
		if f != math.Trunc(f) || f < 0 || f >= float64(len(x)) {
			return nil, nil
		}
		return x[int(f)], nil
	}
	return nil, fmt.Errorf("cannot read property %s of %s", juelStr(a[1]), typeName(a[0]))
}

func juelEmpty(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return false
}

func juelLen(v any) (any, error) {
	switch x := v.(type) {
	case string:
		return float64(utf8.RuneCountInString(x)), nil
	case []any:
		return float64(len(x)), nil
	case map[string]any:
		return float64(len(x)), nil
	}
	return nil, fmt.Errorf("%s has no length", typeName(v))
}

// juelMethods are the Java methods expressions may call, on strings,
// lists and maps. The receiver is the first argument.
var juelMethods = map[string]fnInfo{
	"contains": {min: 1, max: 1, fn: func(a ...any) (any, error) {
		switch x := a[0].(type) {
		case string:
			return strings.Contains(x, juelStr(a[1])), nil
		case []any:
			for _, e := range x {
				if eq, _ := juelEqual(e, a[1]); eq {
					return true, nil
				}
			}
			return false, nil
		}
		return nil, fmt.Errorf("contains: not defined on %s", typeName(a[0]))
	}},
	"containsKey": {min: 1, max: 1, fn: func(a ...any) (any, error) {
		if m, ok := a[0].(map[string]any); ok {
			_, has := m[juelStr(a[1])]
			return has, nil
		}
		return nil, fmt.Errorf("containsKey: not defined on %s", typeName(a[0]))
	}},
	"startsWith": {min: 1, max: 1, fn: strMethod("startsWith", func(s string, a []any) any { return strings.HasPrefix(s, juelStr(a[0])) })},
	"endsWith":   {min: 1, max: 1, fn: strMethod("endsWith", func(s string, a []any) any { return strings.HasSuffix(s, juelStr(a[0])) })},
	"equalsIgnoreCase": {min: 1, max: 1, fn: strMethod("equalsIgnoreCase", func(s string, a []any) any {
		t, ok := a[0].(string)
		return ok && strings.EqualFold(s, t)
	})},
	"toUpperCase": {fn: strMethod("toUpperCase", func(s string, _ []any) any { return strings.ToUpper(s) })},
	"toLowerCase": {fn: strMethod("toLowerCase", func(s string, _ []any) any { return strings.ToLower(s) })},
	"trim":        {fn: strMethod("trim", func(s string, _ []any) any { return strings.TrimSpace(s) })},
	"indexOf": {min: 1, max: 1, fn: func(a ...any) (any, error) {
		switch x := a[0].(type) {
		case string:
			i := strings.Index(x, juelStr(a[1]))
			if i < 0 {
				return -1.0, nil
			}
			return float64(utf8.RuneCountInString(x[:i])), nil
		case []any:
			for i, e := range x {
				if eq, _ := juelEqual(e, a[1]); eq {
					return float64(i), nil
				}
			}
			return -1.0, nil
		}
		return nil, fmt.Errorf("indexOf: not defined on %s", typeName(a[0]))
	}},
	"substring": {min: 1, max: 2, fn: func(a ...any) (any, error) {
		s, ok := a[0].(string)
		if !ok {
			return nil, fmt.Errorf("substring: not defined on %s", typeName(a[0]))
		}
		r := []rune(s)
		from, err := juelNum(a[1])
		if err != nil {
			return nil, err
		}
		to := float64(len(r))
		if len(a) == 3 {
			if to, err = juelNum(a[2]); err != nil {
				return nil, err
			}
		}
		if from < 0 || to > float64(len(r)) || from > to || from != math.Trunc(from) || to != math.Trunc(to) {
			return nil, fmt.Errorf("substring(%s, %s) out of range for length %d", formatNumber(from), formatNumber(to), len(r))
		}
		return string(r[int(from):int(to)]), nil
	}},
	"length":  {fn: func(a ...any) (any, error) { return juelLen(a[0]) }},
	"size":    {fn: func(a ...any) (any, error) { return juelLen(a[0]) }},
	"isEmpty": {fn: func(a ...any) (any, error) { return juelEmpty(a[0]), nil }},
	"equals": {min: 1, max: 1, fn: func(a ...any) (any, error) {
		// Java equals: same type and value, no coercion.
		if (a[0] == nil) != (a[1] == nil) {
			return false, nil
		}
		return feelEqual(a[0], a[1]) == true, nil
	}},
	"get": {min: 1, max: 1, fn: func(a ...any) (any, error) { return juelGet(a[0], a[1]) }},
	"toString": {fn: func(a ...any) (any, error) {
		return juelStr(a[0]), nil
	}},
}

func strMethod(name string, f func(s string, args []any) any) func(...any) (any, error) {
	return func(a ...any) (any, error) {
		s, ok := a[0].(string)
		if !ok {
			return nil, fmt.Errorf("%s: not defined on %s", name, typeName(a[0]))
		}
		return f(s, a[1:]), nil
	}
}

func cmpTest(test func(int) bool) func(...any) (any, error) { return juelCompare(test) }

// juelOps are the operators and helpers JUEL programs call.
var juelOps = map[string]fnInfo{
	"j.var": {view: true, fn: juelVar},
	"j.get": {view: true, pure: true, fn: juelGet},
	"j.bool": {view: true, pure: true, fn: func(a ...any) (any, error) {
		return juelBool(a[0])
	}},
	"j.not": {pure: true, fn: func(a ...any) (any, error) {
		b, err := juelBool(a[0])
		return !b, err
	}},
	"j.eq": {pure: true, fn: func(a ...any) (any, error) { return juelEqual(a[0], a[1]) }},
	"j.ne": {pure: true, fn: func(a ...any) (any, error) {
		b, err := juelEqual(a[0], a[1])
		return !b, err
	}},
	"j.lt":  {pure: true, fn: cmpTest(func(c int) bool { return c < 0 })},
	"j.le":  {pure: true, fn: cmpTest(func(c int) bool { return c <= 0 })},
	"j.gt":  {pure: true, fn: cmpTest(func(c int) bool { return c > 0 })},
	"j.ge":  {pure: true, fn: cmpTest(func(c int) bool { return c >= 0 })},
	"j.add": {pure: true, fn: juelArith(func(x, y float64) (float64, error) { return finite(x + y) }, opAdd)},
	"j.sub": {pure: true, fn: juelArith(func(x, y float64) (float64, error) { return finite(x - y) }, opSub)},
	"j.mul": {pure: true, fn: juelArith(func(x, y float64) (float64, error) { return finite(x * y) }, opMul)},
	"j.div": {pure: true, fn: juelArith(func(x, y float64) (float64, error) {
		if y == 0 {
			return 0, errDivZero
		}
		return finite(x / y)
	}, opQuo)},
	"j.mod": {pure: true, fn: juelArith(func(x, y float64) (float64, error) {
		if y == 0 {
			return 0, errDivZero
		}
		return finite(math.Mod(x, y))
	}, opDouble)},
	"j.neg": {pure: true, fn: func(a ...any) (any, error) {
		n, err := juelNumber(a[0])
		if err != nil {
			return nil, err
		}
		return numNeg(n), nil
	}},
	"j.empty": {view: true, pure: true, fn: func(a ...any) (any, error) { return juelEmpty(a[0]), nil }},
	"j.concat": {pure: true, fn: func(a ...any) (any, error) {
		var b strings.Builder
		for _, v := range a {
			b.WriteString(juelStr(v))
		}
		return b.String(), nil
	}},
}

// juelFuncs is every function JUEL programs may call: operators and
// methods (as "m.name").
var juelFuncs = func() map[string]fnInfo {
	m := make(map[string]fnInfo, len(juelOps)+len(juelMethods))
	for k, v := range juelOps {
		m[k] = v
	}
	for k, v := range juelMethods {
		v.pure = true
		m["m."+k] = v
	}
	return m
}()
