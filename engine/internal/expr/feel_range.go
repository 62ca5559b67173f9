package expr

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// feelRange is a FEEL range value ("[1..10)", "(null..5]"): a null end
// is unbounded.
type feelRange struct {
	lo, hi         any
	loIncl, hiIncl bool
}

// unaryTest is a comparison unary test used as a value ("(< 10)",
// "x in (1, >= 5)"). It is not a range: (< 10) = (null..10) is false.
type unaryTest struct {
	op string // "<", "<=", ">", ">=", "=", "!="
	v  any
}

// holds reports whether x passes the test; null when x cannot be
// compared with its value.
func (u unaryTest) holds(x any) any {
	switch u.op {
	case "=":
		return feelEqual(x, u.v)
	case "!=":
		if r, ok := feelEqual(x, u.v).(bool); ok {
			return !r
		}
		return nil
	}
	c, ok := compare(x, u.v)
	if !ok {
		return nil
	}
	switch u.op {
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	}
	return c >= 0
}

func (u unaryTest) String() string {
	var b strings.Builder
	b.WriteString(u.op + " ")
	writeFEEL(&b, u.v, true)
	return b.String()
}

// mkRange builds a range from its end points; null when the ends are of
// different kinds (DMN 1.5 10.3.2.7: the ends must be comparable).
func mkRange(lo, hi any, loIncl, hiIncl bool) any {
	if lo == nil && hi == nil {
		return nil
	}
	if lo != nil && hi != nil {
		if _, ok := compare(lo, hi); !ok {
			return nil
		}
	} else if _, ok := compare(rangeEnd(lo, hi), rangeEnd(lo, hi)); !ok {
		return nil
	}
	return feelRange{lo: lo, hi: hi, loIncl: loIncl && lo != nil, hiIncl: hiIncl && hi != nil}
}

func rangeEnd(lo, hi any) any {
	if lo != nil {
		return lo
	}
	return hi
}

// holds reports whether x is in the range; null when x cannot be
// compared with its ends.
func (r feelRange) holds(x any) any {
	in := true
	if r.lo != nil {
		c, ok := compare(x, r.lo)
		if !ok {
			return nil
		}
		in = c > 0 || r.loIncl && c == 0
	}
	if in && r.hi != nil {
		c, ok := compare(x, r.hi)
		if !ok {
			return nil
		}
		in = c < 0 || r.hiIncl && c == 0
	}
	return in
}

// equal is range equality: the same ends, included alike.
func (r feelRange) equal(o feelRange) bool {
	return r.loIncl == o.loIncl && r.hiIncl == o.hiIncl &&
		feelEqual(r.lo, o.lo) == true && feelEqual(r.hi, o.hi) == true
}

func (r feelRange) String() string {
	var b strings.Builder
	if r.loIncl {
		b.WriteByte('[')
	} else {
		b.WriteByte('(')
	}
	writeFEEL(&b, r.lo, true)
	b.WriteString("..")
	writeFEEL(&b, r.hi, true)
	if r.hiIncl {
		b.WriteByte(']')
	} else {
		b.WriteByte(')')
	}
	return b.String()
}

// maxSteps bounds the list a range expands to in "for i in a..b"; longer
// ranges are null rather than a list that could exhaust memory before
// the byte budget sees it.
const maxSteps = 1 << 20

// feelSource is what a for iterates over: a list, null as no items, a
// range of integers (ascending, its included integers), or a single
// value as a list of one.
func feelSource(v any) (any, error) {
	switch x := v.(type) {
	case []any:
		return x, nil
	case nil:
		return []any{}, nil
	case feelRange:
		lo, ok1 := x.lo.(float64)
		hi, ok2 := x.hi.(float64)
		if ok1 && ok2 && lo <= hi {
			if !x.loIncl {
				lo++
			}
			if !x.hiIncl {
				hi--
			}
			if l := feelSteps(math.Ceil(lo), math.Floor(hi)); l != nil && lo <= hi {
				return l, nil
			} else if lo > hi {
				return []any{}, nil
			}
		}
		return nil, fmt.Errorf("cannot iterate over the range %s: only ascending ranges of numbers can be", x)
	case unaryTest:
		return nil, fmt.Errorf("cannot iterate over the unary test %s", x)
	}
	return []any{v}, nil
}

// feelSteps is the list "a..b" stands for as a for source: the integers
// from a to b, or the dates, one day apart; descending when a > b.
func feelSteps(a, b any) any {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		lo, ok1 := wholeInt(x)
		hi, ok2 := wholeInt(y)
		if !ok || !ok1 || !ok2 || math.Abs(float64(hi-lo)) >= maxSteps {
			return nil
		}
		out := []any{}
		step := int64(1)
		if hi < lo {
			step = -1
		}
		for i := lo; ; i += step {
			out = append(out, float64(i))
			if i == hi {
				return out
			}
		}
	case date:
		y, ok := b.(date)
		if !ok {
			return nil
		}
		days := time.Time(y).Sub(time.Time(x)) / (24 * time.Hour)
		if days >= maxSteps || days <= -maxSteps {
			return nil
		}
		out := []any{}
		step := 1
		if days < 0 {
			step = -1
		}
		for i := 0; ; i += step {
			out = append(out, date(time.Time(x).AddDate(0, 0, i)))
			if time.Duration(i) == days {
				return out
			}
		}
	}
	return nil
}
