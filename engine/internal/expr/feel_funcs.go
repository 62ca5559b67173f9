package expr

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// FEEL runtime. FEEL never fails at evaluation: an operation on values of
// the wrong type, a missing variable or a bad function argument yields null,
// and null spreads through comparisons and arithmetic. A condition that ends
// up null is then reported by EvalBool (Zeebe raises an incident).

// feelEqual is FEEL '=': null equals only null; numbers compare by value
// across Go number types; values of different types are not comparable
// (null).
func feelEqual(a, b any) any {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return x == y
		}
		return nil
	case float64:
		if y, ok := b.(float64); ok {
			return x == y
		}
	case bool:
		if y, ok := b.(bool); ok {
			return x == y
		}
		return nil
	case []any:
		y, ok := b.([]any)
		if !ok {
			return nil
		}
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if r := feelEqual(x[i], y[i]); r != true {
				return r
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return nil
		}
		if len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok {
				return false
			}
			if r := feelEqual(xv, yv); r != true {
				return r
			}
		}
		return true
	case feelRange:
		switch y := b.(type) {
		case feelRange:
			return x.equal(y)
		case unaryTest:
			return false // a test is no range, though it may hold the same values
		}
		return nil
	case unaryTest:
		switch y := b.(type) {
		case unaryTest:
			return x.op == y.op && feelEqual(x.v, y.v) == true
		case feelRange:
			return false
		}
		return nil
	}
	if isTemporal(a) {
		if c, ok := compare(a, b); ok {
			return c == 0
		}
		return nil
	}
	if c, ok := numCmp(a, b); ok {
		return c == 0
	}
	return nil
}

// compare orders two values of the same orderable kind (numbers, strings,
// date-times, dates, durations). ok is false when they cannot be ordered.
func compare(a, b any) (c int, ok bool) {
	switch x := a.(type) {
	case float64:
		if y, ok := b.(float64); ok {
			return cmpFloat(x, y)
		}
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y), true
		}
		return 0, false
	case time.Time:
		if y, ok := b.(time.Time); ok {
			return x.Compare(y), true
		}
		return 0, false
	case date:
		if y, ok := b.(date); ok {
			return time.Time(x).Compare(time.Time(y)), true
		}
		return 0, false
	case localDateTime:
		if y, ok := b.(localDateTime); ok {
			return time.Time(x).Compare(time.Time(y)), true
		}
		return 0, false
	case timeOfDay:
		y, ok := b.(timeOfDay)
		switch {
		case !ok || (x.zone == nil) != (y.zone == nil):
			return 0, false
		case x.zone == nil:
			return cmpInt(x.ns, y.ns), true
		}
		return cmpInt(x.utcNanos(), y.utcNanos()), true
	case time.Duration:
		if y, ok := b.(time.Duration); ok {
			return cmpInt(int64(x), int64(y)), true
		}
		return 0, false
	case ymDuration:
		if y, ok := b.(ymDuration); ok {
			return cmpInt(int64(x), int64(y)), true
		}
		return 0, false
	}
	if c, ok := numCmp(a, b); ok {
		return c, true
	}
	return 0, false
}

