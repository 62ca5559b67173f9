package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	flag "github.com/spf13/pflag"
)

// funcFlag registers a repeatable flag whose every value set calls set.
func funcFlag(fs *flag.FlagSet, name, usage string, set func(string) error) {
	fs.Var(funcValue(set), name, usage)
}

// funcValue is a flag.Value that hands each value to a function.
type funcValue func(string) error

func (f funcValue) Set(s string) error { return f(s) }
func (funcValue) String() string       { return "" }
func (funcValue) Type() string         { return "string" }

// durationFlag registers a duration flag that takes Go's form (90s,
// 1h30m) and ISO 8601's (PT90S, PT1H30M, P1D), and prints ISO 8601, as
// the engine, the SDK and BPMN timers write durations.
func durationFlag(fs *flag.FlagSet, name string, value time.Duration, usage string) *time.Duration {
	d := value
	fs.Var((*durationValue)(&d), name, usage)
	return &d
}

// durationValue is a time.Duration flag (durationFlag).
type durationValue time.Duration

func (d *durationValue) Set(s string) error {
	v, err := parseDuration(s)
	if err != nil {
		return err
	}
	*d = durationValue(v)
	return nil
}

func (d *durationValue) String() string { return isoDuration(time.Duration(*d)) }
func (*durationValue) Type() string     { return "duration" }

// parseDuration reads a duration in Go's form (90s, 1h30m, -5m) or as an
// ISO 8601 duration of days and time (PT30S, PT1H30M, P2D, P1DT12H,
// PT0.5S, -PT5M). Years and months have no fixed length and are refused,
// as weeks mixed with other units are by ISO 8601.
func parseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	neg := strings.HasPrefix(t, "-")
	iso := strings.TrimPrefix(strings.TrimPrefix(t, "-"), "+")
	if len(iso) == 0 || iso[0] != 'P' && iso[0] != 'p' {
		d, err := time.ParseDuration(t)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration such as 90s, 1h30m or PT1H30M", s)
		}
		return d, nil
	}
	d, err := parseISO(strings.ToUpper(iso[1:]))
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration such as 90s, 1h30m or PT1H30M: %v", s, err)
	}
	if neg {
		d = -d
	}
	return d, nil
}

// parseISO parses what follows the P of an ISO 8601 duration.
func parseISO(s string) (time.Duration, error) {
	if s == "" || s == "T" || strings.HasSuffix(s, "T") {
		return 0, fmt.Errorf("no amount")
	}
	units := map[byte]time.Duration{'W': 7 * 24 * time.Hour, 'D': 24 * time.Hour}
	timeUnits := map[byte]time.Duration{'H': time.Hour, 'M': time.Minute, 'S': time.Second}
	var total time.Duration
	inTime := false
	order := "WD"
	for s != "" {
		if s[0] == 'T' {
			if inTime {
				return 0, fmt.Errorf("a second T")
			}
			inTime, order, s = true, "HMS", s[1:]
			continue
		}
		i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' && r != ',' })
		if i <= 0 {
			return 0, fmt.Errorf("a number must come before each unit")
		}
		num, unit := strings.Replace(s[:i], ",", ".", 1), s[i]
		s = s[i+1:]
		size, ok := units[unit]
		if inTime {
			size, ok = timeUnits[unit]
		}
		if !ok {
			if unit == 'Y' || unit == 'M' && !inTime {
				return 0, fmt.Errorf("years and months have no fixed length; use days")
			}
			return 0, fmt.Errorf("unit %q is not one of %s", string(unit), order)
		}
		at := strings.IndexByte(order, unit)
		if at < 0 {
			return 0, fmt.Errorf("unit %q out of order", string(unit))
		}
		order = order[at+1:]
		f, err := strconv.ParseFloat(num, 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a number", num)
		}
		if f*float64(size) > float64(1<<62) {
			return 0, fmt.Errorf("too long")
		}
		total += time.Duration(f * float64(size))
	}
	return total, nil
}

// isoDuration writes d as an ISO 8601 duration: days and time
// (P1DT2H30M), seconds with up to nine decimals (PT0.5S), PT0S for 0.
func isoDuration(d time.Duration) string {
	if d == 0 {
		return "PT0S"
	}
	var b strings.Builder
	if d < 0 {
		b.WriteByte('-')
		d = -d
	}
	b.WriteByte('P')
	if days := d / (24 * time.Hour); days > 0 {
		fmt.Fprintf(&b, "%dD", days)
		d -= days * 24 * time.Hour
	}
	if d == 0 {
		return b.String()
	}
	b.WriteByte('T')
	if h := d / time.Hour; h > 0 {
		fmt.Fprintf(&b, "%dH", h)
		d -= h * time.Hour
	}
	if m := d / time.Minute; m > 0 {
		fmt.Fprintf(&b, "%dM", m)
		d -= m * time.Minute
	}
	if d > 0 {
		sec := strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
		b.WriteString(sec + "S")
	}
	return b.String()
}
