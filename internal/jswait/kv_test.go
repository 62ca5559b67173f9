package jswait_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/internal/jswait"
	"github.com/flowtrack/flowtrack/internal/testtime"
	"github.com/flowtrack/flowtrack/server"
)

// TestKeyValue_WatchersOutliveTheCall: a watcher and a key lister made
// through KeyValue live as long as the context they were made with, not
// only as long as the call (a watcher stopped when the call returned
// once left a partition deaf to the waits registered at it).
func TestKeyValue_WatchersOutliveTheCall(t *testing.T) {
	ns, err := server.StartNATS(t.TempDir(), 0)
	require.NoError(t, err)
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	nc, err := nats.Connect(ns.ClientURL())
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), testtime.Scale(30*time.Second))
	defer cancel()
	raw, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "w"})
	require.NoError(t, err)
	kv := jswait.KeyValue(raw)
	for i := range 300 {
		_, err := kv.Put(ctx, fmt.Sprintf("k.%d", i), []byte("v"))
		require.NoError(t, err)
	}

	lister, err := kv.ListKeysFiltered(context.Background(), "k.>")
	require.NoError(t, err)
	n := 0
	for range lister.Keys() {
		n++
	}
	require.Equal(t, 300, n)

	w, err := kv.Watch(context.Background(), "new.>")
	require.NoError(t, err)
	defer func() { _ = w.Stop() }()
	require.Nil(t, <-w.Updates()) // no initial values
	time.Sleep(100 * time.Millisecond)
	_, err = kv.Put(ctx, "new.1", []byte("x"))
	require.NoError(t, err)
	select {
	case e, ok := <-w.Updates():
		require.True(t, ok, "the watch ended")
		require.Equal(t, "new.1", e.Key())
	case <-ctx.Done():
		t.Fatal("no update")
	}
}

// TestKeyValue_CreateOfATakenKey: a create whose first try finds the key
// taken is refused ("key exists"), even when the key holds the value it
// writes; only a create that tried again takes that for its own write.
func TestKeyValue_CreateOfATakenKey(t *testing.T) {
	ns, err := server.StartNATS(t.TempDir(), 0)
	require.NoError(t, err)
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	nc, err := nats.Connect(ns.ClientURL())
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), testtime.Scale(30*time.Second))
	defer cancel()
	raw, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "c"})
	require.NoError(t, err)
	kv := jswait.KeyValue(raw)
	_, err = kv.Create(ctx, "lease", []byte("n1"))
	require.NoError(t, err)
	_, err = kv.Create(ctx, "lease", []byte("n1"))
	require.ErrorIs(t, err, jetstream.ErrKeyExists)
}