func cmpInt(x, y int64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func cmpFloat(x, y float64) (int, bool) {
	switch {
	case x < y:
		return -1, true
	case x > y:
		return 1, true
	case x == y:
		return 0, true
	}
	return 0, false // NaN
}

func feelCmp(test func(int) bool) func(...any) (any, error) {
	return func(a ...any) (any, error) {
		c, ok := compare(a[0], a[1])
		if !ok {
			return nil, nil
		}
		return test(c), nil
	}
}

func feelAdd(a, b any) any {
	switch x := a.(type) {
	case float64:
		if y, ok := b.(float64); ok {
			return numAdd(x, y)
		}
	case string:
		if y, ok := b.(string); ok {
			return x + y
		}
		return nil
	case time.Duration:
		switch y := b.(type) {
		case time.Duration:
			if s := x + y; (s > x) == (y > 0) {
				return s
			}
			return nil
		case ymDuration:
			return nil
		}
		if isTemporal(b) {
			return feelAdd(b, a)
		}
		return nil
	case ymDuration:
		if y, ok := b.(ymDuration); ok {
			return x + y
		}
		if isTemporal(b) {
			return feelAdd(b, a)
		}
		return nil
	case time.Time, localDateTime, date, timeOfDay:
		return shift(a, b, 1)
	}
	if isNumber(a) && isNumber(b) {
		return decArith(a, b, opAdd)
	}
	return nil
}

// shift adds (sign 1) or subtracts (sign -1) duration d to or from the
// date, date and time or time a; null when d is not a duration.
func shift(a, d any, sign int64) any {
	switch d := d.(type) {
	case time.Duration:
		n := time.Duration(sign) * d
		switch x := a.(type) {
		case time.Time:
			return x.Add(n)
		case localDateTime:
			return localDateTime(time.Time(x).Add(n))
		case date:
			return addToDate(x, n)
		case timeOfDay:
			day := int64(24 * time.Hour)
			x.ns = ((x.ns+int64(n)%day)%day + day) % day
			return x
		}
	case ymDuration:
		n := sign * int64(d)
		switch x := a.(type) {
		case time.Time:
			if t, ok := addMonths(x, n); ok {
				return t
			}
		case localDateTime:
			if t, ok := addMonths(time.Time(x), n); ok {
				return localDateTime(t)
			}
		case date:
			if t, ok := addMonths(time.Time(x), n); ok {
				return date(t)
			}
		}
	}
	return nil
}

// addToDate adds d to a date. FEEL keeps a date a date: the date is
// midnight for the sum, whose date is the result (DMN 1.4 10.3.2.3.6).
func addToDate(x date, d time.Duration) any {
	return dateOf(time.Time(x).Add(d))
}

func feelSub(a, b any) any {
	switch x := a.(type) {
	case time.Time, localDateTime, date:
		if at, az, ok := temporalInstant(a); ok {
			if bt, bz, ok := temporalInstant(b); ok {
				if az != bz {
					return nil
				}
				return between(bt, at)
			}
		}
		return shift(a, b, -1)
	case timeOfDay:
		if y, ok := b.(timeOfDay); ok {
			if _, ok := compare(x, y); ok {
				if x.zone == nil {
					return time.Duration(x.ns - y.ns)
				}
				return time.Duration(x.utcNanos() - y.utcNanos())
			}
			return nil
		}
		return shift(a, b, -1)
	case time.Duration:
		if y, ok := b.(time.Duration); ok {
			return feelAdd(x, -y)
		}
		return nil
	case ymDuration:
		if y, ok := b.(ymDuration); ok {
			return x - y
		}
		return nil
	}
	if x, ok := a.(float64); ok {
		if y, ok := b.(float64); ok {
			return numSub(x, y)
		}
	}
	if isNumber(a) && isNumber(b) {
		return decArith(a, b, opSub)
	}
	return nil
}

// between returns b - a as a duration, or null when it does not fit one
// (about 292 years).
func between(a, b time.Time) any {
	secs := b.Unix() - a.Unix()
	if secs > math.MaxInt64/int64(time.Second)-1 || secs < math.MinInt64/int64(time.Second)+1 {
		return nil
	}
	return time.Duration(secs)*time.Second + time.Duration(b.Nanosecond()-a.Nanosecond())
}

func feelMul(a, b any) any {
	if _, ok := b.(ymDuration); ok {
		a, b = b, a
	}
	if d, ok := a.(ymDuration); ok {
		if n, ok := toFloat(b); ok {
			return scaleMonths(float64(d) * n)
		}
		return nil
	}
	if d, ok := a.(time.Duration); ok {
		if n, ok := toFloat(b); ok {
			return scaleDuration(d, n)
		}
		return nil
	}
	if d, ok := b.(time.Duration); ok {
		if n, ok := toFloat(a); ok {
			return scaleDuration(d, n)
		}
		return nil
	}
	if x, ok := a.(float64); ok {
		if y, ok := b.(float64); ok {
			return numMul(x, y)
		}
	}
	if isNumber(a) && isNumber(b) {
		return decArith(a, b, opMul)
	}
	return nil
}

func scaleDuration(d time.Duration, n float64) any {
	f := float64(d) * n
	if math.IsNaN(f) || math.Abs(f) > math.MaxInt64 {
		return nil
	}
	return time.Duration(f)
}

// scaleMonths returns a count of months as a ymDuration, truncated to
// whole months as java.time's Period is.
func scaleMonths(f float64) any {
	if math.IsNaN(f) || math.Abs(f) > 12*maxYear {
		return nil
	}
	return ymDuration(math.Trunc(f))
}

func feelDiv(a, b any) any {
	if d, ok := a.(ymDuration); ok {
		switch y := b.(type) {
		case ymDuration:
			if y == 0 {
				return nil
			}
			return float64(d) / float64(y)
		default:
			n, ok := toFloat(y)
			if !ok || n == 0 {
				return nil
			}
			return scaleMonths(float64(d) / n)
		}
	}
	if d, ok := a.(time.Duration); ok {
		switch y := b.(type) {
		case time.Duration:
			if y == 0 {
				return nil
			}
			return float64(d) / float64(y)
		default:
			n, ok := toFloat(y)
			if !ok || n == 0 {
				return nil
			}
			return scaleDuration(d, 1/n)
		}
	}
	if x, ok := a.(float64); ok {
		if y, ok := b.(float64); ok {
			return numDiv(x, y)
		}
	}
	if isNumber(a) && isNumber(b) {
		return decArith(a, b, opQuo)
	}
	return nil
}

func feelPow(a, b any) any { return numPow(a, b) }

func feelNeg(a any) any {
	switch d := a.(type) {
	case time.Duration:
		return -d
	case ymDuration:
		return -d
	}
	return numNeg(a)
}

// feelGet is the path a.key: a context's entry, a list's projection, or a
// temporal value's component; null otherwise.
func feelGet(a any, key string) any {
	switch x := a.(type) {
	case map[string]any:
		return x[key]
	case feelRange, unaryTest:
		return rangeProperty(x, key)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = feelGet(e, key)
		}
		return out
	case time.Time:
		return timeComponent(x, key, true, true)
	case localDateTime:
		return timeComponent(time.Time(x), key, true, false)
	case date:
		return timeComponent(time.Time(x), key, false, false)
	case timeOfDay:
		switch key {
		case "hour":
			return float64(x.ns / int64(time.Hour))
		case "minute":
			return float64(x.ns / int64(time.Minute) % 60)
		case "second":
			return float64(x.ns/int64(time.Second)%60) + float64(x.ns%int64(time.Second))/1e9
		case "time offset", "timezone":
			if x.zone == nil {
				return nil
			}
			return zoneProperty(x.zone, x.offset(), key)
		}
	case time.Duration:
		switch key {
		case "days":
			return float64(x / (24 * time.Hour))
		case "hours":
			return float64(x % (24 * time.Hour) / time.Hour)
		case "minutes":
			return float64(x % time.Hour / time.Minute)
		case "seconds":
			return float64(x%time.Minute) / float64(time.Second)
		}
	case ymDuration:
		switch key {
		case "years":
			return float64(x / 12)
		case "months":
			return float64(x % 12)
		}
	}
	return nil
}

