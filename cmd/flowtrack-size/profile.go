package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// errNoNames is returned by profile for a module without a name section:
// the committed module is built with -ldflags=-s, which drops it.
var errNoNames = errors.New("the module has no name section (build it without -ldflags=-s, as make size does)")

// section is one section of a module: its id, its name for a custom
// section, and its body.
type section struct {
	id   byte
	name string
	body []byte
}

// sizeProfile is where a module's bytes go: per section, and the code
// section's function bodies per Go package.
type sizeProfile struct {
	sections map[string]int // section name → body bytes
	packages map[string]int // Go package → bytes of its function bodies
	funcs    map[string]int // function name → body bytes
}

// profile reads a WebAssembly module and attributes its code section to
// Go packages by the function names in its name section.
func profile(wasm []byte) (*sizeProfile, error) {
	secs, err := sections(wasm)
	if err != nil {
		return nil, err
	}
	p := &sizeProfile{sections: map[string]int{}, packages: map[string]int{}, funcs: map[string]int{}}
	var code []byte
	var names map[uint32]string
	var imported uint32
	for _, s := range secs {
		p.sections[sectionName(s)] += len(s.body)
		switch {
		case s.id == 2:
			if imported, err = importedFuncs(s.body); err != nil {
				return nil, fmt.Errorf("import section: %w", err)
			}
		case s.id == 10:
			code = s.body
		case s.id == 0 && s.name == "name":
			if names, err = funcNames(s.body); err != nil {
				return nil, fmt.Errorf("name section: %w", err)
			}
		}
	}
	if names == nil {
		return nil, errNoNames
	}
	r := bytes.NewReader(code)
	n, err := uvarint(r, "function count")
	if err != nil {
		return nil, fmt.Errorf("code section: %w", err)
	}
	for i := range n {
		size, err := uvarint(r, "function body size")
		if err != nil {
			return nil, fmt.Errorf("code section, function %d: %w", i, err)
		}
		if size > uint32(r.Len()) {
			return nil, fmt.Errorf("code section, function %d: body of %d bytes, only %d left", i, size, r.Len())
		}
		_, _ = r.Seek(int64(size), io.SeekCurrent)
		name := names[imported+i]
		if name == "" {
			name = fmt.Sprintf("func[%d]", imported+i)
		}
		p.funcs[name] += int(size)
		p.packages[packageOf(name)] += int(size)
	}
	return p, nil
}

// sections splits a module into its sections.
func sections(wasm []byte) ([]section, error) {
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" {
		return nil, errors.New("not a WebAssembly module (no \\0asm magic)")
	}
	r := bytes.NewReader(wasm[8:])
	var out []section
	for r.Len() > 0 {
		at := len(wasm) - r.Len()
		id, _ := r.ReadByte()
		size, err := uvarint(r, "section size")
		if err != nil {
			return nil, fmt.Errorf("section %d at offset %d: %w", id, at, err)
		}
		if size > uint32(r.Len()) {
			return nil, fmt.Errorf("section %d at offset %d: %d bytes, only %d left", id, at, size, r.Len())
		}
		body := make([]byte, size)
		_, _ = r.Read(body)
		s := section{id: id, body: body}
		if id == 0 {
			br := bytes.NewReader(body)
			name, err := str(br, "custom section name")
			if err != nil {
				return nil, fmt.Errorf("custom section at offset %d: %w", at, err)
			}
			s.name, s.body = name, body[len(body)-br.Len():]
		}
		out = append(out, s)
	}
	return out, nil
}

var sectionNames = [...]string{"custom", "type", "import", "function", "table", "memory", "global", "export", "start", "element", "code", "data", "datacount"}

func sectionName(s section) string {
	if s.id == 0 {
		return "custom:" + s.name
	}
	if int(s.id) < len(sectionNames) {
		return sectionNames[s.id]
	}
	return fmt.Sprintf("section %d", s.id)
}

// importedFuncs counts the imported functions, which come first in the
// function index space.
func importedFuncs(body []byte) (uint32, error) {
	r := bytes.NewReader(body)
	n, err := uvarint(r, "import count")
	if err != nil {
		return 0, err
	}
	var funcs uint32
	for i := range n {
		for _, what := range []string{"module name", "import name"} {
			if _, err := str(r, what); err != nil {
				return 0, fmt.Errorf("import %d: %w", i, err)
			}
		}
		kind, err := r.ReadByte()
		if err != nil {
			return 0, fmt.Errorf("import %d: no kind", i)
		}
		if kind != 0 {
			// Go's modules import functions only; other kinds have
			// variable-length descriptors this profile does not need.
			return 0, fmt.Errorf("import %d: kind %d, only function imports are supported", i, kind)
		}
		if _, err := uvarint(r, "type index"); err != nil {
			return 0, fmt.Errorf("import %d: %w", i, err)
		}
		funcs++
	}
	return funcs, nil
}

// funcNames reads the function names subsection (id 1) of a name section.
func funcNames(body []byte) (map[uint32]string, error) {
	r := bytes.NewReader(body)
	for r.Len() > 0 {
		id, _ := r.ReadByte()
		size, err := uvarint(r, "subsection size")
		if err != nil {
			return nil, err
		}
		if size > uint32(r.Len()) {
			return nil, fmt.Errorf("subsection %d: %d bytes, only %d left", id, size, r.Len())
		}
		if id != 1 {
			_, _ = r.Seek(int64(size), io.SeekCurrent)
			continue
		}
		n, err := uvarint(r, "name count")
		if err != nil {
			return nil, err
		}
		names := make(map[uint32]string, n)
		for i := range n {
			idx, err := uvarint(r, "function index")
			if err != nil {
				return nil, fmt.Errorf("name %d: %w", i, err)
			}
			if names[idx], err = str(r, "function name"); err != nil {
				return nil, fmt.Errorf("name %d: %w", i, err)
			}
		}
		return names, nil
	}
	return map[uint32]string{}, nil
}

// packageOf gives the Go package of a function name as Go's wasm linker
// writes it: the import path with '/' as '_', then '.', then the symbol.
func packageOf(name string) string {
	prefix := ""
	for _, host := range []string{"github.com_", "golang.org_", "gopkg.in_"} {
		if strings.HasPrefix(name, host) {
			prefix, name = host, name[len(host):]
			break
		}
	}
	if dot := strings.IndexByte(name, '.'); dot >= 0 {
		name = name[:dot]
	}
	return prefix + name
}

func uvarint(r *bytes.Reader, what string) (uint32, error) {
	v, err := binary.ReadUvarint(r)
	if err != nil || v > 1<<32-1 {
		return 0, fmt.Errorf("bad LEB128 %s", what)
	}
	return uint32(v), nil
}

func str(r *bytes.Reader, what string) (string, error) {
	n, err := uvarint(r, what+" length")
	if err != nil {
		return "", err
	}
	if n > uint32(r.Len()) {
		return "", fmt.Errorf("%s: %d bytes, only %d left", what, n, r.Len())
	}
	b := make([]byte, n)
	_, _ = r.Read(b)
	return string(b), nil
}

// top returns the n largest entries of m, largest first (ties by name).
func top(m map[string]int, n int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	if len(keys) > n {
		keys = keys[:n]
	}
	return keys
}
