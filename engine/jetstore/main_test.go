package jetstore_test

import (
	"context"
	"flag"
	"os"
	"testing"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/jetstore"
	"github.com/flowtrack/flowtrack/engine/storetest"
	"github.com/nats-io/nats.go"
)

var crashKills = flag.Int("crash.kills", 4, "how many times TestStore_Crash kills its child")

func TestMain(m *testing.M) {
	storetest.CrashChild(openCrash)
	os.Exit(m.Run())
}

// openCrash connects to the NATS server at url and opens the crash
// test's store there.
func openCrash(url string) (engine.Store, func() error, error) {
	nc, err := nats.Connect(url)
	if err != nil {
		return nil, nil, err
	}
	s, err := jetstore.Open(context.Background(), nc, &jetstore.Options{Name: "crash"})
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return s, func() error { nc.Close(); return nil }, nil
}

// TestStore_Crash runs the store crash test (storetest.Crash) on a
// stream of a NATS server in this process: the children, killed with
// SIGKILL at random points, connect to it, so a kill can land between a
// commit's record and the messages it writes.
func TestStore_Crash(t *testing.T) {
	n := startNATS(t)
	storetest.Crash(t, n.ns.ClientURL(), *crashKills, openCrash)
}