// zoneProperty is a zoned value's "time offset" (a duration) or
// "timezone" (the IANA name, null for a bare offset).
func zoneProperty(loc *time.Location, off int, key string) any {
	if key == "time offset" {
		return time.Duration(off) * time.Second
	}
	if loc == time.UTC || loc.String() == "" {
		return nil
	}
	return loc.String()
}

func timeComponent(t time.Time, key string, clock, zoned bool) any {
	switch key {
	case "year":
		return float64(t.Year())
	case "month":
		return float64(t.Month())
	case "day":
		return float64(t.Day())
	case "weekday":
		wd := t.Weekday()
		if wd == time.Sunday {
			return 7.0
		}
		return float64(wd)
	}
	if !clock {
		return nil
	}
	switch key {
	case "hour":
		return float64(t.Hour())
	case "minute":
		return float64(t.Minute())
	case "second":
		return float64(t.Second()) + float64(t.Nanosecond())/1e9
	case "time offset", "timezone":
		if !zoned {
			return nil
		}
		_, off := t.Zone()
		return zoneProperty(t.Location(), off, key)
	}
	return nil
}

// feelIndex is a[i] with a number i: 1-based, negative from the end, null
// when out of range. A boolean i keeps (true) or drops (false) the whole
// list, as a filter that does not mention the item would.
func feelIndex(a, i any) any {
	list, ok := a.([]any)
	if !ok {
		if a == nil {
			return nil
		}
		list = []any{a} // FEEL: a single value is a list of one
	}
	switch i := i.(type) {
	case bool:
		if i {
			return list
		}
		return []any{}
	}
	n, ok := toFloat(i)
	if !ok || n != math.Trunc(n) {
		return nil
	}
	switch {
	case n >= 1 && n <= float64(len(list)):
		return list[int(n)-1]
	case n < 0 && -n <= float64(len(list)):
		return list[len(list)+int(n)]
	}
	return nil
}

