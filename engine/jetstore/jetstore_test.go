package jetstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/jetstore"
	"github.com/flowtrack/flowtrack/engine/storetest"
	"github.com/flowtrack/flowtrack/server"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// natsDir is a NATS server with JetStream in dir, on loopback, and a
// connection to it; restart shuts both down and starts them again on the
// same directory, as a server restart does.
type natsDir struct {
	t   *testing.T
	dir string
	ns  *natsserver.Server
	nc  *nats.Conn
}

func startNATS(t *testing.T) *natsDir {
	n := &natsDir{t: t, dir: t.TempDir()}
	n.start()
	t.Cleanup(n.stop)
	return n
}

func (n *natsDir) start() {
	n.t.Helper()
	ns, err := server.StartNATS(n.dir, 0)
	if err != nil {
		n.t.Fatal(err)
	}
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		ns.Shutdown()
		n.t.Fatal(err)
	}
	n.ns, n.nc = ns, nc
}

func (n *natsDir) stop() {
	if n.ns == nil {
		return
	}
	n.nc.Close()
	n.ns.Shutdown()
	n.ns.WaitForShutdown()
	n.ns = nil
}

func (n *natsDir) restart() {
	n.stop()
	n.start()
}

// TestStore_Suite runs the store conformance suite on streams of an
// embedded NATS server: each reopen restarts the server on its directory
// and opens the store on a new connection, as a restarted flowtrack serve
// does.
func TestStore_Suite(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Opener {
		n := startNATS(t)
		opened := false
		return func(t *testing.T) engine.Store {
			t.Helper()
			if opened {
				n.restart()
			}
			opened = true
			s, err := jetstore.Open(context.Background(), n.nc, nil)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
	})
}

// TestStore_Errors: a bad name is refused with an error naming it.
func TestStore_Errors(t *testing.T) {
	ctx := context.Background()
	n := startNATS(t)
	if _, err := jetstore.Open(ctx, n.nc, &jetstore.Options{Name: "a.b"}); err == nil || !strings.Contains(err.Error(), `"a.b"`) {
		t.Errorf("Open with name a.b: %v, want an error naming it", err)
	}
}

// TestStore_CommitAgain: a commit written again, as the engine does after
// a commit whose outcome it does not know (an acknowledgement lost), with
// more history since, leaves what one commit of the later batch leaves:
// no deployment and no history chunk twice.
func TestStore_CommitAgain(t *testing.T) {
	ctx := context.Background()
	n := startNATS(t)
	s, err := jetstore.Open(ctx, n.nc, &jetstore.Options{Name: "again"})
	if err != nil {
		t.Fatal(err)
	}
	first := &engine.StoreBatch{Engine: []byte(`{"n":1}`), Messages: []byte(`[{"m":1}]`), Deployments: [][]byte{[]byte(`{"d":0}`)},
		Put:     map[int64][]byte{1: []byte(`{"i":1}`)},
		History: map[int64]engine.HistoryChunk{1: {From: 0, Records: []byte(`[{"seq":1}]`)}}}
	again := &engine.StoreBatch{Engine: []byte(`{"n":2}`), Deployments: first.Deployments,
		Put:     map[int64][]byte{1: []byte(`{"i":2}`)},
		History: map[int64]engine.HistoryChunk{1: {From: 0, Records: []byte(`[{"seq":1},{"seq":2}]`)}}}
	// The lost acknowledgement: a store that saw the stream before the
	// first commit landed writes the batch again, as the engine's store
	// does when it did not learn that its commit landed.
	retrying, err := jetstore.Open(ctx, n.nc, &jetstore.Options{Name: "again"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := retrying.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, first); err != nil {
		t.Fatal(err)
	}
	if err := retrying.Commit(ctx, again); err != nil {
		t.Fatal(err)
	}
	st, err := s.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	si := st.Instances[1]
	if string(st.Messages) != `[{"m":1}]` {
		t.Errorf("message buffer %s, want the one committed (a later batch without one keeps it)", st.Messages)
	}
	if string(st.Engine) != `{"n":2}` || len(st.Deployments) != 1 || si == nil || string(si.Doc) != `{"i":2}` ||
		len(si.History) != 1 || string(si.History[0].Records) != `[{"seq":1},{"seq":2}]` {
		t.Fatalf("after a commit written twice: engine %s, %d deployments, instance %+v", st.Engine, len(st.Deployments), si)
	}
	if err := s.Commit(ctx, &engine.StoreBatch{Engine: []byte(`{"n":3}`), Deployments: [][]byte{[]byte(`{"d":1}`)}}); err != nil {
		t.Fatal(err)
	}
	if st, err = s.Load(ctx); err != nil || len(st.Deployments) != 2 || string(st.Deployments[1]) != `{"d":1}` {
		t.Fatalf("a later deployment: %v, %d deployments", err, len(st.Deployments))
	}
}
