package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// module assembles a minimal module: one imported function, two defined
// functions with bodies of 3 and 5 bytes, and (if names) a name section
// naming them as Go's linker does.
func module(names bool) []byte {
	sec := func(id byte, body ...byte) []byte { return append([]byte{id, byte(len(body))}, body...) }
	str := func(s string) []byte { return append([]byte{byte(len(s))}, s...) }
	var m []byte
	m = append(m, "\x00asm\x01\x00\x00\x00"...)
	m = append(m, sec(1, 1, 0x60, 0, 0)...) // type: () -> ()
	imp := []byte{1}
	imp = append(imp, str("env")...)
	imp = append(imp, str("f")...)
	imp = append(imp, 0, 0)
	m = append(m, sec(2, imp...)...)
	m = append(m, sec(3, 2, 0, 0)...)
	m = append(m, sec(10, 2, 3, 0, 0x01, 0x0b, 5, 0, 0x01, 0x01, 0x01, 0x0b)...)
	if names {
		sub := []byte{3}
		sub = append(sub, 0)
		sub = append(sub, str("env.f")...)
		sub = append(sub, 1)
		sub = append(sub, str("github.com_a_b.F")...)
		sub = append(sub, 2)
		sub = append(sub, str("runtime.main")...)
		body := append(str("name"), append([]byte{1, byte(len(sub))}, sub...)...)
		m = append(m, sec(0, body...)...)
	}
	return m
}

func TestProfile(t *testing.T) {
	p, err := profile(module(true))
	if err != nil {
		t.Fatal(err)
	}
	if p.packages["github.com_a_b"] != 3 || p.packages["runtime"] != 5 || len(p.packages) != 2 {
		t.Errorf("packages = %v, want github.com_a_b 3 and runtime 5 (the import is not code)", p.packages)
	}
	if p.funcs["runtime.main"] != 5 || p.sections["code"] != 11 {
		t.Errorf("funcs = %v, sections = %v", p.funcs, p.sections)
	}
	if got := top(p.packages, 1); len(got) != 1 || got[0] != "runtime" {
		t.Errorf("top = %v, want [runtime]", got)
	}
	var out bytes.Buffer
	if err := report(&out, "m.wasm", module(true), 5); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "code by package (largest 2 of 2)") {
		t.Errorf("report:\n%s", out.String())
	}
}

func TestProfileBadInput(t *testing.T) {
	if _, err := profile(module(false)); !errors.Is(err, errNoNames) {
		t.Errorf("no name section: err = %v, want errNoNames", err)
	}
	whole := module(true)
	for _, tc := range []struct {
		name string
		wasm []byte
		want string
	}{
		{"empty", nil, "not a WebAssembly module"},
		{"truncated section", whole[:len(whole)-3], "only"},
		{"truncated header", whole[:9], "section"},
	} {
		_, err := profile(tc.wasm)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}