// feelAsList prepares a filter's input: a list as is, null as the empty
// list, any other value as a list of one.
func feelAsList(a any) any {
	switch a := a.(type) {
	case []any:
		return a
	case nil:
		return []any{}
	}
	return []any{a}
}

// feelItem resolves a name inside a filter: the current item's entry when
// the item is a context holding it, otherwise the outer value.
func feelItem(item any, name string, outer any) any {
	if m, ok := item.(map[string]any); ok {
		if v, ok := m[name]; ok {
			return v
		}
	}
	return outer
}

// feelIn is "x in set": set is a list (of values or ranges, any of which
// may hold x), a range, or a value x must equal.
func feelIn(x, set any) any {
	if list, ok := set.([]any); ok {
		for _, e := range list {
			if feelInOne(x, e) {
				return true
			}
		}
		return false
	}
	return feelInOne(x, set)
}

// feelInOne tests x against one positive unary test: a range, a
// comparison, or a value to equal.
func feelInOne(x, t any) bool {
	switch t := t.(type) {
	case feelRange:
		return t.holds(x) == true
	case unaryTest:
		return t.holds(x) == true
	}
	return feelEqual(x, t) == true
}

func feelInRange(x, lo, hi any, loIncl, hiIncl bool) any {
	c1, ok1 := compare(x, lo)
	c2, ok2 := compare(x, hi)
	if !ok1 || !ok2 {
		return nil
	}
	return (c1 > 0 || loIncl && c1 == 0) && (c2 < 0 || hiIncl && c2 == 0)
}

func feelString(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		return x
	}
	var b strings.Builder
	writeFEEL(&b, v, false)
	return b.String()
}

// writeFEEL writes v as FEEL's string() shows it; nested strings are quoted.
func writeFEEL(b *strings.Builder, v any, nested bool) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case string:
		if nested {
			b.WriteString(strconv.Quote(x))
		} else {
			b.WriteString(x)
		}
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeFEEL(b, e, true)
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		for i, k := range sortedKeys(x) {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(k)
			b.WriteString(":")
			writeFEEL(b, x[k], true)
		}
		b.WriteByte('}')
	case time.Time:
		b.WriteString(formatDateTime(x))
	case feelRange:
		b.WriteString(x.String())
	case unaryTest:
		b.WriteString(x.String())
	default:
		if s, ok := numText(v); ok {
			b.WriteString(s)
			return
		}
		n := normalize(v)
		if s, ok := n.(string); ok {
			b.WriteString(s)
			return
		}
		b.WriteString(typeName(v))
	}
}

func str1(a []any) (string, bool) {
	s, ok := a[0].(string)
	return s, ok
}

func str2(a []any) (string, string, bool) {
	s, ok1 := a[0].(string)
	t, ok2 := a[1].(string)
	return s, t, ok1 && ok2
}

// numbersOf returns the numbers a function like sum() was given: one list
// argument, or the arguments themselves. ok is false if any is not a number.
func itemsOf(a []any) []any {
	if len(a) == 1 {
		if l, ok := a[0].([]any); ok {
			return l
		}
	}
	return a
}

func feelSubstring(a []any) any {
	s, ok := a[0].(string)
	start, ok2 := toFloat(a[1])
	if !ok || !ok2 || start != math.Trunc(start) {
		return nil
	}
	r := []rune(s)
	n := float64(len(r))
	var from float64
	switch {
	case start > 0:
		from = start - 1
	case start < 0:
		from = n + start
	default:
		from = 0
	}
	if from < 0 {
		from = 0
	}
	if from > n {
		from = n
	}
	to := n
	if len(a) == 3 {
		l, ok := toFloat(a[2])
		if !ok || l < 0 {
			return nil
		}
		l = math.Trunc(l) // a length is a count of characters
		if from+l < to {
			to = from + l
		}
	}
	return string(r[int(from):int(to)])
}

