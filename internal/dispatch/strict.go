package dispatch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/internal/wire"
)

// maxRequestDepth bounds how deeply a request's JSON nests: the request
// object, its variables object, then at most engine.MaxVariableDepth levels
// inside a variable. Every request carries its variables at that depth, so
// the bound on the bytes is exactly the engine's bound on a value.
const maxRequestDepth = engine.MaxVariableDepth + 2

// scan is what one pass over a request's bytes found: the request
// object's own keys, and the first problem encoding/json would not report
// (a duplicate key) or must not be left to meet (nesting past the limit:
// its decoder recurses once per level, which traps the module on small
// stacks long before its own limit of 10,000).
type scan struct {
	keys      [][]byte // keys of the outermost object, decoded
	duplicate []byte   // first key repeated within one object
	tooDeep   []byte   // outermost key under which nesting passed the limit (nil at the top)
	deep      bool
}

// scanRequest walks data once, without recursion or decoding values. It
// tolerates malformed JSON (the decoder reports that) and stops at the
// first nesting past limit.
func scanRequest(data []byte, limit int) scan {
	var (
		s       scan
		backing [16]frame
		stack   = backing[:0]
		// keys holds the keys of every open object, innermost last: an
		// object's keys start at its frame's first and end where the next
		// open object's begin.
		keys [][]byte
		top  []byte // last key of the outermost object
	)
	for i := 0; i < len(data); i++ {
		switch c := data[i]; c {
		case '"':
			end := stringEnd(data, i)
			if end < 0 {
				return s // unterminated: the decoder reports it
			}
			if n := len(stack); n > 0 && stack[n-1].expectKey {
				f := &stack[n-1]
				f.expectKey = false
				key := unquote(data[i : end+1])
				if s.duplicate == nil && f.seen(keys[f.first:], key) {
					s.duplicate = key
				}
				if f.many == nil {
					keys = append(keys, key)
				}
				if n == 1 {
					top = key
					s.keys = append(s.keys, key)
				}
			}
			i = end
		case '{', '[':
			if len(stack) >= limit {
				s.deep, s.tooDeep = true, top
				return s
			}
			stack = append(stack, frame{object: c == '{', expectKey: c == '{', first: len(keys)})
		case '}', ']':
			if len(stack) == 0 {
				return s
			}
			keys = keys[:stack[len(stack)-1].first]
			stack = stack[:len(stack)-1]
		case ',':
			if n := len(stack); n > 0 && stack[n-1].object {
				stack[n-1].expectKey = true
			}
		}
	}
	return s
}

// frame is one open object or array of a scan.
type frame struct {
	object, expectKey bool
	first             int                 // index of the object's first key in the scan's keys
	many              map[string]struct{} // the object's keys, once there are many
}

// seen reports whether the object, whose keys so far are own (unless it
// has many), already had key, and records it when it has many.
func (f *frame) seen(own [][]byte, key []byte) bool {
	if f.many == nil && len(own) < 16 {
		for _, k := range own {
			if bytes.Equal(k, key) {
				return true
			}
		}
		return false
	}
	if f.many == nil {
		f.many = make(map[string]struct{}, 2*len(own))
		for _, k := range own {
			f.many[string(k)] = struct{}{}
		}
	}
	if _, ok := f.many[string(key)]; ok {
		return true
	}
	f.many[string(key)] = struct{}{}
	return false
}

// stringEnd returns the index of the quote that closes the JSON string
// opening at data[start], or -1.
func stringEnd(data []byte, start int) int {
	for i := start + 1; i < len(data); {
		j := bytes.IndexAny(data[i:], `"\`)
		if j < 0 {
			return -1
		}
		i += j
		if data[i] == '"' {
			return i
		}
		i += 2 // an escape and the character it escapes
	}
	return -1
}

// unquote returns the text of a quoted JSON string: the raw bytes between
// the quotes when it has no escapes, else its decoded form (so that "b"
// and "\u0062" are the same key).
func unquote(quoted []byte) []byte {
	raw := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw
	}
	var s string
	if json.Unmarshal(quoted, &s) != nil {
		return raw // malformed: the decoder reports it
	}
	return []byte(s)
}

// depthError reports nesting past limit; decode checks it before it lets
// encoding/json near the data.
func (s *scan) depthError(op string, limit int) error {
	if !s.deep {
		return nil
	}
	where := "the request"
	if s.tooDeep != nil {
		where = "field " + quote(string(s.tooDeep))
	}
	if string(s.tooDeep) == "variables" {
		// The same mistake as natively, where it is ErrBadVariables.
		return &callError{Code: wire.CodeBadVariables, Message: fmt.Sprintf("%s: %s nests deeper than %d levels of arrays and objects; variable values may nest at most %d (engine.MaxVariableDepth)",
			op, where, limit, engine.MaxVariableDepth)}
	}
	return badRequest("%s: %s nests deeper than %d levels of arrays and objects; variable values may nest at most %d (engine.MaxVariableDepth)",
		op, where, limit, engine.MaxVariableDepth)
}

// keyError reports a duplicate key, or an outermost key that names no
// field of the struct v points to exactly (encoding/json matches field
// names without regard to case; the ABI does not).
func (s *scan) keyError(op string, v any) error {
	if s.duplicate != nil {
		return badRequest("%s: duplicate key %s", op, quote(string(s.duplicate)))
	}
	t := reflect.TypeOf(v).Elem()
	if t.Kind() != reflect.Struct {
		return nil
	}
	for _, k := range s.keys {
		key := string(k)
		exact, near := false, ""
		for i := 0; i < t.NumField(); i++ {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			if name == key {
				exact = true
				break
			}
			if strings.EqualFold(name, key) {
				near = name
			}
		}
		switch {
		case !exact && near != "":
			return badRequest("%s: unknown field %s (field names are case-sensitive: did you mean %s?)", op, quote(key), quote(near))
		case !exact:
			return badRequest("%s: unknown field %s", op, quote(key))
		}
	}
	return nil
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
