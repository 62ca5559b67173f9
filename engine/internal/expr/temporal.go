package expr

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// FEEL's temporal values, beside date (values.go):
//
//   - a date and time with a zone is a time.Time whose Location is UTC
//     ("Z"), a fixed offset with no name ("+01:00") or an IANA zone
//     ("@Europe/Paris"), so that string() writes it back as it was
//     written;
//   - a date and time without a zone is a localDateTime: FEEL keeps it
//     apart from UTC (it equals no zoned value) and string() writes no
//     zone;
//   - a time of day is a timeOfDay, with or without a zone;
//   - a days and time duration is a time.Duration, a years and months
//     duration a ymDuration (a count of months: years and months have no
//     fixed length, so the two kinds never compare or mix).
//
// Years range over ±999,999,999 as in the DMN TCK; Go's time.Time holds
// them, but its layouts do not write them, so formatting is ours.

// localDateTime is a FEEL date and time without a zone: the wall clock,
// held as that wall clock in UTC.
type localDateTime time.Time

// timeOfDay is a FEEL time: nanoseconds since midnight, in zone (nil for
// a local time).
type timeOfDay struct {
	ns   int64
	zone *time.Location
}

// ymDuration is a FEEL years and months duration, in months.
type ymDuration int64

// maxYear bounds the years FEEL dates may have.
const maxYear = 999_999_999

// offset returns the offset in seconds of the time's zone, evaluated for a time
// of day on 1970-01-01 (a named zone's offset varies over the year; FEEL
// times have no date to pick one).
func (t timeOfDay) offset() int {
	_, off := time.Date(1970, 1, 1, 0, 0, 0, int(t.ns), t.zone).Zone()
	return off
}

// utcNanos is the time of day in UTC, for comparing zoned times.
func (t timeOfDay) utcNanos() int64 {
	day := int64(24 * time.Hour)
	return ((t.ns-int64(t.offset())*int64(time.Second))%day + day) % day
}

// parseFEELDate parses "[-]YYYY-MM-DD" (years of 4 to 9 digits).
func parseFEELDate(s string) (date, bool) {
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	i := strings.IndexByte(s, '-')
	if i < 4 || len(s) != i+6 || s[i+3] != '-' {
		return date{}, false
	}
	y, ok1 := digits(s[:i])
	m, ok2 := digits(s[i+1 : i+3])
	d, ok3 := digits(s[i+4:])
	if !ok1 || !ok2 || !ok3 || y > maxYear || i > 4 && s[0] == '0' {
		return date{}, false
	}
	if neg {
		y = -y
	}
	return makeDate(y, m, d)
}

