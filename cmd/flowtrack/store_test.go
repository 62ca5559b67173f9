package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowtrack/flowtrack/engine/boltstore"
)

// TestStoreCheck: store check says ok for a sound store file (exit 0),
// refuses a damaged or foreign one with a clear error (exit 1), and a
// missing file or no file is a usage error (exit 2).
func TestStoreCheck(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	s, err := boltstore.Open(good, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte(strings.Repeat("just text\n", 500)), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args     []string
		code     int
		out, err string
	}{
		{args: []string{"store", "check", good}, code: exitOK, out: good + ": ok"},
		{args: []string{"store", "check", text}, code: exitProcess, err: "no valid meta page"},
		{args: []string{"store", "check", empty}, code: exitProcess, err: "empty (0 bytes)"},
		{args: []string{"store", "check", filepath.Join(dir, "absent.db")}, code: exitUsage, err: "no such file"},
		{args: []string{"store", "check"}, code: exitUsage, err: "exactly one file"},
		{args: []string{"store"}, code: exitUsage, err: "check FILE"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(tc.args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stdout.String(), tc.out) || !strings.Contains(stderr.String(), tc.err) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit %d, %q, %q", tc.args, code, stdout.String(), stderr.String(), tc.code, tc.out, tc.err)
		}
	}
}