// feelCoreLibrary is the first part of feelLibrary.
var feelCoreLibrary = map[string]fnInfo{
	"not": {min: 1, max: 1, pure: true, fn: func(a ...any) (any, error) {
		if b, ok := a[0].(bool); ok {
			return !b, nil
		}
		return nil, nil
	}},
	"contains": {min: 2, max: 2, pure: true, fn: func(a ...any) (any, error) {
		if s, t, ok := str2(a); ok {
			return strings.Contains(s, t), nil
		}
		return nil, nil
	}},
	"starts with": {min: 2, max: 2, pure: true, fn: func(a ...any) (any, error) {
		if s, t, ok := str2(a); ok {
			return strings.HasPrefix(s, t), nil
		}
		return nil, nil
	}},
	"ends with": {min: 2, max: 2, pure: true, fn: func(a ...any) (any, error) {
		if s, t, ok := str2(a); ok {
			return strings.HasSuffix(s, t), nil
		}
		return nil, nil
	}},
	"upper case": {min: 1, max: 1, pure: true, fn: func(a ...any) (any, error) {
		if s, ok := str1(a); ok {
			return strings.ToUpper(s), nil
		}
		return nil, nil
	}},
	"lower case": {min: 1, max: 1, pure: true, fn: func(a ...any) (any, error) {
		if s, ok := str1(a); ok {
			return strings.ToLower(s), nil
		}
		return nil, nil
	}},
	"string length": {min: 1, max: 1, pure: true, fn: func(a ...any) (any, error) {
		if s, ok := str1(a); ok {
			return float64(utf8.RuneCountInString(s)), nil
		}
		return nil, nil
	}},
	"substring": {min: 2, max: 3, pure: true, fn: func(a ...any) (any, error) {
		return feelSubstring(a), nil
	}},
	"count": {view: true, min: 1, max: 1, pure: true, fn: func(a ...any) (any, error) {
		if l, ok := a[0].([]any); ok {
			return float64(len(l)), nil
		}
		return nil, nil
	}},
	"list contains": {min: 2, max: 2, pure: true, fn: func(a ...any) (any, error) {
		if l, ok := a[0].([]any); ok {
			return feelIn(a[1], l), nil
		}
		return nil, nil
	}},
	"sum": {min: 1, max: -1, pure: true, fn: func(a ...any) (any, error) {
		// DMN 1.5: the sum of no numbers is null, as their mean is.
		items := itemsOf(a)
		s, ok := sumOfNumbers(items)
		if !ok || len(items) == 0 {
			return nil, nil
		}
		return numberOf(s), nil
	}},
	"min": {min: 1, max: -1, pure: true, fn: func(a ...any) (any, error) { return extreme(itemsOf(a), -1), nil }},
	"max": {min: 1, max: -1, pure: true, fn: func(a ...any) (any, error) { return extreme(itemsOf(a), 1), nil }},
	"abs": {min: 1, max: 1, pure: true, fn: func(a ...any) (any, error) {
		switch d := a[0].(type) {
		case time.Duration:
			if d < 0 {
				return -d, nil
			}
			return d, nil
		case ymDuration:
			if d < 0 {
				return -d, nil
			}
			return d, nil
		}
		return numAbs(a[0]), nil
	}},
	"string": {min: 1, max: 1, pure: true, fn: func(a ...any) (any, error) { return feelString(a[0]), nil }},
	"number": {min: 1, max: 3, pure: true, fn: func(a ...any) (any, error) { return feelNumber(a), nil }},
	"duration": {min: 1, max: 1, pure: true, fn: func(a ...any) (any, error) {
		if s, ok := str1(a); ok {
			if d, ok := parseFEELDuration(s); ok {
				return d, nil
			}
		}
		return nil, nil
	}},
	"years and months duration": {min: 2, max: 2, pure: true, fn: func(a ...any) (any, error) {
		from, _, ok1 := temporalInstant(a[0])
		to, _, ok2 := temporalInstant(a[1])
		if !ok1 || !ok2 {
			return nil, nil
		}
		return monthsBetween(from, to), nil
	}},
	"date and time": {min: 1, max: 2, pure: true, fn: func(a ...any) (any, error) {
		if len(a) == 2 {
			d, ok1 := dateOfAny(a[0])
			t, ok2 := a[1].(timeOfDay)
			if !ok1 || !ok2 {
				return nil, nil
			}
			return combine(d, t), nil
		}
		switch x := a[0].(type) {
		case string:
			if t, ok := parseFEELDateTime(x); ok {
				return t, nil
			}
		case time.Time, localDateTime:
			return x, nil
		case date:
			return localDateTime(x), nil
		}
		return nil, nil
	}},
	"date": {min: 1, max: 3, pure: true, fn: func(a ...any) (any, error) {
		if len(a) == 3 {
			var ymd [3]int
			for i, x := range a {
				f, ok := toFloat(x)
				n, whole := wholeInt(f)
				if !ok || !whole {
					return nil, nil
				}
				ymd[i] = int(n)
			}
			if d, ok := makeDate(ymd[0], ymd[1], ymd[2]); ok {
				return d, nil
			}
			return nil, nil
		}
		if len(a) != 1 {
			return nil, nil
		}
		if s, ok := a[0].(string); ok {
			if d, ok := parseFEELDate(s); ok {
				return d, nil
			}
			return nil, nil
		}
		if d, ok := dateOfAny(a[0]); ok {
			return d, nil
		}
		return nil, nil
	}},
	"time": {min: 1, max: 4, pure: true, fn: func(a ...any) (any, error) {
		if len(a) >= 3 {
			return timeOfParts(a), nil
		}
		if len(a) != 1 {
			return nil, nil
		}
		switch x := a[0].(type) {
		case string:
			if t, ok := parseFEELTime(x); ok {
				return t, nil
			}
		case timeOfDay:
			return x, nil
		case time.Time:
			return timeOfDay{ns: wallClock(x), zone: x.Location()}, nil
		case localDateTime:
			return timeOfDay{ns: wallClock(time.Time(x))}, nil
		case date:
			return timeOfDay{zone: time.UTC}, nil
		}
		return nil, nil
	}},
	// now and today are bound to the compile options' clock (see
	// compiler.clockFuncs); they are listed here for their arity.
	"now":   {min: 0, max: 0},
	"today": {min: 0, max: 0},
	// is defined is compiled specially (it needs the variable's absence,
	// not its value); listed for its arity.
	"is defined": {min: 1, max: 1},
}

