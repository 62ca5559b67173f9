package host

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestModule_DiskCopy(t *testing.T) {
	name := moduleCopyName(t.TempDir())
	if readModuleCopy(name) != nil {
		t.Fatal("read a copy before any was written")
	}
	want := gunzipModule()
	writeModuleCopy(name, want)
	got := readModuleCopy(name)
	if !bytes.Equal(got, want) {
		t.Fatalf("the copy read back (%d bytes) is not the embedded module (%d bytes)", len(got), len(want))
	}
	if !bytes.Equal(Module(), want) {
		t.Fatal("Module() is not the embedded module")
	}
	if leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(name), "*.tmp")); len(leftovers) != 0 {
		t.Errorf("temporary files left beside the copy: %v", leftovers)
	}

	// A damaged copy is not used: one byte changed, or cut short.
	bad := bytes.Clone(want)
	bad[len(bad)/2] ^= 1
	if err := os.WriteFile(name, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if readModuleCopy(name) != nil {
		t.Error("a copy with one byte changed was accepted")
	}
	if err := os.WriteFile(name, want[:len(want)-1], 0o644); err != nil {
		t.Fatal(err)
	}
	if readModuleCopy(name) != nil {
		t.Error("a truncated copy was accepted")
	}
	// Rewriting it repairs it.
	writeModuleCopy(name, want)
	if !bytes.Equal(readModuleCopy(name), want) {
		t.Error("a rewritten copy was not accepted")
	}
	if moduleCopyName("") != "" || readModuleCopy("") != nil {
		t.Error("no cache directory must mean no copy")
	}
}