// makeDate builds a valid calendar date.
func makeDate(y, m, d int) (date, bool) {
	if y < -maxYear || y > maxYear || m < 1 || m > 12 || d < 1 || d > 31 {
		return date{}, false
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if t.Day() != d {
		return date{}, false // 31 April, 29 February of a common year
	}
	return date(t), true
}

// digits parses a run of ASCII digits.
func digits(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// parseFEELTime parses "hh:mm:ss[.fff][Z|±hh:mm|@Zone/Id]".
func parseFEELTime(s string) (timeOfDay, bool) {
	if len(s) < 8 || s[2] != ':' || s[5] != ':' {
		return timeOfDay{}, false
	}
	h, ok1 := digits(s[0:2])
	m, ok2 := digits(s[3:5])
	sec, ok3 := digits(s[6:8])
	if !ok1 || !ok2 || !ok3 || h > 23 || m > 59 || sec > 59 {
		return timeOfDay{}, false
	}
	ns := int64(h)*int64(time.Hour) + int64(m)*int64(time.Minute) + int64(sec)*int64(time.Second)
	rest := s[8:]
	if strings.HasPrefix(rest, ".") {
		j := 1
		for j < len(rest) && isDigit(rest[j]) {
			j++
		}
		if j == 1 || j > 10 {
			return timeOfDay{}, false
		}
		frac, _ := strconv.Atoi((rest[1:j] + "000000000")[:9])
		ns += int64(frac)
		rest = rest[j:]
	}
	zone, ok := parseZone(rest)
	if !ok {
		return timeOfDay{}, false
	}
	return timeOfDay{ns: ns, zone: zone}, true
}

// parseZone parses a zone suffix: "" (none), "Z", "±hh:mm" (at most 18
// hours, as java.time allows) or "@Zone/Id".
func parseZone(s string) (*time.Location, bool) {
	switch {
	case s == "":
		return nil, true
	case s == "Z":
		return time.UTC, true
	case s[0] == '@':
		if strings.ContainsAny(s[1:], "+:") && !strings.Contains(s[1:], "/") {
			return nil, false
		}
		loc, err := time.LoadLocation(s[1:])
		if err != nil || s[1:] == "" || s[1:] == "Local" {
			return nil, false
		}
		return loc, true
	case (s[0] == '+' || s[0] == '-') && len(s) == 6 && s[3] == ':':
		h, ok1 := digits(s[1:3])
		m, ok2 := digits(s[4:6])
		if !ok1 || !ok2 || m > 59 || h*60+m > 18*60 {
			return nil, false
		}
		off := (h*60 + m) * 60
		if s[0] == '-' {
			off = -off
		}
		return offsetZone(off), true
	}
	return nil, false
}

// offsetZone is the zone of a fixed offset in seconds; offset zero is
// UTC, which FEEL writes "Z".
func offsetZone(off int) *time.Location {
	if off == 0 {
		return time.UTC
	}
	return time.FixedZone("", off)
}

// parseFEELDateTime parses "date" (midnight, no zone) or "dateTtime".
// The result is a localDateTime without a zone, a time.Time with one.
func parseFEELDateTime(s string) (any, bool) {
	i := strings.IndexByte(s, 'T')
	if i < 0 {
		d, ok := parseFEELDate(s)
		if !ok {
			return nil, false
		}
		return localDateTime(d), true
	}
	d, ok := parseFEELDate(s[:i])
	if !ok {
		return nil, false
	}
	t, ok := parseFEELTime(s[i+1:])
	if !ok {
		return nil, false
	}
	return combine(d, t), true
}

// combine is date and time(d, t).
func combine(d date, t timeOfDay) any {
	y, m, day := time.Time(d).Date()
	ns := int(t.ns)
	if t.zone == nil {
		return localDateTime(time.Date(y, m, day, 0, 0, 0, ns, time.UTC))
	}
	return time.Date(y, m, day, 0, 0, 0, ns, t.zone)
}

// wallClock returns the time of day of a date and time, in its zone.
func wallClock(t time.Time) int64 {
	h, m, s := t.Clock()
	return int64(h)*int64(time.Hour) + int64(m)*int64(time.Minute) + int64(s)*int64(time.Second) + int64(t.Nanosecond())
}

// formatYear writes a year as ISO 8601 does: at least four digits, a
// sign when negative.
func formatYear(b *strings.Builder, y int) {
	if y < 0 {
		b.WriteByte('-')
		y = -y
	}
	s := strconv.Itoa(y)
	for i := len(s); i < 4; i++ {
		b.WriteByte('0')
	}
	b.WriteString(s)
}

func formatDate(t time.Time) string {
	var b strings.Builder
	y, m, d := t.Date()
	formatYear(&b, y)
	fmt.Fprintf(&b, "-%02d-%02d", int(m), d)
	return b.String()
}

// formatClock writes hh:mm:ss and the fraction of a second, if any.
func formatClock(b *strings.Builder, ns int64) {
	h := ns / int64(time.Hour)
	m := ns / int64(time.Minute) % 60
	s := ns / int64(time.Second) % 60
	fmt.Fprintf(b, "%02d:%02d:%02d", h, m, s)
	if frac := ns % int64(time.Second); frac != 0 {
		b.WriteString(strings.TrimRight(fmt.Sprintf(".%09d", frac), "0"))
	}
}

// formatZone writes a zone as it was parsed: "Z", "+01:00" or
// "@Europe/Paris"; off is the offset that applies.
func formatZone(b *strings.Builder, loc *time.Location, off int) {
	switch {
	case loc == nil:
	case loc == time.UTC:
		b.WriteByte('Z')
	case loc.String() != "":
		b.WriteString("@" + loc.String())
	default:
		sign := byte('+')
		if off < 0 {
			sign, off = '-', -off
		}
		fmt.Fprintf(b, "%c%02d:%02d", sign, off/3600, off/60%60)
		if off%60 != 0 {
			fmt.Fprintf(b, ":%02d", off%60)
		}
	}
}

func (d localDateTime) String() string {
	var b strings.Builder
	b.WriteString(formatDate(time.Time(d)))
	b.WriteByte('T')
	formatClock(&b, wallClock(time.Time(d)))
	return b.String()
}

// formatDateTime writes a zoned date and time as FEEL's string() does.
func formatDateTime(t time.Time) string {
	var b strings.Builder
	b.WriteString(formatDate(t))
	b.WriteByte('T')
	formatClock(&b, wallClock(t))
	_, off := t.Zone()
	formatZone(&b, t.Location(), off)
	return b.String()
}

func (t timeOfDay) String() string {
	var b strings.Builder
	formatClock(&b, t.ns)
	if t.zone != nil {
		formatZone(&b, t.zone, t.offset())
	}
	return b.String()
}

func (d ymDuration) String() string {
	var b strings.Builder
	if d < 0 {
		b.WriteByte('-')
		d = -d
	}
	b.WriteByte('P')
	y, m := d/12, d%12
	if y > 0 {
		b.WriteString(strconv.FormatInt(int64(y), 10) + "Y")
	}
	if m > 0 || y == 0 {
		b.WriteString(strconv.FormatInt(int64(m), 10) + "M")
	}
	return b.String()
}

// parseFEELDuration parses ISO-8601 duration text into a ymDuration
// ("P1Y2M") or a time.Duration ("P1DT2H"); one value cannot be both.
func parseFEELDuration(s string) (any, bool) {
	body := strings.TrimPrefix(s, "-")
	if len(body) > 1 && body[0] == 'P' && strings.IndexAny(body, "YM") > 0 &&
		(!strings.Contains(body, "T") && !strings.ContainsAny(body, "DWHS")) {
		months, ok := parseYM(body[1:])
		if !ok {
			return nil, false
		}
		if body != s {
			months = -months
		}
		return ymDuration(months), true
	}
	if strings.ContainsAny(body, "Y") || strings.Contains(strings.SplitN(body, "T", 2)[0], "M") {
		return nil, false // years or months mixed with days or times
	}
	if strings.ContainsAny(body, "pdthmswW,") || strings.HasPrefix(body, "+") {
		// ISO 8601 allows these (weeks among them: P1W); FEEL's
		// durations are XML Schema's (DMN 1.5 10.3.2.3.7), which do not.
		return nil, false
	}
	d, err := parseDuration(s)
	if err != nil {
		return nil, false
	}
	return d, true
}

// parseYM parses "nY", "nM" or "nYmM" (after the P).
func parseYM(s string) (int64, bool) {
	var months int64
	seenY, seenM := false, false
	for s != "" {
		j := 0
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j == 0 || j == len(s) || j > 12 {
			return 0, false
		}
		n, _ := strconv.ParseInt(s[:j], 10, 64)
		switch s[j] {
		case 'Y':
			if seenY || seenM {
				return 0, false
			}
			seenY = true
			months += n * 12
		case 'M':
			if seenM {
				return 0, false
			}
			seenM = true
			months += n
		default:
			return 0, false
		}
		s = s[j+1:]
	}
	return months, seenY || seenM
}

// addMonths adds n months to t, keeping the day or clamping it to the
// end of a shorter month (31 January + 1 month is 28 or 29 February), as
// java.time does.
func addMonths(t time.Time, n int64) (time.Time, bool) {
	y, m, d := t.Date()
	total := int64(y)*12 + int64(m) - 1 + n
	ny, nm := total/12, total%12
	if nm < 0 {
		nm += 12
		ny--
	}
	if ny > maxYear || ny < -maxYear {
		return time.Time{}, false
	}
	last := time.Date(int(ny), time.Month(nm+2), 0, 0, 0, 0, 0, time.UTC).Day()
	if d > last {
		d = last
	}
	return time.Date(int(ny), time.Month(nm+1), d, 0, 0, 0, int(wallClock(t)), t.Location()), true
}

// monthsBetween is years and months duration(from, to): whole months
// between the dates of a and b, as java.time's Period.between counts
// them (times of day and zones do not count).
func monthsBetween(a, b time.Time) ymDuration {
	ay, am, ad := a.Date()
	by, bm, bd := b.Date()
	months := int64(by-ay)*12 + int64(bm-am)
	switch {
	case months > 0 && bd < ad:
		months--
	case months < 0 && bd > ad:
		months++
	}
	return ymDuration(months)
}

// temporalInstant returns a date-like value as a time.Time and whether it
// has a zone: dates and local date-times count as wall clocks in UTC.
func temporalInstant(v any) (t time.Time, zoned, ok bool) {
	switch x := v.(type) {
	case time.Time:
		return x, true, true
	case localDateTime:
		return time.Time(x), false, true
	case date:
		return time.Time(x), false, true
	}
	return time.Time{}, false, false
}

// wholeInt returns f as an integer when it is a whole number of at most
// 53 bits.
func wholeInt(f float64) (int64, bool) {
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}
