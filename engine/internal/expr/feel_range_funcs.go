package expr

// The range built-ins of DMN 1.5 (10.3.4.9): before, after, meets, met
// by, overlaps, overlaps before, overlaps after, finishes, finished by,
// includes, during, starts, started by and coincides, over points (any
// comparable values) and ranges. A range with a null end is unbounded
// there, and a comparison unary test (< 10, >= 5) is the range it
// stands for. Arguments that are neither, or whose values cannot be
// compared, make the result null.

// feelRangeParams are the signatures of the range built-ins, for calls
// with named arguments. before(point, range) and before(range, point)
// share their names: the order the names are written in picks one.
var feelRangeParams = map[string][][]string{
	"before":          {{"point1", "point2"}, {"point", "range"}, {"range", "point"}, {"range1", "range2"}},
	"after":           {{"point1", "point2"}, {"point", "range"}, {"range", "point"}, {"range1", "range2"}},
	"meets":           {{"range1", "range2"}},
	"met by":          {{"range1", "range2"}},
	"overlaps":        {{"range1", "range2"}},
	"overlaps before": {{"range1", "range2"}},
	"overlaps after":  {{"range1", "range2"}},
	"finishes":        {{"point", "range"}, {"range1", "range2"}},
	"finished by":     {{"range", "point"}, {"range1", "range2"}},
	"includes":        {{"range", "point"}, {"range1", "range2"}},
	"during":          {{"point", "range"}, {"range1", "range2"}},
	"starts":          {{"point", "range"}, {"range1", "range2"}},
	"started by":      {{"range", "point"}, {"range1", "range2"}},
	"coincides":       {{"point1", "point2"}, {"range1", "range2"}},
}

// end is a range's end point: a value, or minus or plus infinity (inf
// -1 or 1) for an unbounded end.
type end struct {
	v   any
	inf int
}

// span is a range for the range built-ins.
type span struct {
	lo, hi         end
	loIncl, hiIncl bool
}

// rangeArg reads a range built-in's argument: a span, or a point.
func rangeArg(v any) (s span, isSpan, ok bool) {
	switch x := v.(type) {
	case nil, []any, map[string]any, bool, *feelFunc:
		return span{}, false, false
	case feelRange:
		s = span{lo: end{v: x.lo, inf: -1}, hi: end{v: x.hi, inf: 1}, loIncl: x.loIncl, hiIncl: x.hiIncl}
		if x.lo != nil {
			s.lo.inf = 0
		}
		if x.hi != nil {
			s.hi.inf = 0
		}
		return s, true, true
	case unaryTest:
		switch x.op {
		case "<", "<=":
			return span{lo: end{inf: -1}, hi: end{v: x.v}, hiIncl: x.op == "<="}, true, true
		case ">", ">=":
			return span{lo: end{v: x.v}, hi: end{inf: 1}, loIncl: x.op == ">="}, true, true
		}
		return span{}, false, false
	}
	return span{}, false, true
}

// rangeCmp compares end points, remembering whether any pair could not
// be compared.
type rangeCmp struct{ bad bool }

func (r *rangeCmp) cmp(x, y end) int {
	if x.inf != 0 || y.inf != 0 {
		return cmpInt(int64(x.inf), int64(y.inf))
	}
	c, ok := compare(x.v, y.v)
	if !ok {
		r.bad = true
	}
	return c
}

func (r *rangeCmp) lt(x, y end) bool { return r.cmp(x, y) < 0 }
func (r *rangeCmp) gt(x, y end) bool { return r.cmp(x, y) > 0 }
func (r *rangeCmp) eq(x, y end) bool { return r.cmp(x, y) == 0 }

// rangeFn builds a range built-in from its cases: point and point,
// point and range, range and point, range and range (nil where the
// function has no such signature).
func rangeFn(pp func(r *rangeCmp, a, b end) bool, pr func(r *rangeCmp, p end, s span) bool,
	rp func(r *rangeCmp, s span, p end) bool, rr func(r *rangeCmp, s, t span) bool) fnInfo {
	return fnInfo{min: 2, max: 2, pure: true, fn: func(a ...any) (any, error) {
		s1, span1, ok1 := rangeArg(a[0])
		s2, span2, ok2 := rangeArg(a[1])
		if !ok1 || !ok2 {
			return nil, nil
		}
		p1, p2 := end{v: a[0]}, end{v: a[1]}
		var r rangeCmp
		var out bool
		switch {
		case !span1 && !span2 && pp != nil:
			out = pp(&r, p1, p2)
		case !span1 && span2 && pr != nil:
			out = pr(&r, p1, s2)
		case span1 && !span2 && rp != nil:
			out = rp(&r, s1, p2)
		case span1 && span2 && rr != nil:
			out = rr(&r, s1, s2)
		default:
			return nil, nil
		}
		if r.bad {
			return nil, nil
		}
		return out, nil
	}}
}

func includesPoint(r *rangeCmp, s span, p end) bool {
	return r.lt(s.lo, p) && r.gt(s.hi, p) || r.eq(s.lo, p) && s.loIncl || r.eq(s.hi, p) && s.hiIncl
}

