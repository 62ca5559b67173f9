package expr

import (
	"fmt"
	"math"
	"math/big"
	"regexp"
	"regexp/syntax"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"
)

// The FEEL built-ins beyond the core ones of feel_funcs.go: DMN 1.5
// chapter 10.3.4 (conversion, boolean, string, numeric, list, context and
// temporal functions) and the Camunda extensions modellers use. The list
// of what is supported is FEEL.md. Every function yields null for
// arguments of the wrong types, as FEEL requires.

// feelParams are the parameter names of the built-ins, for calls with
// named arguments ("substring(string: s, start position: 2)"), as DMN
// 1.5 names them.
var feelParams = map[string][]string{
	"not": {"negand"}, "substring": {"string", "start position", "length"},
	"string length": {"string"}, "upper case": {"string"}, "lower case": {"string"},
	"substring before": {"string", "match"}, "substring after": {"string", "match"},
	"replace": {"input", "pattern", "replacement", "flags"}, "contains": {"string", "match"},
	"starts with": {"string", "match"}, "ends with": {"string", "match"},
	"matches": {"input", "pattern", "flags"}, "split": {"string", "delimiter"},
	"string join": {"list", "delimiter"}, "extract": {"string", "pattern"}, "trim": {"string"},
	"list contains": {"list", "element"}, "count": {"list"}, "min": {"list"}, "max": {"list"},
	"sum": {"list"}, "mean": {"list"}, "all": {"list"}, "any": {"list"},
	"sublist": {"list", "start position", "length"}, "append": {"list", "item"},
	"concatenate": {"list"}, "insert before": {"list", "position", "newItem"},
	"remove": {"list", "position"}, "reverse": {"list"}, "index of": {"list", "match"},
	"union": {"list"}, "distinct values": {"list"}, "flatten": {"list"}, "product": {"list"},
	"median": {"list"}, "stddev": {"list"}, "mode": {"list"}, "is empty": {"list"},
	"list replace": {"list", "position", "newItem"}, "sort": {"list", "precedes"},
	"decimal": {"n", "scale"}, "floor": {"n", "scale"}, "ceiling": {"n", "scale"},
	"round up": {"n", "scale"}, "round down": {"n", "scale"}, "round half up": {"n", "scale"},
	"round half down": {"n", "scale"}, "abs": {"n"}, "modulo": {"dividend", "divisor"},
	"sqrt": {"number"}, "log": {"number"}, "exp": {"number"}, "odd": {"number"}, "even": {"number"},
	"number": {"from", "grouping separator", "decimal separator"}, "string": {"from"},
	"duration": {"from"}, "years and months duration": {"from", "to"},
	"is": {"value1", "value2"}, "get value": {"m", "key"}, "get entries": {"m"},
	"context": {"entries"}, "context put": {"context", "key", "value"}, "context merge": {"contexts"},
	"day of year": {"date"}, "day of week": {"date"}, "month of year": {"date"}, "week of year": {"date"},
	"get or else": {"value", "default"}, "date": {"from"}, "date and time": {"from"}, "time": {"from"},
	"range": {"from"},
}

// feelParamsAlt are the parameter names of the other signature of
// functions that have two.
var feelParamsAlt = map[string][]string{
	"date":          {"year", "month", "day"},
	"date and time": {"date", "time"},
	"time":          {"hour", "minute", "second", "offset"},
	"context put":   {"context", "keys", "value"},
	"list replace":  {"list", "match", "newItem"},
}

// feelLibrary is every FEEL built-in by name (as users write them,
// multi-word names included), with its arity.
var feelLibrary = func() map[string]fnInfo {
	m := make(map[string]fnInfo, len(feelCoreLibrary)+len(feelMoreLibrary)+len(feelRangeLibrary)+len(feelDMNLibrary))
	for _, lib := range []map[string]fnInfo{feelCoreLibrary, feelMoreLibrary, feelRangeLibrary, feelDMNLibrary} {
		for k, v := range lib {
			m[k] = withConversions(k, v)
		}
	}
	return m
}()

