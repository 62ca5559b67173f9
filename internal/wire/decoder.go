package wire

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// Decoder reads the hot requests and responses (start, complete_job,
// publish_message, advance, the envelope) without reflection: in the wasm
// module, where Go code runs 7–11x slower than natively, encoding/json's
// reflection was a third of a start call.
//
// It is a fast path, not a second definition of the contract: it accepts
// only plain input (exact known keys, no duplicate key at any level, no
// escaped key, nesting within the limit, numbers that convert exactly, valid
// UTF-8) and reports false on anything else, without saying why. The caller
// then decodes the same bytes with its strict encoding/json decoder, which
// gives the error, or the value for the rare input this one declines (an
// escaped key, a surrogate escape). A test and a fuzz target hold every
// input it accepts to the result of encoding/json.
//
// A Decoder is not safe for concurrent use; the zero value is not usable
// (NewDecoder).
type Decoder struct {
	data  []byte
	pos   int
	depth int // containers open around pos
	limit int // containers that may be open at once
}

// NewDecoder returns a Decoder over data that declines nesting deeper than
// limit arrays and objects (the request object counts as one).
func NewDecoder(data []byte, limit int) *Decoder {
	return &Decoder{data: data, limit: limit}
}

// peek skips white space and returns the next byte, or 0 at the end (or
// at a NUL byte: end reports which).
func (d *Decoder) peek() byte {
	for d.pos < len(d.data) {
		switch c := d.data[d.pos]; c {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return c
		}
	}
	return 0
}

// Document decodes data as one object, calling field for each key of it
// (see Object), and reports whether data held exactly that: white space
// alone counts as {}, as the module's requests allow. A key repeated in
// the object is declined.
func (d *Decoder) Document(field func(key []byte) bool) bool {
	if d.end() {
		return true
	}
	var seen [8][]byte
	n := 0
	ok := d.Object(func(key []byte) bool {
		for _, k := range seen[:n] {
			if string(k) == string(key) {
				return false
			}
		}
		if n == len(seen) {
			return false
		}
		seen[n] = key
		n++
		return field(key)
	})
	return ok && d.end()
}

// end skips white space and reports whether nothing follows.
func (d *Decoder) end() bool {
	d.peek()
	return d.pos == len(d.data)
}

// Object decodes the object at the current position, calling field with
// each key (valid until the next call) once the decoder stands before its
// value; field must decode the value and report success. Keys with
// escapes are declined. Object does not check for repeated keys: Document
// does for its object, Value for the objects it builds.
func (d *Decoder) Object(field func(key []byte) bool) bool {
	if d.peek() != '{' || d.depth >= d.limit {
		return false
	}
	d.depth++
	d.pos++
	if d.peek() == '}' {
		d.pos++
		d.depth--
		return true
	}
	for {
		if d.peek() != '"' {
			return false
		}
		key, ok := d.plainString()
		if !ok || d.peek() != ':' {
			return false
		}
		d.pos++
		if !field(key) {
			return false
		}
		switch d.peek() {
		case ',':
			d.pos++
		case '}':
			d.pos++
			d.depth--
			return true
		default:
			return false
		}
	}
}

// plainString reads a string without escapes at the current position
// (the opening quote) and returns its bytes, which alias the data.
func (d *Decoder) plainString() ([]byte, bool) {
	start := d.pos + 1
	high := false
	for i := start; i < len(d.data); i++ {
		switch c := d.data[i]; {
		case c == '"':
			s := d.data[start:i]
			if high && !utf8.Valid(s) {
				return nil, false
			}
			d.pos = i + 1
			return s, true
		case c == '\\' || c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			high = true
		}
	}
	return nil, false
}

// String decodes a string value. Escapes are decoded except \u escapes of
// surrogates, which are declined (encoding/json's handling of a lone one
// is not worth repeating here).
func (d *Decoder) String() (string, bool) {
	if d.peek() != '"' {
		return "", false
	}
	start := d.pos
	if s, ok := d.plainString(); ok {
		return string(s), true
	}
	d.pos = start
	return d.escapedString()
}

// escapedString decodes a string with escapes at the current position.
func (d *Decoder) escapedString() (string, bool) {
	buf := make([]byte, 0, 32)
	high := false
	for i := d.pos + 1; i < len(d.data); i++ {
		c := d.data[i]
		switch {
		case c == '"':
			if high && !utf8.Valid(buf) {
				return "", false
			}
			d.pos = i + 1
			return string(buf), true
		case c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			high = true
			buf = append(buf, c)
		case c != '\\':
			buf = append(buf, c)
		case i+1 >= len(d.data):
			return "", false
		default:
			i++
			switch e := d.data[i]; e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				if i+4 >= len(d.data) {
					return "", false
				}
				r, err := strconv.ParseUint(string(d.data[i+1:i+5]), 16, 32)
				if err != nil || (r >= 0xD800 && r < 0xE000) {
					return "", false
				}
				buf = utf8.AppendRune(buf, rune(r))
				i += 4
			default:
				return "", false
			}
		}
	}
	return "", false
}

