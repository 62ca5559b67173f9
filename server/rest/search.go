package rest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// DefaultPageSize is the page size of a search that names none (Camunda's
// default, 100).
const DefaultPageSize = 100

// searchable are the results of a search before filtering: each item
// with its fields as JSON values, so that one implementation filters and
// sorts every resource by its documented field names.
type searchable struct {
	items  []any
	fields []map[string]any
	known  map[string]any // the fields of every item (those of T's zero value)
}

// newSearchable encodes items' fields.
func newSearchable[T any](items []T) (*searchable, error) {
	s := &searchable{}
	var zero T
	if err := fieldsOf(zero, &s.known); err != nil {
		return nil, err
	}
	for _, it := range items {
		var m map[string]any
		if err := fieldsOf(it, &m); err != nil {
			return nil, err
		}
		s.items = append(s.items, it)
		s.fields = append(s.fields, m)
	}
	return s, nil
}

// fieldsOf writes v's JSON fields into m.
func fieldsOf(v any, m *map[string]any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode a search result: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(m); err != nil {
		return fmt.Errorf("encode a search result: %w", err)
	}
	return nil
}

// searchOptions say how a resource's filter names map to its result
// fields.
type searchOptions struct {
	// alias maps a filter name to the result field it tests.
	alias map[string]string
	// custom filters test an item themselves (fields, filter value).
	custom map[string]func(item map[string]any, v json.RawMessage) (bool, error)
	// defaultSort is the field items are ordered by when the request
	// names none.
	defaultSort string
}

// run filters, sorts and pages s as q asks.
func (s *searchable) run(q SearchQuery, o searchOptions) (*SearchQueryResult, error) {
	if err := s.check(q.Filter, o); err != nil {
		return nil, err
	}
	keep := make([]int, 0, len(s.items))
	for i := range s.items {
		ok, err := matches(s.fields[i], q.Filter, o)
		if err != nil {
			return nil, err
		}
		if ok {
			keep = append(keep, i)
		}
	}
	sorts := q.Sort
	if len(sorts) == 0 && o.defaultSort != "" {
		sorts = []SearchSort{{Field: o.defaultSort}}
	}
	for _, so := range sorts {
		if so.Order != "" && !strings.EqualFold(so.Order, "ASC") && !strings.EqualFold(so.Order, "DESC") {
			return nil, badRequest("sort order %q is neither ASC nor DESC", so.Order)
		}
		if _, ok := s.known[so.Field]; !ok {
			return nil, badRequest("cannot sort by %q: not a field of the results", so.Field)
		}
	}
	sort.SliceStable(keep, func(a, b int) bool {
		for _, so := range sorts {
			c := compare(s.fields[keep[a]][so.Field], s.fields[keep[b]][so.Field])
			if c == 0 {
				continue
			}
			if strings.EqualFold(so.Order, "DESC") {
				return c > 0
			}
			return c < 0
		}
		return false
	})
	from, limit := 0, DefaultPageSize
	if p := q.Page; p != nil {
		if p.Limit != nil {
			if *p.Limit < 0 {
				return nil, badRequest("page limit %d is negative", *p.Limit)
			}
			limit = *p.Limit
		}
		switch {
		case p.From != nil:
			if *p.From < 0 {
				return nil, badRequest("page from %d is negative", *p.From)
			}
			from = *p.From
		case p.After != "":
			n, err := cursor(p.After)
			if err != nil {
				return nil, err
			}
			from = n + 1
		case p.Before != "":
			n, err := cursor(p.Before)
			if err != nil {
				return nil, err
			}
			from = max(0, n-limit)
			limit = min(limit, n-from)
		}
	}
	res := &SearchQueryResult{Items: []any{}, Page: SearchPageInfo{TotalItems: len(keep)}}
	for i := from; i < len(keep) && i < from+limit; i++ {
		res.Items = append(res.Items, s.items[keep[i]])
	}
	if n := len(res.Items); n > 0 {
		start, end := cursorOf(from), cursorOf(from+n-1)
		res.Page.StartCursor, res.Page.EndCursor = &start, &end
	}
	return res, nil
}

// check refuses a filter naming a field the results do not have, before
// any item is tested (so also when there is none).
func (s *searchable) check(filter map[string]json.RawMessage, o searchOptions) error {
	for name, v := range filter {
		if name == "$or" {
			var alts []map[string]json.RawMessage
			if err := json.Unmarshal(v, &alts); err != nil {
				return badRequest("filter $or is not a list of filters: %v", err)
			}
			for _, alt := range alts {
				if err := s.check(alt, o); err != nil {
					return err
				}
			}
			continue
		}
		if o.custom[name] != nil {
			continue
		}
		field := name
		if a, ok := o.alias[name]; ok {
			field = a
		}
		if _, ok := s.known[field]; !ok {
			return badRequest("filter %q is not supported by flowtrack (docs/camunda-rest.md)", name)
		}
	}
	return nil
}

// A cursor is an item's position in the sorted results, opaque to the
// client (standard base64 of "flowtrack:N", as the API's pattern requires).
func cursorOf(n int) string {
	return base64.StdEncoding.EncodeToString([]byte("flowtrack:" + strconv.Itoa(n)))
}