// feelMoreLibrary is merged into feelLibrary.
var feelMoreLibrary = map[string]fnInfo{
	"sort": {min: 2, max: 2, calls: true, fn: feelSort},
	"substring before": {min: 2, max: 2, pure: true, fn: func(a ...any) (any, error) {
		if s, m, ok := str2(a); ok {
			if i := strings.Index(s, m); i >= 0 {
				return s[:i], nil
			}
			return "", nil
		}
		return nil, nil
	}},
	"substring after": {min: 2, max: 2, pure: true, fn: func(a ...any) (any, error) {
		if s, m, ok := str2(a); ok {
			if i := strings.Index(s, m); i >= 0 {
				return s[i+len(m):], nil
			}
			return "", nil
		}
		return nil, nil
	}},
	"trim": {min: 1, max: 1, pure: true, fn: func(a ...any) (any, error) {
		if s, ok := str1(a); ok {
			return strings.TrimSpace(s), nil
		}
		return nil, nil
	}},
	"matches": {min: 2, max: 3, pure: true, fn: func(a ...any) (any, error) {
		s, ok := a[0].(string)
		re, err := feelRegexp(a[1:])
		if !ok || re == nil {
			return nil, err
		}
		return re.MatchString(s), nil
	}},
	"replace": {min: 3, max: 4, pure: true, fn: func(a ...any) (any, error) {
		s, ok1 := a[0].(string)
		r, ok2 := a[2].(string)
		re, err := feelRegexp(append([]any{a[1]}, a[3:]...))
		if !ok1 || !ok2 || re == nil || re.MatchString("") {
			return nil, err // XPath: a pattern matching "" is an error
		}
		tmpl, ok := feelReplacement(r)
		if !ok {
			return nil, nil
		}
		return re.ReplaceAllString(s, tmpl), nil
	}},
	"split": {min: 2, max: 2, pure: true, fn: func(a ...any) (any, error) {
		s, ok := a[0].(string)
		re, err := feelRegexp(a[1:2])
		if !ok || re == nil || re.MatchString("") {
			return nil, err
		}
		return strs(re.Split(s, -1)), nil
	}},
	"extract": {min: 2, max: 2, pure: true, fn: func(a ...any) (any, error) {
		s, ok := a[0].(string)
		re, err := feelRegexp(a[1:2])
		if !ok || re == nil {
			return nil, err
		}
		return strs(re.FindAllString(s, -1)), nil
	}},
	"string join": {min: 1, max: 2, pure: true, fn: func(a ...any) (any, error) {
		l, ok := a[0].([]any)
		if s, isStr := a[0].(string); isStr {
			l, ok = []any{s}, true // a single value is a list of one
		}
		if !ok {
			return nil, nil
		}
		sep := ""
		if len(a) == 2 && a[1] != nil {
			if sep, ok = a[1].(string); !ok {
				return nil, nil
			}
		}
		var parts []string
		for _, e := range l {
			switch e := e.(type) {
			case nil:
			case string:
				parts = append(parts, e)
			default:
				return nil, nil
			}
		}
		return strings.Join(parts, sep), nil
	}},

	"all": {min: 1, max: -1, pure: true, fn: func(a ...any) (any, error) { return allAny(itemsOf(a), false), nil }},
	"any": {min: 1, max: -1, pure: true, fn: func(a ...any) (any, error) { return allAny(itemsOf(a), true), nil }},
	"mean": {min: 1, max: -1, pure: true, fn: func(a ...any) (any, error) {
		items := itemsOf(a)
		s, ok := sumOfNumbers(items)
		if !ok || len(items) == 0 {
			return nil, nil
		}
		return decArith(s, float64(len(items)), opQuo), nil
	}},
	"product": {min: 1, max: -1, pure: true, fn: func(a ...any) (any, error) {
		items := itemsOf(a)
		if len(items) == 0 {
			return nil, nil
		}
		var p any = 1.0
		for _, n := range items {
			if _, isBool := n.(bool); isBool || !isNumber(n) {
				return nil, nil
			}
			if p = feelMul(p, n); p == nil {
				return nil, nil
			}
		}
		return p, nil
	}},
	"median": {min: 1, max: -1, pure: true, fn: func(a ...any) (any, error) {
		items := itemsOf(a)
		if len(items) == 0 {
			return nil, nil
		}
		ns := slices.Clone(items)
		for _, n := range ns {
			if !isNumber(n) {
				return nil, nil
			}
		}
		slices.SortFunc(ns, func(x, y any) int { c, _ := numCmp(x, y); return c })
		if len(ns)%2 == 1 {
			return canonical(ns[len(ns)/2]), nil
		}
		return decArith(feelAdd(ns[len(ns)/2-1], ns[len(ns)/2]), 2.0, opQuo), nil
	}},
	"stddev": {min: 1, max: -1, pure: true, fn: func(a ...any) (any, error) {
		ns, ok := numbers(itemsOf(a))
		if !ok || len(ns) < 2 {
			return nil, nil // the sample deviation needs two values
		}
		mean := sumOf(ns) / float64(len(ns))
		var sq float64
		for _, n := range ns {
			sq += (n - mean) * (n - mean)
		}
		return math.Sqrt(sq / float64(len(ns)-1)), nil
	}},
	"mode": {min: 1, max: -1, pure: true, fn: func(a ...any) (any, error) {
		ns, ok := numbers(itemsOf(a))
		if !ok {
			return nil, nil
		}
		counts := map[float64]int{}
		best := 0
		for _, n := range ns {
			counts[n]++
			best = max(best, counts[n])
		}
		out := []any{}
		for n, c := range counts {
			if c == best {
				out = append(out, n)
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i].(float64) < out[j].(float64) })
		return out, nil
	}},
	"sublist": {min: 2, max: 3, pure: true, fn: func(a ...any) (any, error) {
		l, ok := a[0].([]any)
		start, ok2 := intArg(a[1])
		if !ok || !ok2 || start == 0 {
			return nil, nil
		}
		from := start - 1
		if start < 0 {
			from = int64(len(l)) + start
		}
		if from < 0 || from >= int64(len(l)) {
			return nil, nil
		}
		to := int64(len(l))
		if len(a) == 3 {
			n, ok := intArg(a[2])
			if !ok || n < 0 || from+n > to {
				return nil, nil
			}
			to = from + n
		}
		return append([]any{}, l[from:to]...), nil
	}},
	"append": {min: 1, max: -1, pure: true, fn: func(a ...any) (any, error) {
		l, ok := a[0].([]any)
		if !ok {
			return nil, nil
		}
		return append(append([]any{}, l...), a[1:]...), nil
	}},
	"concatenate": {min: 1, max: -1, pure: true, fn: func(a ...any) (any, error) {
		out := []any{}
		for _, x := range a {
			l, ok := x.([]any)
			if !ok {
				return nil, nil
			}
			out = append(out, l...)
		}
		return out, nil
	}},
	"insert before": {min: 3, max: 3, pure: true, fn: func(a ...any) (any, error) {
		l, i, ok := listPos(a, 0)
		if !ok {
			return nil, nil
		}
		out := append(append([]any{}, l[:i]...), a[2])
		return append(out, l[i:]...), nil
	}},
	"remove": {min: 2, max: 2, pure: true, fn: func(a ...any) (any, error) {
		l, i, ok := listPos(a, 1)
		if !ok {
			return nil, nil
		}
		return append(append([]any{}, l[:i]...), l[i+1:]...), nil
	}},
	"list replace": {min: 3, max: 3, calls: true, fn: feelListReplace},
	"reverse": {min: 1, max: 1, pure: true, fn: func(a ...any) (any, error) {
		l, ok := a[0].([]any)
		if !ok {
			return nil, nil
		}
		out := make([]any, len(l))
		for i, e := range l {
			out[len(l)-1-i] = e
		}
		return out, nil
	}},
	"index of": {min: 2, max: 2, pure: true, fn: func(a ...any) (any, error) {
		l, ok := a[0].([]any)
		if !ok {
			return nil, nil
		}
		out := []any{}
		for i, e := range l {
			if feelEqual(e, a[1]) == true {
				out = append(out, float64(i+1))
			}
		}
		return out, nil
	}},
	"union": {min: 1, max: -1, pure: true, fn: func(a ...any) (any, error) {
		var all []any
		for _, x := range a {
			l, ok := x.([]any)
			if !ok {
				return nil, nil
			}
			all = append(all, l...)
		}
		return distinct(all), nil
	}},
	"distinct values": {min: 1, max: 1, pure: true, fn: func(a ...any) (any, error) {
		l, ok := a[0].([]any)
		if !ok {
			return nil, nil
		}
		return distinct(l), nil
	}},
	"flatten": {min: 1, max: 1, pure: true, fn: func(a ...any) (any, error) {
		l, ok := a[0].([]any)
		if !ok {
			return nil, nil
		}
		out := []any{}
		var walk func([]any)
		walk = func(l []any) {
			for _, e := range l {
				if inner, ok := e.([]any); ok {
					walk(inner)
				} else {
					out = append(out, e)
				}
			}
		}
		walk(l)
		return out, nil
	}},
	"is empty": {min: 1, max: 1, pure: true, fn: func(a ...any) (any, error) {
		if l, ok := a[0].([]any); ok {
			return len(l) == 0, nil
		}
		return nil, nil
	}},

	"decimal":         {min: 2, max: 2, pure: true, fn: rounder(roundHalfEven, false)},
	"round up":        {min: 2, max: 2, pure: true, fn: rounder(roundUp, false)},
	"round down":      {min: 2, max: 2, pure: true, fn: rounder(roundDown, false)},
	"round half up":   {min: 2, max: 2, pure: true, fn: rounder(roundHalfUp, false)},
	"round half down": {min: 2, max: 2, pure: true, fn: rounder(roundHalfDown, false)},
	"floor":           {min: 1, max: 2, pure: true, fn: rounder(roundFloor, true)},
	"ceiling":         {min: 1, max: 2, pure: true, fn: rounder(roundCeiling, true)},
	"modulo": {min: 2, max: 2, pure: true, fn: func(a ...any) (any, error) {
		// The sign of the divisor, as floored division has it.
		var x, y, r apd.Decimal
		if !decOf(a[0], &x) || !decOf(a[1], &y) || y.IsZero() {
			return nil, nil
		}
		if _, err := decContext.Rem(&r, &x, &y); err != nil {
			return nil, nil
		}
		if !r.IsZero() && r.Negative != y.Negative {
			if _, err := decContext.Add(&r, &r, &y); err != nil {
				return nil, nil
			}
		}
		return numberOf(&r), nil
	}},
	"sqrt": {min: 1, max: 1, pure: true, fn: mathFn(func(x float64) float64 { return math.Sqrt(x) }, func(x float64) bool { return x >= 0 })},
	"log":  {min: 1, max: 1, pure: true, fn: mathFn(math.Log, func(x float64) bool { return x > 0 })},
	"exp":  {min: 1, max: 1, pure: true, fn: mathFn(math.Exp, func(float64) bool { return true })},
	"odd": {min: 1, max: 1, pure: true, fn: func(a ...any) (any, error) {
		if n, ok := intArg(a[0]); ok {
			return n%2 != 0, nil
		}
		return nil, nil
	}},
	"even": {min: 1, max: 1, pure: true, fn: func(a ...any) (any, error) {
		if n, ok := intArg(a[0]); ok {
			return n%2 == 0, nil
		}
		return nil, nil
	}},

	"is": {min: 2, max: 2, pure: true, fn: func(a ...any) (any, error) {
		if typeName(a[0]) != typeName(a[1]) {
			return false, nil
		}
		if isTemporal(a[0]) {
			// Same instant is not enough: the same value, zone included.
			return feelString(a[0]) == feelString(a[1]) && feelEqual(a[0], a[1]) == true, nil
		}
		return feelEqual(a[0], a[1]) == true, nil
	}},
	"get or else": {min: 2, max: 2, pure: true, fn: func(a ...any) (any, error) {
		if a[0] == nil {
			return a[1], nil
		}
		return a[0], nil
	}},

	"get value": {min: 2, max: 2, pure: true, fn: func(a ...any) (any, error) {
		m, ok := a[0].(map[string]any)
		if !ok {
			return nil, nil
		}
		switch k := a[1].(type) {
		case string:
			return m[k], nil
		case []any:
			var cur any = m
			for _, step := range k {
				s, ok1 := step.(string)
				c, ok2 := cur.(map[string]any)
				if !ok1 || !ok2 {
					return nil, nil
				}
				cur = c[s]
			}
			return cur, nil
		}
		return nil, nil
	}},
	"get entries": {min: 1, max: 1, pure: true, fn: func(a ...any) (any, error) {
		m, ok := a[0].(map[string]any)
		if !ok {
			return nil, nil
		}
		out := make([]any, 0, len(m))
		for _, k := range sortedKeys(m) {
			out = append(out, map[string]any{"key": k, "value": m[k]})
		}
		return out, nil
	}},
	"context": {min: 1, max: 1, pure: true, fn: func(a ...any) (any, error) {
		l, ok := a[0].([]any)
		if !ok {
			l = []any{a[0]}
		}
		out := make(map[string]any, len(l))
		for _, e := range l {
			m, ok := e.(map[string]any)
			if !ok {
				return nil, nil
			}
			k, ok := m["key"].(string)
			v, hasValue := m["value"]
			if _, dup := out[k]; !ok || !hasValue || dup {
				return nil, nil
			}
			out[k] = v
		}
		return out, nil
	}},
	"context put": {min: 3, max: 3, pure: true, fn: func(a ...any) (any, error) {
		return contextPut(a[0], a[1], a[2]), nil
	}},
	"context merge": {min: 1, max: -1, pure: true, fn: func(a ...any) (any, error) {
		out := map[string]any{}
		for _, e := range itemsOf(a) {
			m, ok := e.(map[string]any)
			if !ok {
				return nil, nil
			}
			for k, v := range m {
				out[k] = v
			}
		}
		return out, nil
	}},

	"day of year": {min: 1, max: 1, pure: true, fn: func(a ...any) (any, error) {
		if d, ok := dateOfAny(a[0]); ok {
			return float64(time.Time(d).YearDay()), nil
		}
		return nil, nil
	}},
	"day of week": {min: 1, max: 1, pure: true, fn: func(a ...any) (any, error) {
		if d, ok := dateOfAny(a[0]); ok {
			return time.Time(d).Weekday().String(), nil
		}
		return nil, nil
	}},
	"month of year": {min: 1, max: 1, pure: true, fn: func(a ...any) (any, error) {
		if d, ok := dateOfAny(a[0]); ok {
			return time.Time(d).Month().String(), nil
		}
		return nil, nil
	}},
	"week of year": {min: 1, max: 1, pure: true, fn: func(a ...any) (any, error) {
		if d, ok := dateOfAny(a[0]); ok {
			_, w := time.Time(d).ISOWeek()
			return float64(w), nil
		}
		return nil, nil
	}},
}

