package main

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestDigestOf(t *testing.T) {
	files := map[string]string{"/a/x/a.go": "package x", "/a/x/b.go": "package x // b", "/m/gen.go": "package main"}
	read := func(name string) ([]byte, error) {
		if s, ok := files[filepath.ToSlash(name)]; ok {
			return []byte(s), nil
		}
		return nil, errors.New("no file " + name)
	}
	listing := "main example.com/x /a/x a.go b.go\ndep example.com/y@v1.2.3\n"
	d1, err := digestOf("go1.26", listing, []string{"/m/gen.go"}, read)
	if err != nil {
		t.Fatal(err)
	}
	// Checked out elsewhere: the same digest.
	moved := map[string]string{}
	for k, v := range files {
		moved["/elsewhere"+k] = v
	}
	readMoved := func(name string) ([]byte, error) { return []byte(moved[filepath.ToSlash(name)]), nil }
	d2, err := digestOf("go1.26", "main example.com/x /elsewhere/a/x a.go b.go\ndep example.com/y@v1.2.3\n", []string{"/elsewhere/m/gen.go"}, readMoved)
	if err != nil || d2 != d1 {
		t.Fatalf("moved tree: %s, %v; want %s", d2, err, d1)
	}
	// Any change to a source, a dependency's version or the Go version changes it.
	for name, change := range map[string]func() (string, error){
		"source": func() (string, error) {
			files["/a/x/b.go"] = "package x // changed"
			defer func() { files["/a/x/b.go"] = "package x // b" }()
			return digestOf("go1.26", listing, []string{"/m/gen.go"}, read)
		},
		"dependency": func() (string, error) {
			return digestOf("go1.26", "main example.com/x /a/x a.go b.go\ndep example.com/y@v1.2.4\n", []string{"/m/gen.go"}, read)
		},
		"go version": func() (string, error) { return digestOf("go1.27", listing, []string{"/m/gen.go"}, read) },
	} {
		d, err := change()
		if err != nil || d == d1 {
			t.Errorf("%s changed: digest %s, %v", name, d, err)
		}
	}
	if _, err := digestOf("go1.26", "what is this", nil, read); err == nil {
		t.Error("a listing line it does not know is an error")
	}
}

func TestWriteGzip_RecordsDigest(t *testing.T) {
	name := filepath.Join(t.TempDir(), "m.wasm.gz")
	if err := writeGzip(name, []byte("\x00asm"), "abc123"); err != nil {
		t.Fatal(err)
	}
	if d, err := recordedDigest(name); err != nil || d != "abc123" {
		t.Fatalf("recorded %q, %v", d, err)
	}
	if b, err := readGzip(name); err != nil || string(b) != "\x00asm" {
		t.Fatalf("read %q, %v", b, err)
	}
	if _, err := recordedDigest(filepath.Join(t.TempDir(), "none.gz")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a missing file: %v", err)
	}
}
