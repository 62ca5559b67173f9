package boltstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/boltstore"
)

// damagedEnv names the file the child process of TestOpen_Damaged opens.
const damagedEnv = "FLOWTRACK_BOLTSTORE_DAMAGED"

// TestOpen_DamagedChild is the child process of TestOpen_Damaged: it
// opens the file, loads it and runs Check, printing each outcome, so
// that a crash inside bbolt kills this process, not the test binary.
func TestOpen_DamagedChild(t *testing.T) {
	path := os.Getenv(damagedEnv)
	if path == "" {
		t.Skip("the child process of TestOpen_Damaged")
	}
	s, err := boltstore.Open(path, nil)
	fmt.Printf("open: damaged=%v err=%v\n", errors.Is(err, boltstore.ErrDamaged), err)
	if err == nil {
		_, err = s.Load(context.Background())
		fmt.Printf("load: damaged=%v err=%v\n", errors.Is(err, boltstore.ErrDamaged), err)
		fmt.Printf("close: %v\n", s.Close())
	}
	problems, err := boltstore.Check(path, nil)
	fmt.Printf("check: damaged=%v problems=%d err=%v\n", errors.Is(err, boltstore.ErrDamaged), len(problems), err)
}

// goodStore writes a store holding a few documents and returns its
// bytes.
func goodStore(t *testing.T) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "good.db")
	s, err := boltstore.Open(path, &boltstore.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	b := &engine.StoreBatch{Engine: []byte(`{"engine":1}`), Put: map[int64][]byte{}}
	for k := int64(1); k <= 200; k++ {
		b.Put[k] = bytes.Repeat([]byte{'x'}, 300)
	}
	if err := s.Commit(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestOpen_Damaged: a truncated file, an empty one, one whose meta pages
// are damaged, one whose data pages are, and foreign files (an image, a
// text) each give a clear error from Open or Load and Check, never a
// crash: each runs in a child process, which must exit normally.
func TestOpen_Damaged(t *testing.T) {
	good := goodStore(t)
	const page = 4096 // the page size of the stores this machine writes
	if len(good) < 8*page {
		t.Fatalf("the good store has %d bytes, want several pages", len(good))
	}
	flip := func(data []byte, offs ...int) []byte {
		out := bytes.Clone(data)
		for _, o := range offs {
			out[o] ^= 0xFF
		}
		return out
	}
	garbage := func(data []byte, from int) []byte {
		out := bytes.Clone(data)
		for i := from; i < len(out); i++ {
			out[i] = byte(i*7 + 3)
		}
		return out
	}
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{0x42, 0x17}, 5000)...)
	cases := []struct {
		name string
		data []byte
		// open is what Open must say: "damaged" (ErrDamaged), "ok", or
		// "error" (any error).
		open string
		// check is what Check must say: "damaged", "problems" (some
		// reported) or "ok".
		check string
	}{
		{name: "zero length", data: nil, open: "damaged", check: "damaged"},
		{name: "truncated to half", data: good[:len(good)/2], open: "damaged", check: "damaged"},
		{name: "truncated inside the data pages", data: good[:3*page+100], open: "damaged", check: "damaged"},
		{name: "truncated inside the meta pages", data: good[:page+100], open: "damaged", check: "damaged"},
		{name: "both meta pages flipped", data: flip(good, 16+8, page+16+8), open: "damaged", check: "damaged"},
		{name: "both meta magics flipped", data: flip(good, 16, page+16), open: "damaged", check: "damaged"},
		{name: "one meta page flipped", data: flip(good, 16+20), open: "ok", check: "ok"},
		{name: "data pages garbage", data: garbage(good, 2*page), open: "any", check: "any"},
		{name: "png image", data: png, open: "damaged", check: "damaged"},
		{name: "text", data: []byte(strings.Repeat("a text file, not a store\n", 800)), open: "damaged", check: "damaged"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "store.db")
			if err := os.WriteFile(path, tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestOpen_DamagedChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), damagedEnv+"="+path)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("the child process failed (a crash?): %v\n%s", err, out)
			}
			text := string(out)
			t.Log(text)
			switch tc.open {
			case "damaged":
				assertLine(t, text, "open: damaged=true")
			case "ok":
				assertLine(t, text, "open: damaged=false err=<nil>")
				assertLine(t, text, "load: damaged=false err=<nil>")
			}
			switch tc.check {
			case "damaged":
				assertLine(t, text, "check: damaged=true")
			case "ok":
				assertLine(t, text, "check: damaged=false problems=0 err=<nil>")
			}
			if !strings.Contains(text, "check: ") {
				t.Fatalf("the child did not get to Check:\n%s", text)
			}
		})
	}
}

func assertLine(t *testing.T, out, prefix string) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, prefix) {
			return
		}
	}
	t.Errorf("no line starting %q in:\n%s", prefix, out)
}

// TestOpen_EmptyFile: an empty file is refused (it is not created anew),
// while a path with no file creates a store; Check of a sound store
// finds nothing.
func TestOpen_EmptyFile(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := boltstore.Open(empty, nil); !errors.Is(err, boltstore.ErrDamaged) || !strings.Contains(err.Error(), "empty") {
		if s != nil {
			_ = s.Close()
		}
		t.Fatalf("opening an empty file: %v, want ErrDamaged saying it is empty", err)
	}
	fresh := filepath.Join(dir, "fresh.db")
	s, err := boltstore.Open(fresh, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	problems, err := boltstore.Check(fresh, nil)
	if err != nil || len(problems) != 0 {
		t.Fatalf("checking a sound store: %v, %v", problems, err)
	}
	if _, err := boltstore.Check(filepath.Join(dir, "absent.db"), nil); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("checking an absent file: %v, want not exist", err)
	}
}
