package expr

import (
	"encoding/json"

	"fmt"
	"github.com/cockroachdb/apd/v3"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Values inside expressions are JSON-like: nil, bool, string, float64 (ints
// of any Go width are accepted from variables), []any and map[string]any.
// FEEL adds temporal kinds (temporal.go), which leave Eval as ISO-8601
// text: time.Time and localDateTime (date and time), date (a calendar
// date), timeOfDay, time.Duration and ymDuration.

// date is a FEEL calendar date: midnight UTC of that day.
type date time.Time

func (d date) String() string { return formatDate(time.Time(d)) }

func isTemporal(v any) bool {
	switch v.(type) {
	case time.Time, date, time.Duration, localDateTime, timeOfDay, ymDuration:
		return true
	}
	return false
}

// toFloat converts any Go number to float64.
func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	case float32:
		return float64(n), true
	case uint:
		return float64(n), true
	case uint64:
		return float64(n), true
	case uint32:
		return float64(n), true
	case int16:
		return float64(n), true
	case int8:
		return float64(n), true
	case uint16:
		return float64(n), true
	case uint8:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case *apd.Decimal:
		f, err := n.Float64() // the nearest float64
		return f, err == nil
	}
	return 0, false
}

// normalize turns a result into a JSON-compatible value: numbers become
// float64 or, when no float64 holds them exactly, json.Number (Number),
// and temporal values ISO-8601 text, recursively. Values that are
// already JSON-compatible are returned as they are, without copying.
func normalize(v any) any {
	if !needsNormalize(v) {
		return v
	}
	switch x := v.(type) {
	case time.Time:
		return x.Format(time.RFC3339Nano)
	case date:
		return x.String()
	case localDateTime:
		return x.String()
	case timeOfDay:
		return x.String()
	case ymDuration:
		return x.String()
	case feelRange:
		return x.String() // JSON has no range
	case unaryTest:
		return x.String()
	case *feelFunc:
		return nil // JSON has no function
	case time.Duration:
		return formatDuration(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalize(e)
		}
		return out
	}
	if n, ok := Number(v); ok {
		return n // a float64, or a json.Number holding every digit
	}
	return v
}

func needsNormalize(v any) bool {
	switch x := v.(type) {
	case nil, bool, string, float64:
		return false
	case []any:
		for _, e := range x {
			if needsNormalize(e) {
				return true
			}
		}
		return false
	case map[string]any:
		for _, e := range x {
			if needsNormalize(e) {
				return true
			}
		}
		return false
	}
	return true
}

// formatNumber formats a number as FEEL's string() does: integers without
// a fraction, others in the shortest form.
func formatNumber(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// formatDuration formats d as an ISO-8601 day-time duration ("P1DT2H",
// "PT0.5S", "-PT1M").
func formatDuration(d time.Duration) string {
	if d == 0 {
		return "PT0S"
	}
	var b strings.Builder
	if d < 0 {
		b.WriteByte('-')
		if d == math.MinInt64 {
			d++
		}
		d = -d
	}
	b.WriteByte('P')
	days := d / (24 * time.Hour)
	d -= days * 24 * time.Hour
	if days > 0 {
		b.WriteString(strconv.FormatInt(int64(days), 10) + "D")
	}
	if d > 0 {
		b.WriteByte('T')
		h := d / time.Hour
		d -= h * time.Hour
		m := d / time.Minute
		d -= m * time.Minute
		if h > 0 {
			b.WriteString(strconv.FormatInt(int64(h), 10) + "H")
		}
		if m > 0 {
			b.WriteString(strconv.FormatInt(int64(m), 10) + "M")
		}
		if d > 0 {
			b.WriteString(strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + "S")
		}
	}
	return b.String()
}

// parseDuration parses an ISO-8601 duration with days, hours, minutes and
// seconds (and weeks), such as "PT1H30M", "P2D", "-PT0.5S". Years and
// months have no fixed length and are rejected.
func parseDuration(s string) (time.Duration, error) {
	orig := s
	bad := func(why string) (time.Duration, error) {
		return 0, fmt.Errorf("invalid ISO-8601 duration %q: %s", orig, why)
	}
	neg := false
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	} else if strings.HasPrefix(s, "+") {
		s = s[1:]
	}
	if len(s) < 2 || (s[0] != 'P' && s[0] != 'p') {
		return bad("must start with P")
	}
	s = s[1:]
	var total float64
	inTime, any := false, false
	for len(s) > 0 {
		if s[0] == 'T' || s[0] == 't' {
			if inTime {
				return bad("second T")
			}
			inTime = true
			s = s[1:]
			if s == "" {
				return bad("nothing after T")
			}
			continue
		}
		j := 0
		for j < len(s) && (isDigit(s[j]) || s[j] == '.' || s[j] == ',') {
			j++
		}
		if j == 0 || j == len(s) {
			return bad("expected a number and a unit")
		}
		n, err := strconv.ParseFloat(strings.ReplaceAll(s[:j], ",", "."), 64)
		if err != nil {
			return bad("bad number")
		}
		unit := s[j] | 0x20
		s = s[j+1:]
		var scale time.Duration
		switch {
		case !inTime && unit == 'w':
			scale = 7 * 24 * time.Hour
		case !inTime && unit == 'd':
			scale = 24 * time.Hour
		case !inTime && (unit == 'y' || unit == 'm'):
			return bad("years and months have no fixed length")
		case inTime && unit == 'h':
			scale = time.Hour
		case inTime && unit == 'm':
			scale = time.Minute
		case inTime && unit == 's':
			scale = time.Second
		default:
			return bad("unknown unit " + string(unit))
		}
		total += n * float64(scale)
		any = true
	}
	if !any {
		return bad("no components")
	}
	if total > math.MaxInt64 {
		return bad("too long")
	}
	d := time.Duration(total)
	if neg {
		d = -d
	}
	return d, nil
}

// parseDateTime parses date and time text for a timer: FEEL's form
// ("2026-01-01T10:00:00", "...Z", "...+02:00", "...@Europe/Paris"; no
// zone means UTC) or RFC 3339.
func parseDateTime(s string) (time.Time, error) {
	if v, ok := parseFEELDateTime(s); ok {
		if l, ok := v.(localDateTime); ok {
			return time.Time(l), nil
		}
		return v.(time.Time), nil
	}
	loc := time.UTC
	if i := strings.IndexByte(s, '@'); i >= 0 {
		l, err := time.LoadLocation(s[i+1:])
		if err != nil {
			return time.Time{}, fmt.Errorf("unknown time zone %q", s[i+1:])
		}
		loc, s = l, s[:i]
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, nil
		}
	}
	if t, err := time.ParseInLocation("2006-01-02", s, loc); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("invalid date and time %q", s)
}

// typeName names a value's type as users know it, for error messages.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "list"
	case map[string]any:
		return "context"
	case time.Time, localDateTime:
		return "date and time"
	case date:
		return "date"
	case timeOfDay:
		return "time"
	case time.Duration:
		return "days and time duration"
	case ymDuration:
		return "years and months duration"
	case feelRange:
		return "range"
	case unaryTest:
		return "unary test"
	case *feelFunc:
		return "function"
	}
	if _, ok := toFloat(v); ok {
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

// sortedKeys returns m's keys in order, so output never depends on map
// iteration order.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