// dateOfAny is the date of a date or a date and time.
func dateOfAny(v any) (date, bool) {
	switch x := v.(type) {
	case date:
		return x, true
	case time.Time:
		return dateOf(x), true
	case localDateTime:
		return dateOf(time.Time(x)), true
	}
	return date{}, false
}

// timeOfParts is time(hour, minute, second[, offset]): the second may
// have a fraction, the offset is a days and time duration (or null).
func timeOfParts(a []any) any {
	var hms [3]float64
	for i := range hms {
		f, ok := toFloat(a[i])
		if !ok {
			return nil
		}
		hms[i] = f
	}
	h, ok1 := wholeInt(hms[0])
	m, ok2 := wholeInt(hms[1])
	if !ok1 || !ok2 || h < 0 || h > 23 || m < 0 || m > 59 || hms[2] < 0 || hms[2] >= 60 {
		return nil
	}
	t := timeOfDay{ns: h*int64(time.Hour) + m*int64(time.Minute) + int64(math.Round(hms[2]*1e9))}
	if len(a) == 4 && a[3] != nil {
		off, ok := a[3].(time.Duration)
		if !ok || off%time.Second != 0 || off > 18*time.Hour || off < -18*time.Hour {
			return nil
		}
		t.zone = offsetZone(int(off / time.Second))
	}
	return t
}

func dateOf(t time.Time) date {
	y, m, d := t.Date()
	return date(time.Date(y, m, d, 0, 0, 0, 0, time.UTC))
}

// extreme returns the smallest (sign -1) or largest (sign 1) item, or null
// if the items are empty or not mutually ordered.
func extreme(items []any, sign int) any {
	if len(items) == 0 {
		return nil
	}
	best := items[0]
	for _, e := range items[1:] {
		c, ok := compare(e, best)
		if !ok {
			return nil
		}
		if c*sign > 0 {
			best = e
		}
	}
	if len(items) == 1 {
		if _, ok := compare(best, best); !ok {
			return nil
		}
	}
	if f, ok := toFloat(best); ok {
		return f
	}
	return best
}

// feelDefined walks a name path through env and reports whether every step
// exists (a variable set to null is defined).
func feelDefined(a ...any) (any, error) {
	var cur any = a[0]
	for _, k := range a[1:] {
		m, ok := cur.(map[string]any)
		if !ok {
			return false, nil
		}
		cur, ok = m[k.(string)]
		if !ok {
			return false, nil
		}
	}
	return true, nil
}

