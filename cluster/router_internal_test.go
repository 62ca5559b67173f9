package cluster

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/client"
	"github.com/flowtrack/flowtrack/internal/testtime"
	"github.com/flowtrack/flowtrack/internal/wire"
	"github.com/flowtrack/flowtrack/server"
)

// The router works on a request as long as its requester says it waits,
// less a margin for the answer, capped; without a word, the longer of
// ForwardTimeout and forwardTTLs lease TTLs.
func TestRouter_Timeout(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header string
		ttl    time.Duration
		want   time.Duration
	}{
		{"no header, short TTL", "", 2 * time.Second, ForwardTimeout},
		{"no header, long TTL", "", 20 * time.Second, 60 * time.Second},
		{"a minute", "60000", 2 * time.Second, 59 * time.Second},
		{"five seconds", "5000", 2 * time.Second, 4500 * time.Millisecond},
		{"beyond the cap", strconv.FormatInt(int64(time.Hour/time.Millisecond), 10), 2 * time.Second, MaxForwardTimeout - time.Second},
		{"malformed", "soon", 2 * time.Second, ForwardTimeout},
		{"negative", "-5", 2 * time.Second, ForwardTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &router{n: &Node{ttl: tc.ttl}}
			m := nats.NewMsg("x")
			if tc.header != "" {
				m.Header.Set(wire.TimeoutHeader, tc.header)
			}
			assert.Equal(t, tc.want, r.timeout(m))
		})
	}
}

// TestRouter_WaitsAsLongAsItsRequester sends a deployment and a start to
// a cluster whose only partition has no owner for longer than
// ForwardTimeout (its lease is held by a node that is gone, and expires
// only after a TTL longer than that): the node that takes them waits for
// the partition as long as the client waits, and both succeed once the
// node has taken the partition over, rather than answer "no owner
// answered in time" after ForwardTimeout.
func TestRouter_WaitsAsLongAsItsRequester(t *testing.T) {
	if testing.Short() {
		t.Skip("waits longer than ForwardTimeout for a lease to expire")
	}
	ns, err := server.StartNATS(t.TempDir(), 0)
	require.NoError(t, err)
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	nc, err := nats.Connect(ns.ClientURL(), nats.ReconnectBufSize(-1))
	require.NoError(t, err)
	t.Cleanup(nc.Close)

	const name = "waits"
	ttl := ForwardTimeout + testtime.Scale(5*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), ttl+testtime.Scale(60*time.Second))
	defer cancel()
	// A node that is gone holds the partition's lease until it expires.
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	leases, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: leaseBucket(name),
		Description: "flowtrack cluster leases (package cluster)", TTL: ttl})
	require.NoError(t, err)
	_, err = leases.Create(ctx, partitionKey(1), []byte("gone"))
	require.NoError(t, err)

	n, err := Start(ctx, nc, Config{Cluster: name, Node: "a", Partitions: 1, LeaseTTL: ttl})
	require.NoError(t, err)
	t.Cleanup(func() { _ = n.Close(context.Background()) })
	require.Nil(t, n.Partition(1), "the partition is not served while the gone node's lease lasts")

	cl := client.New(nc, name)
	d, err := cl.Deploy(ctx, "keyed.bpmn", []byte(waitForM))
	require.NoError(t, err, "a deployment waits for the partition as long as its requester")
	require.Len(t, d.Processes, 1)
	assert.NotNil(t, n.Partition(1), "the node took the partition over")
	key, err := cl.Start(ctx, "keyed", map[string]any{"key": "k"})
	require.NoError(t, err)
	inst, err := cl.Instance(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, "keyed", inst.ProcessID)
}