// feelRegexp compiles a FEEL pattern (an XML Schema regular expression,
// as XPath's fn:matches reads it) with optional flags ("s", "m", "i",
// "x") into RE2. It returns nil, nil for an invalid pattern or flag (the
// function's result is null) and an error for a valid pattern that RE2
// cannot run (back-references, nested character class subtraction,
// Unicode blocks other than BasicLatin): not supported is better than a wrong
// answer.
func feelRegexp(a []any) (*regexp.Regexp, error) {
	pattern, ok := a[0].(string)
	if !ok {
		return nil, nil
	}
	flags := ""
	if len(a) > 1 && a[1] != nil {
		if flags, ok = a[1].(string); !ok {
			return nil, nil
		}
	}
	prefix := ""
	for _, f := range flags {
		if !strings.ContainsRune("smix", f) {
			return nil, nil
		}
		if f != 'x' && !strings.ContainsRune(prefix, f) {
			prefix += string(f)
		}
	}
	if strings.ContainsRune(flags, 'x') {
		pattern = stripSpace(pattern)
	}
	dotAll := strings.ContainsRune(flags, 's')
	var b strings.Builder
	if prefix != "" {
		b.WriteString("(?" + prefix + ")")
	}
	inClass := false
	classStart := 0 // where the class being read starts in b
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c == '\\':
			if i+1 >= len(pattern) {
				return nil, nil
			}
			n := pattern[i+1]
			switch {
			case n == '0':
				return nil, nil
			case isDigit(n):
				// A back-reference inside a character class, or to a group
				// not opened before it, makes the pattern invalid (XPath
				// err:FORX0002): null. A valid one RE2 cannot run.
				if inClass || int(n-'0') > groupsBefore(pattern, i) {
					return nil, nil
				}
				return nil, unsupportedPattern(pattern, "back-references")
			case n == 'p' || n == 'P':
				j := strings.IndexByte(pattern[i:], '}')
				if j < 0 || i+2 >= len(pattern) || pattern[i+2] != '{' {
					return nil, nil
				}
				name := pattern[i+3 : i+j]
				if strings.HasPrefix(name, "Is") {
					if name != "IsBasicLatin" {
						return nil, unsupportedPattern(pattern, "Unicode block "+name)
					}
					if n == 'p' {
						b.WriteString(`[\x{0}-\x{7F}]`)
					} else {
						b.WriteString(`[^\x{0}-\x{7F}]`)
					}
				} else {
					b.WriteString(`\` + string(n) + "{" + name + "}")
				}
				i += j
				continue
			}
			b.WriteByte(c)
			b.WriteByte(n)
			i++
		case inClass && c == '-' && i+1 < len(pattern) && pattern[i+1] == '[':
			// [base-[sub]]: RE2 has no subtraction, so the class is
			// written out as the ranges of base without those of sub.
			end := classEnd(pattern, i+1)
			if end < 0 || end+1 >= len(pattern) || pattern[end+1] != ']' {
				return nil, nil
			}
			sub := pattern[i+1 : end+1]
			if strings.Contains(sub[1:], "[") {
				return nil, unsupportedPattern(pattern, "nested character class subtraction")
			}
			class, ok := subtractClass(b.String()[classStart:]+"]", sub)
			if !ok {
				return nil, nil
			}
			tail := b.String()[:classStart]
			b.Reset()
			b.WriteString(tail)
			b.WriteString(class)
			inClass = false
			i = end + 1
		case c == '[' && !inClass:
			inClass = true
			classStart = b.Len()
			b.WriteByte(c)
			if i+1 < len(pattern) && pattern[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
			if i+1 < len(pattern) && pattern[i+1] == ']' {
				b.WriteString(`\]`)
				i++
			}
		case c == ']' && inClass:
			inClass = false
			b.WriteByte(c)
		case !inClass && c == '.' && !dotAll:
			b.WriteString(`[^\n\r]`) // XPath's . matches neither
		default:
			b.WriteByte(c)
		}
	}
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, nil
	}
	return re, nil
}

// groupsBefore counts the capturing groups opened in pattern before
// index end: the "(" outside character classes, not escaped and not
// starting a non-capturing group "(?:".
func groupsBefore(pattern string, end int) int {
	n := 0
	inClass := false
	for i := 0; i < end; i++ {
		switch c := pattern[i]; {
		case c == '\\':
			i++
		case c == '[':
			inClass = true
		case c == ']':
			inClass = false
		case c == '(' && !inClass && !(i+1 < len(pattern) && pattern[i+1] == '?'):
			n++
		}
	}
	return n
}

// classEnd returns the index of the "]" closing the character class that
// opens at pattern[start], or -1.
func classEnd(pattern string, start int) int {
	for i := start + 1; i < len(pattern); i++ {
		switch pattern[i] {
		case '\\':
			i++
		case ']':
			if i > start+1 && !(i == start+2 && pattern[start+1] == '^') {
				return i
			}
		}
	}
	return -1
}

// subtractClass returns an RE2 class holding the characters of base (an
// RE2 class) that the class sub (XML Schema syntax, no subtraction
// inside) lacks: XML Schema's [base-[sub]].
func subtractClass(base, sub string) (string, bool) {
	from, ok := classRanges(base)
	if !ok {
		return "", false
	}
	less, ok := classRanges(sub)
	if !ok {
		return "", false
	}
	var out []rune
	for i := 0; i < len(from); i += 2 {
		lo, hi := from[i], from[i+1]
		for j := 0; j < len(less) && lo <= hi; j += 2 {
			slo, shi := less[j], less[j+1]
			if shi < lo || slo > hi {
				continue
			}
			if slo > lo {
				out = append(out, lo, slo-1)
			}
			lo = shi + 1
		}
		if lo <= hi {
			out = append(out, lo, hi)
		}
	}
	if len(out) == 0 {
		return `[^\x{0}-\x{10FFFF}]`, true // matches nothing
	}
	var b strings.Builder
	b.WriteByte('[')
	for i := 0; i < len(out); i += 2 {
		fmt.Fprintf(&b, `\x{%X}-\x{%X}`, out[i], out[i+1])
	}
	b.WriteByte(']')
	return b.String(), true
}

// classRanges returns the sorted rune ranges (lo, hi pairs) of a
// character class, read case-sensitively (a flag applies to the class
// written out, when it is matched).
func classRanges(class string) ([]rune, bool) {
	re, err := syntax.Parse(class, syntax.Perl)
	if err != nil {
		return nil, false
	}
	switch re.Op {
	case syntax.OpCharClass:
		return re.Rune, true
	case syntax.OpLiteral:
		if len(re.Rune) == 1 {
			return []rune{re.Rune[0], re.Rune[0]}, true
		}
	}
	return nil, false
}

// stripSpace applies the "x" flag: white space outside character classes
// is removed before the pattern is read, so "\\ s" is "\\s".
func stripSpace(pattern string) string {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch {
		case c == '\\' && i+1 < len(pattern) && !isSpace(pattern[i+1]):
			b.WriteByte(c)
			b.WriteByte(pattern[i+1])
			i++
		case c == '[':
			inClass = true
			b.WriteByte(c)
		case c == ']':
			inClass = false
			b.WriteByte(c)
		case !inClass && isSpace(c):
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func unsupportedPattern(pattern, what string) error {
	return fmt.Errorf("pattern %q uses %s, which is not supported", pattern, what)
}

// feelReplacement turns an XPath replacement ("$1", "\$") into Go's
// ("${1}", "$$").
func feelReplacement(r string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(r); i++ {
		switch c := r[i]; c {
		case '\\':
			if i+1 >= len(r) || (r[i+1] != '\\' && r[i+1] != '$') {
				return "", false
			}
			i++
			if r[i] == '$' {
				b.WriteString("$$")
			} else {
				b.WriteByte('\\')
			}
		case '$':
			j := i + 1
			for j < len(r) && isDigit(r[j]) {
				j++
			}
			if j == i+1 {
				return "", false
			}
			b.WriteString("${" + r[i+1:j] + "}")
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

func strs(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// allAny is all() (or, any: any()) over booleans; a non-boolean item
// makes it null unless a deciding item is found.
func allAny(items []any, any bool) any {
	decided := false
	for _, e := range items {
		b, ok := e.(bool)
		if !ok {
			decided = true // null unless decided below
			continue
		}
		if b == any {
			return any
		}
	}
	if decided {
		return nil
	}
	return !any
}

// numbers returns the items as numbers; ok is false if one is not.
func numbers(items []any) ([]float64, bool) {
	out := make([]float64, len(items))
	for i, e := range items {
		f, ok := e.(float64)
		if !ok {
			if _, isBool := e.(bool); isBool {
				return nil, false
			}
			if f, ok = toFloat(e); !ok {
				return nil, false
			}
		}
		out[i] = f
	}
	return out, true
}

func sumOf(ns []float64) float64 {
	s := 0.0
	for _, n := range ns {
		s += n
	}
	return s
}

// intArg returns a whole number argument.
func intArg(v any) (int64, bool) {
	f, ok := v.(float64)
	if !ok {
		if _, isDec := v.(*apd.Decimal); !isDec {
			return 0, false
		}
		f, _ = toFloat(v)
	}
	return wholeInt(f)
}

// listPos reads a list and a 1-based position (negative from the end)
// from a[0] and a[1]; past is 0 when the position may be one past the
// end (insert before) and 1 when it must name an element.
func listPos(a []any, past int) ([]any, int, bool) {
	l, ok := a[0].([]any)
	p, ok2 := intArg(a[1])
	if !ok || !ok2 || p == 0 {
		return nil, 0, false
	}
	i := p - 1
	if p < 0 {
		i = int64(len(l)) + p
	}
	if i < 0 || i > int64(len(l)-past) {
		return nil, 0, false
	}
	return l, int(i), true
}

// distinct keeps the first of equal items. Items are told apart by a
// key, not compared pairwise, so that a long list costs linear time.
func distinct(l []any) []any {
	out := []any{}
	seen := make(map[string]bool, len(l))
	for _, e := range l {
		k := typeName(e) + ":"
		if t, ok := e.(time.Time); ok {
			k += t.UTC().Format(time.RFC3339Nano) // equal instants are equal
		} else if s, ok := feelString(e).(string); ok {
			k += s
		}
		if !seen[k] {
			seen[k] = true
			out = append(out, e)
		}
	}
	return out
}

// contextPut is context put(context, key or keys, value): a copy of the
// context with the entry set, nested contexts copied along a key path.
func contextPut(c, key, v any) any {
	m, ok := c.(map[string]any)
	if !ok {
		return nil
	}
	var path []string
	switch k := key.(type) {
	case string:
		path = []string{k}
	case []any:
		for _, s := range k {
			str, ok := s.(string)
			if !ok {
				return nil
			}
			path = append(path, str)
		}
	}
	if len(path) == 0 {
		return nil
	}
	out := make(map[string]any, len(m)+1)
	for k, e := range m {
		out[k] = e
	}
	if len(path) == 1 {
		out[path[0]] = v
		return out
	}
	inner, ok := m[path[0]]
	if !ok {
		inner = map[string]any{}
	}
	rest := make([]any, len(path)-1)
	for i, p := range path[1:] {
		rest[i] = p
	}
	sub := contextPut(inner, rest, v)
	if sub == nil {
		return nil
	}
	out[path[0]] = sub
	return out
}

func mathFn(f func(float64) float64, valid func(float64) bool) func(...any) (any, error) {
	return func(a ...any) (any, error) {
		x, ok := toFloat(a[0])
		if _, isBool := a[0].(bool); isBool || !ok || !valid(x) {
			return nil, nil
		}
		r := f(x)
		if math.IsNaN(r) || math.IsInf(r, 0) {
			return nil, nil
		}
		return r, nil
	}
}

// Rounding modes of the rounding functions.
var (
	roundHalfEven = apd.RoundHalfEven
	roundUp       = apd.RoundUp   // away from zero
	roundDown     = apd.RoundDown // toward zero
	roundHalfUp   = apd.RoundHalfUp
	roundHalfDown = apd.RoundHalfDown
	roundFloor    = apd.RoundFloor
	roundCeiling  = apd.RoundCeiling
)

// maxScale bounds the scale of the rounding functions, as DMN 1.5 does.
const maxScale = 6176

// rounder is a rounding function: n rounded to scale decimal places
// (default 0 when optional) in the given mode. It rounds the shortest
// decimal form of n, not its binary value, so that round half up(2.675,
// 2) is 2.68 as a decimal number would have it.
func rounder(mode apd.Rounder, optionalScale bool) func(...any) (any, error) {
	return func(a ...any) (any, error) {
		var n apd.Decimal
		if _, isBool := a[0].(bool); isBool || !decOf(a[0], &n) {
			return nil, nil
		}
		var scale int64
		if len(a) == 2 {
			// A fractional scale is truncated, as Java's intValue does.
			f, ok := toFloat(a[1])
			if _, isBool := a[1].(bool); isBool || !ok || f < -6111 || f > maxScale {
				return nil, nil
			}
			scale = int64(f)
		} else if !optionalScale {
			return nil, nil
		}
		return roundDecimal(&n, scale, mode), nil
	}
}

// roundDecimal rounds n to scale decimal places in the given mode. It
// divides the coefficient itself: apd's Quantize drops a value whose
// digits all fall below the scale to zero in every mode (ceiling(0.07)
// would be 0).
func roundDecimal(n *apd.Decimal, scale int64, mode apd.Rounder) any {
	k := -scale - int64(n.Exponent) // digits to drop
	if k <= 0 {
		return numberOf(n)
	}
	if k > int64(n.NumDigits())+1 {
		k = int64(n.NumDigits()) + 1 // all dropped: as good as one more
		var shifted apd.Decimal
		shifted.Set(n)
		shifted.Exponent = int32(-scale) - int32(k)
		n = &shifted
	}
	pow := new(big.Int).Exp(big.NewInt(10), big.NewInt(k), nil)
	q, rem := new(big.Int).QuoRem(n.Coeff.MathBigInt(), pow, new(big.Int))
	if rem.Sign() != 0 {
		half := rem.Lsh(rem, 1).Cmp(pow) // twice the remainder against 10^k
		away := false
		switch mode {
		case apd.RoundUp:
			away = true
		case apd.RoundHalfUp:
			away = half >= 0
		case apd.RoundHalfDown:
			away = half > 0
		case apd.RoundHalfEven:
			away = half > 0 || half == 0 && q.Bit(0) == 1
		case apd.RoundFloor:
			away = n.Negative
		case apd.RoundCeiling:
			away = !n.Negative
		}
		if away {
			q.Add(q, big.NewInt(1))
		}
	}
	var r apd.Decimal
	r.Coeff.SetMathBigInt(q)
	r.Exponent, r.Negative = int32(-scale), n.Negative
	return numberOf(&r)
}

// feelNumber is number(from, grouping separator, decimal separator).
func feelNumber(a []any) any {
	s, ok := a[0].(string)
	if !ok {
		if len(a) == 1 {
			return canonical(a[0])
		}
		return nil
	}
	group, dec := "", "."
	if len(a) > 1 && a[1] != nil {
		g, ok := a[1].(string)
		if !ok || g != " " && g != "," && g != "." {
			return nil
		}
		group = g
	}
	if len(a) > 2 && a[2] != nil {
		d, ok := a[2].(string)
		if !ok || d != "," && d != "." {
			return nil
		}
		dec = d
	}
	if group == dec {
		return nil
	}
	if group != "" {
		s = strings.ReplaceAll(s, group, "")
	}
	if dec != "." {
		if strings.Contains(s, ".") {
			return nil
		}
		s = strings.ReplaceAll(s, dec, ".")
	}
	if !validNumber(s) {
		return nil
	}
	n, _ := parseNumber(s)
	return n
}

// validNumber reports whether s is a FEEL number literal, optionally
// signed and with an exponent: no hex, no "Inf", no spaces.
func validNumber(s string) bool {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	digitsSeen := false
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i, digitsSeen = i+1, true
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i, digitsSeen = i+1, true
		}
	}
	if !digitsSeen {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == j {
			return false
		}
	}
	return i == len(s) && utf8.ValidString(s)
}