// number returns the bytes of the JSON number at the current position,
// checked against JSON's grammar.
func (d *Decoder) number() ([]byte, bool) {
	d.peek()
	data, i := d.data, d.pos
	digits := func() bool {
		start := i
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
		return i > start
	}
	if i < len(data) && data[i] == '-' {
		i++
	}
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case !digits():
		return nil, false
	}
	if i < len(data) && data[i] == '.' {
		i++
		if !digits() {
			return nil, false
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if !digits() {
			return nil, false
		}
	}
	num := data[d.pos:i]
	d.pos = i
	return num, true
}

// Int64 decodes an integer that fits int64 (no fraction or exponent, as
// encoding/json requires of an int64 field).
func (d *Decoder) Int64() (int64, bool) {
	num, ok := d.number()
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(string(num), 10, 64)
	return n, err == nil
}

// Float64 decodes a number that converts to a finite float64.
func (d *Decoder) Float64() (float64, bool) {
	num, ok := d.number()
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(num), 64)
	return f, err == nil
}

// Bool decodes true or false.
func (d *Decoder) Bool() (bool, bool) {
	switch {
	case d.literal("true"):
		return true, true
	case d.literal("false"):
		return false, true
	}
	return false, false
}

// Null reports whether the next value is null, and if so consumes it.
func (d *Decoder) Null() bool { return d.literal("null") }

func (d *Decoder) literal(word string) bool {
	d.peek()
	if len(d.data)-d.pos < len(word) || string(d.data[d.pos:d.pos+len(word)]) != word {
		return false
	}
	d.pos += len(word)
	return true
}

// Value decodes any JSON value as encoding/json decodes into an any:
// map[string]any, []any, string, float64, bool or nil.
func (d *Decoder) Value() (any, bool) {
	switch d.peek() {
	case '{':
		m, ok := d.Variables()
		return m, ok
	case '[':
		if d.depth >= d.limit {
			return nil, false
		}
		d.depth++
		d.pos++
		arr := []any{}
		if d.peek() == ']' {
			d.pos++
			d.depth--
			return arr, true
		}
		for {
			v, ok := d.Value()
			if !ok {
				return nil, false
			}
			arr = append(arr, v)
			switch d.peek() {
			case ',':
				d.pos++
			case ']':
				d.pos++
				d.depth--
				return arr, true
			default:
				return nil, false
			}
		}
	case '"':
		return d.String()
	case 't', 'f':
		return d.Bool()
	case 'n':
		return nil, d.Null()
	}
	num, ok := d.number()
	if !ok {
		return nil, false
	}
	return plainFloat(num)
}

// plainFloat reads the JSON number num as the float64 the engine's value
// model makes of it (engine.NormalizeVariables), when that is plainly a
// float64: at most 15 significant digits (they survive the round trip)
// and a magnitude far from float64's limits; zero is 0, never -0. Any
// other number is declined, for the strict decoder, which keeps its
// digits.
func plainFloat(num []byte) (any, bool) {
	digits, nonzero := 0, false
	for _, c := range num {
		if c == 'e' || c == 'E' {
			break
		}
		if c >= '1' && c <= '9' {
			nonzero = true
		}
		if c >= '0' && c <= '9' && nonzero {
			digits++
		}
	}
	if digits > 15 {
		return nil, false
	}
	f, err := strconv.ParseFloat(string(num), 64)
	switch {
	case err != nil:
		return nil, false
	case f == 0:
		return 0.0, true
	case math.Abs(f) <= 1e-300 || math.Abs(f) >= 1e300:
		return nil, false
	}
	return f, true
}

// Variables decodes an object of values (Value), or null as a nil map.
func (d *Decoder) Variables() (map[string]any, bool) {
	if d.Null() {
		return nil, true
	}
	m := map[string]any{}
	ok := d.Object(func(key []byte) bool {
		if _, dup := m[string(key)]; dup {
			return false
		}
		v, ok := d.Value()
		m[string(key)] = v
		return ok
	})
	return m, ok
}

// Raw returns the bytes of the next value, checked as Value checks them
// but not decoded; they alias the data.
func (d *Decoder) Raw() ([]byte, bool) {
	if d.end() {
		return nil, false
	}
	start := d.pos
	if !d.skip() {
		return nil, false
	}
	return d.data[start:d.pos], true
}

// skip passes over one value.
func (d *Decoder) skip() bool {
	switch d.peek() {
	case '{':
		// Repeated keys are not looked for: a skipped value is decoded
		// by encoding/json later, or not at all.
		return d.Object(func([]byte) bool { return d.skip() })
	case '[':
		if d.depth >= d.limit {
			return false
		}
		d.depth++
		d.pos++
		if d.peek() == ']' {
			d.pos++
			d.depth--
			return true
		}
		for {
			if !d.skip() {
				return false
			}
			switch d.peek() {
			case ',':
				d.pos++
			case ']':
				d.pos++
				d.depth--
				return true
			default:
				return false
			}
		}
	case '"':
		_, ok := d.String()
		return ok
	case 't', 'f':
		_, ok := d.Bool()
		return ok
	case 'n':
		return d.Null()
	}
	_, ok := d.number()
	return ok
}
