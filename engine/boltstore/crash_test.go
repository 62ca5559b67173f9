package boltstore_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/boltstore"
	"github.com/flowtrack/flowtrack/engine/storetest"
)

var crashKills = flag.Int("crash.kills", 4, "how many times TestStore_Crash kills its child (make stress raises it)")

func TestMain(m *testing.M) {
	storetest.CrashChild(openCrash)
	os.Exit(m.Run())
}

// openCrash opens the crash test's file, synced, waiting for a killed
// child's lock to go.
func openCrash(path string) (engine.Store, func() error, error) {
	s, err := boltstore.Open(path, &boltstore.Options{LockTimeout: 10 * time.Second})
	if err != nil {
		return nil, nil, err
	}
	return s, s.Close, nil
}

// TestStore_Crash runs the store crash test (storetest.Crash) on a file.
func TestStore_Crash(t *testing.T) {
	storetest.Crash(t, filepath.Join(t.TempDir(), "crash.db"), *crashKills, openCrash)
}