func includesRange(r *rangeCmp, s, t span) bool {
	return (r.lt(s.lo, t.lo) || r.eq(s.lo, t.lo) && (s.loIncl || !t.loIncl)) &&
		(r.gt(s.hi, t.hi) || r.eq(s.hi, t.hi) && (s.hiIncl || !t.hiIncl))
}

func overlapsBefore(r *rangeCmp, s, t span) bool {
	return (r.lt(s.lo, t.lo) || r.eq(s.lo, t.lo) && s.loIncl && !t.loIncl) &&
		(r.gt(s.hi, t.lo) || r.eq(s.hi, t.lo) && s.hiIncl && t.loIncl) &&
		(r.lt(s.hi, t.hi) || r.eq(s.hi, t.hi) && (!s.hiIncl || t.hiIncl))
}

func finishesRange(r *rangeCmp, s, t span) bool {
	return s.hiIncl == t.hiIncl && r.eq(s.hi, t.hi) &&
		(r.gt(s.lo, t.lo) || r.eq(s.lo, t.lo) && (!s.loIncl || t.loIncl))
}

func startsRange(r *rangeCmp, s, t span) bool {
	return r.eq(s.lo, t.lo) && s.loIncl == t.loIncl &&
		(r.gt(t.hi, s.hi) || r.eq(s.hi, t.hi) && (!s.hiIncl || t.hiIncl))
}

// feelRangeLibrary is merged into feelLibrary.
var feelRangeLibrary = map[string]fnInfo{
	"before": rangeFn(
		func(r *rangeCmp, a, b end) bool { return r.lt(a, b) },
		func(r *rangeCmp, p end, s span) bool { return r.lt(p, s.lo) || r.eq(p, s.lo) && !s.loIncl },
		func(r *rangeCmp, s span, p end) bool { return r.lt(s.hi, p) || r.eq(s.hi, p) && !s.hiIncl },
		func(r *rangeCmp, s, t span) bool {
			return r.lt(s.hi, t.lo) || (!s.hiIncl || !t.loIncl) && r.eq(s.hi, t.lo)
		}),
	"after": rangeFn(
		func(r *rangeCmp, a, b end) bool { return r.gt(a, b) },
		func(r *rangeCmp, p end, s span) bool { return r.gt(p, s.hi) || r.eq(p, s.hi) && !s.hiIncl },
		func(r *rangeCmp, s span, p end) bool { return r.gt(s.lo, p) || r.eq(s.lo, p) && !s.loIncl },
		func(r *rangeCmp, s, t span) bool {
			return r.gt(s.lo, t.hi) || (!s.loIncl || !t.hiIncl) && r.eq(s.lo, t.hi)
		}),
	"meets": rangeFn(nil, nil, nil, func(r *rangeCmp, s, t span) bool {
		return s.hiIncl && t.loIncl && r.eq(s.hi, t.lo)
	}),
	"met by": rangeFn(nil, nil, nil, func(r *rangeCmp, s, t span) bool {
		return s.loIncl && t.hiIncl && r.eq(s.lo, t.hi)
	}),
	"overlaps": rangeFn(nil, nil, nil, func(r *rangeCmp, s, t span) bool {
		return (r.gt(s.hi, t.lo) || r.eq(s.hi, t.lo) && s.hiIncl && t.loIncl) &&
			(r.lt(s.lo, t.hi) || r.eq(s.lo, t.hi) && s.loIncl && t.hiIncl)
	}),
	"overlaps before": rangeFn(nil, nil, nil, overlapsBefore),
	"overlaps after": rangeFn(nil, nil, nil, func(r *rangeCmp, s, t span) bool {
		return overlapsBefore(r, t, s)
	}),
	"finishes": rangeFn(nil,
		func(r *rangeCmp, p end, s span) bool { return s.hiIncl && r.eq(s.hi, p) },
		nil, finishesRange),
	"finished by": rangeFn(nil, nil,
		func(r *rangeCmp, s span, p end) bool { return s.hiIncl && r.eq(s.hi, p) },
		func(r *rangeCmp, s, t span) bool { return finishesRange(r, t, s) }),
	"includes": rangeFn(nil, nil, includesPoint, includesRange),
	"during": rangeFn(nil,
		func(r *rangeCmp, p end, s span) bool { return includesPoint(r, s, p) },
		nil,
		func(r *rangeCmp, s, t span) bool { return includesRange(r, t, s) }),
	"starts": rangeFn(nil,
		func(r *rangeCmp, p end, s span) bool { return s.loIncl && r.eq(s.lo, p) },
		nil, startsRange),
	"started by": rangeFn(nil, nil,
		func(r *rangeCmp, s span, p end) bool { return s.loIncl && r.eq(s.lo, p) },
		func(r *rangeCmp, s, t span) bool { return startsRange(r, t, s) }),
	"coincides": rangeFn(
		func(r *rangeCmp, a, b end) bool { return r.eq(a, b) },
		nil, nil,
		func(r *rangeCmp, s, t span) bool {
			return r.eq(s.lo, t.lo) && s.loIncl == t.loIncl && r.eq(s.hi, t.hi) && s.hiIncl == t.hiIncl
		}),
}
