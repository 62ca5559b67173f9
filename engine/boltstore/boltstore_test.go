package boltstore_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/boltstore"
	"github.com/flowtrack/flowtrack/engine/storetest"
)

// TestStore_Suite runs the store conformance suite on files: each reopen
// closes the file and opens it again, as a new process would.
func TestStore_Suite(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Opener {
		path := filepath.Join(t.TempDir(), "flowtrack.db")
		var last *boltstore.Store
		t.Cleanup(func() {
			if last != nil {
				_ = last.Close()
			}
		})
		return func(t *testing.T) engine.Store {
			t.Helper()
			if last != nil {
				if err := last.Close(); err != nil {
					t.Fatal(err)
				}
				last = nil
			}
			s, err := boltstore.Open(path, &boltstore.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			last = s
			return s
		}
	})
}

// TestOpen_Errors: a file that is no database is refused naming it, and a
// file another store holds is refused after the lock timeout.
func TestOpen_Errors(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, []byte(strings.Repeat("not a database ", 1000)), 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := boltstore.Open(garbage, nil); err == nil || !strings.Contains(err.Error(), garbage) {
		if s != nil {
			_ = s.Close()
		}
		t.Fatalf("opening a file that is no database: %v, want an error naming it", err)
	}

	held := filepath.Join(dir, "held.db")
	s, err := boltstore.Open(held, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s2, err := boltstore.Open(held, &boltstore.Options{LockTimeout: 10 * time.Millisecond}); err == nil {
		_ = s2.Close()
		t.Fatal("a second Open of a file in use succeeded")
	}
}