func cursor(s string) (int, error) {
	raw, err := base64.StdEncoding.DecodeString(s)
	n, ok := 0, false
	if err == nil {
		var rest string
		rest, ok = strings.CutPrefix(string(raw), "flowtrack:")
		n, err = strconv.Atoi(rest)
	}
	if !ok || err != nil || n < 0 {
		return 0, badRequest("page cursor %q is not one this server returned", s)
	}
	return n, nil
}

// matches tests item against every field of filter.
func matches(item map[string]any, filter map[string]json.RawMessage, o searchOptions) (bool, error) {
	for name, v := range filter {
		if name == "$or" {
			var alts []map[string]json.RawMessage
			if err := json.Unmarshal(v, &alts); err != nil {
				return false, badRequest("filter $or is not a list of filters: %v", err)
			}
			any := len(alts) == 0
			for _, alt := range alts {
				ok, err := matches(item, alt, o)
				if err != nil {
					return false, err
				}
				any = any || ok
			}
			if !any {
				return false, nil
			}
			continue
		}
		if f := o.custom[name]; f != nil {
			ok, err := f(item, v)
			if err != nil {
				return false, err
			}
			if !ok {
				return false, nil
			}
			continue
		}
		field := name
		if a, ok := o.alias[name]; ok {
			field = a
		}
		ok, err := test(item[field], v, name)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// test applies one filter property (an exact value, or an object of
// operators) to a field's value.
func test(got any, v json.RawMessage, name string) (bool, error) {
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var want any
	if err := dec.Decode(&want); err != nil {
		return false, badRequest("filter %q: %v", name, err)
	}
	ops, isOps := want.(map[string]any)
	if !isOps {
		return compare(got, want) == 0 && (got == nil) == (want == nil), nil
	}
	for op, arg := range ops {
		var ok bool
		switch op {
		case "$eq":
			ok = compare(got, arg) == 0
		case "$neq":
			ok = compare(got, arg) != 0
		case "$exists":
			b, isBool := arg.(bool)
			if !isBool {
				return false, badRequest("filter %q: $exists takes a boolean", name)
			}
			ok = (got != nil) == b
		case "$gt", "$gte", "$lt", "$lte":
			if got == nil {
				return false, nil
			}
			c := compare(got, arg)
			ok = op == "$gt" && c > 0 || op == "$gte" && c >= 0 || op == "$lt" && c < 0 || op == "$lte" && c <= 0
		case "$in", "$notIn":
			list, isList := arg.([]any)
			if !isList {
				return false, badRequest("filter %q: %s takes a list", name, op)
			}
			in := false
			for _, x := range list {
				in = in || compare(got, x) == 0
			}
			ok = in == (op == "$in")
		case "$like":
			pat, isString := arg.(string)
			if !isString {
				return false, badRequest("filter %q: $like takes a string", name)
			}
			s, _ := got.(string)
			ok = like(pat).MatchString(s)
		default:
			return false, badRequest("filter %q: unknown operator %q", name, op)
		}
		if !ok {
			return false, nil
		}
	}
	return true, nil
}

// like compiles a $like pattern: * any run, ? one character, \ escapes.
func like(pat string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(pat); i++ {
		switch c := pat[i]; {
		case c == '\\' && i+1 < len(pat):
			i++
			b.WriteString(regexp.QuoteMeta(pat[i : i+1]))
		case c == '*':
			b.WriteString(".*")
		case c == '?':
			b.WriteString(".")
		default:
			b.WriteString(regexp.QuoteMeta(pat[i : i+1]))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// compare orders two JSON values: numbers and numeric strings (keys) by
// value, other strings as text, false before true, nil first.
func compare(a, b any) int {
	if a == nil || b == nil {
		switch {
		case a == nil && b == nil:
			return 0
		case a == nil:
			return -1
		}
		return 1
	}
	if x, y, ok := digits(a, b); ok {
		if len(x) != len(y) {
			return cmpInt(len(x), len(y))
		}
		return strings.Compare(x, y)
	}
	if x, ok := number(a); ok {
		if y, ok := number(b); ok {
			switch {
			case x < y:
				return -1
			case x > y:
				return 1
			}
			return 0
		}
	}
	switch x := a.(type) {
	case bool:
		y, _ := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case string:
		y, _ := b.(string)
		return strings.Compare(x, y)
	}
	return strings.Compare(fmt.Sprint(a), fmt.Sprint(b))
}

// digits returns a and b when both are decimal key text (or one a JSON
// integer), which compare by value whatever their length.
func digits(a, b any) (string, string, bool) {
	x, okx := digitText(a)
	y, oky := digitText(b)
	return x, y, okx && oky
}

func digitText(v any) (string, bool) {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case json.Number:
		s = x.String()
	default:
		return "", false
	}
	if s == "" {
		return "", false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	return strings.TrimLeft(s, "0"), true
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// number reads a JSON number.
func number(v any) (float64, bool) {
	if x, ok := v.(json.Number); ok {
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}
