package expr

// Singleton-list conversions of built-in arguments (DMN 1.5 10.3.2.9.4,
// "to singleton list" and "from singleton list"): a value given where a
// parameter's type is a list is taken as the list of that one value
// (count(1) is 1, append("foo", "bar") is ["foo", "bar"]), and a list of
// one item given where the type is not a list is taken as its item
// (upper case(["abc"]) is "ABC", contains(["foobar"], "of") is false).
// null conforms to every type and is never converted.

// feelParamKinds gives, per built-in, the kind of each parameter in
// order: 'l' a list, 's' a type that is not a list (unwrapped from a
// singleton list), 'a' any type (never converted). The last kind
// repeats for the further arguments of a function with any number of
// them. Built-ins absent here convert nothing: those whose list
// parameter also takes the items one by one (min, sum ...) already
// treat a lone item as a list of one.
var feelParamKinds = map[string]string{
	"not": "s",
	// strings
	"substring": "sss", "string length": "s", "upper case": "s", "lower case": "s",
	"substring before": "ss", "substring after": "ss", "replace": "ssss", "contains": "ss",
	"starts with": "ss", "ends with": "ss", "matches": "sss", "split": "ss", "extract": "ss",
	"trim": "s", "string join": "ls",
	// lists
	"list contains": "la", "count": "l", "sublist": "lss", "append": "la", "concatenate": "l",
	"insert before": "lsa", "remove": "ls", "reverse": "l", "index of": "la", "union": "l",
	"distinct values": "l", "flatten": "l", "is empty": "l", "list replace": "lsa", "sort": "la",
	// numbers
	"decimal": "ss", "floor": "ss", "ceiling": "ss", "round up": "ss", "round down": "ss",
	"round half up": "ss", "round half down": "ss", "abs": "s", "modulo": "ss", "sqrt": "s",
	"log": "s", "exp": "s", "odd": "s", "even": "s",
	// conversions and temporal values
	"number": "sss", "duration": "s", "years and months duration": "ss", "date": "sss",
	"date and time": "ss", "time": "ssss", "day of year": "s", "day of week": "s",
	"month of year": "s", "week of year": "s",
	// contexts
	"get value": "ss", "get entries": "s", "context": "l", "context put": "saa",
	// ranges
	"before": "ss", "after": "ss", "meets": "ss", "met by": "ss", "overlaps": "ss",
	"overlaps before": "ss", "overlaps after": "ss", "finishes": "ss", "finished by": "ss",
	"includes": "ss", "during": "ss", "starts": "ss", "started by": "ss", "coincides": "ss",
}

// withConversions returns f with the singleton-list conversions of the
// built-in name applied to its arguments before it runs.
func withConversions(name string, f fnInfo) fnInfo {
	kinds := feelParamKinds[name]
	if kinds == "" || f.fn == nil {
		return f
	}
	inner := f.fn
	skip := 0
	if f.calls {
		skip = 1 // the meter
	}
	f.fn = func(a ...any) (any, error) {
		copied := false
		for i := skip; i < len(a); i++ {
			k := kinds[min(i-skip, len(kinds)-1)]
			var v any
			switch x := a[i].(type) {
			case nil:
				continue
			case []any:
				if k != 's' || len(x) != 1 {
					continue
				}
				v = x[0]
			default:
				if k != 'l' {
					continue
				}
				v = []any{x}
			}
			if !copied {
				a = append([]any(nil), a...)
				copied = true
			}
			a[i] = v
		}
		return inner(a...)
	}
	return f
}