// feelOps are the operators; they are pure and take fixed arguments.
var feelOps = map[string]fnInfo{
	"f.eq": {pure: true, fn: func(a ...any) (any, error) { return feelEqual(a[0], a[1]), nil }},
	"f.ne": {pure: true, fn: func(a ...any) (any, error) {
		if r, ok := feelEqual(a[0], a[1]).(bool); ok {
			return !r, nil
		}
		return nil, nil
	}},
	"f.lt": {pure: true, fn: feelCmp(func(c int) bool { return c < 0 })},
	"f.le": {pure: true, fn: feelCmp(func(c int) bool { return c <= 0 })},
	"f.gt": {pure: true, fn: feelCmp(func(c int) bool { return c > 0 })},
	"f.ge": {pure: true, fn: feelCmp(func(c int) bool { return c >= 0 })},
	"f.and": {pure: true, fn: func(a ...any) (any, error) {
		x, y := a[0], a[1]
		if x == false || y == false {
			return false, nil
		}
		if x == true && y == true {
			return true, nil
		}
		return nil, nil
	}},
	"f.or": {pure: true, fn: func(a ...any) (any, error) {
		x, y := a[0], a[1]
		if x == true || y == true {
			return true, nil
		}
		if x == false && y == false {
			return false, nil
		}
		return nil, nil
	}},
	"f.true": {view: true, pure: true, fn: func(a ...any) (any, error) { return a[0] == true, nil }},
	"f.add":  {pure: true, fn: func(a ...any) (any, error) { return feelAdd(a[0], a[1]), nil }},
	"f.sub":  {pure: true, fn: func(a ...any) (any, error) { return feelSub(a[0], a[1]), nil }},
	"f.mul":  {pure: true, fn: func(a ...any) (any, error) { return feelMul(a[0], a[1]), nil }},
	"f.div":  {pure: true, fn: func(a ...any) (any, error) { return feelDiv(a[0], a[1]), nil }},
	"f.pow":  {pure: true, fn: func(a ...any) (any, error) { return feelPow(a[0], a[1]), nil }},
	"f.neg":  {pure: true, fn: func(a ...any) (any, error) { return feelNeg(a[0]), nil }},
	"f.get": {view: true, projects: true, pure: true, fn: func(a ...any) (any, error) {
		return feelGet(a[0], a[1].(string)), nil
	}},
	"f.index":  {view: true, pure: true, fn: func(a ...any) (any, error) { return feelIndex(a[0], a[1]), nil }},
	"f.aslist": {view: true, fn: func(a ...any) (any, error) { return feelAsList(a[0]), nil }},
	// f.concat joins a list of lists: the results of a for over several
	// iteration contexts.
	"f.concat": {fn: func(a ...any) (any, error) {
		var out []any
		for _, l := range a[0].([]any) {
			out = append(out, l.([]any)...)
		}
		if out == nil {
			out = []any{}
		}
		return out, nil
	}},
	"f.item":    {view: true, fn: func(a ...any) (any, error) { return feelItem(a[0], a[1].(string), a[2]), nil }},
	"f.in":      {pure: true, fn: func(a ...any) (any, error) { return feelIn(a[0], a[1]), nil }},
	"f.defined": {view: true, fn: feelDefined},
	"f.notnull": {view: true, pure: true, fn: func(a ...any) (any, error) { return a[0] != nil, nil }},
	"f.string": {view: true, pure: true, fn: func(a ...any) (any, error) {
		if s, ok := a[0].(string); ok {
			return s, nil
		}
		return nil, nil
	}},
	"f.mkrange": {fn: func(a ...any) (any, error) { return mkRange(a[0], a[1], a[2] == true, a[3] == true), nil }},
	"f.test":    {fn: func(a ...any) (any, error) { return unaryTest{op: a[0].(string), v: a[1]}, nil }},
	"f.source":  {fn: func(a ...any) (any, error) { return feelSource(a[0]) }},
	"f.steps": {fn: func(a ...any) (any, error) {
		if l := feelSteps(a[0], a[1]); l != nil {
			return l, nil
		}
		return nil, fmt.Errorf("cannot iterate from %s to %s: the ends must be integers or dates", feelString(a[0]), feelString(a[1]))
	}},
	"f.instance": {fn: func(a ...any) (any, error) { return a[1].(*feelType).has(a[0]), nil }},
	"f.between":  {pure: true, fn: func(a ...any) (any, error) { return feelInRange(a[0], a[1], a[2], true, true), nil }},
	"f.range": {pure: true, fn: func(a ...any) (any, error) {
		return feelInRange(a[0], a[1], a[2], a[3] == true, a[4] == true), nil
	}},
}
