package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowtrack/flowtrack/client"
	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/internal/testcert"
	"github.com/flowtrack/flowtrack/internal/wire"
	"github.com/flowtrack/flowtrack/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"
)

const secCluster = "sec"

// secured is a flowtrack server on an embedded NATS server with TLS and
// the three roles' users, from a NetConfig file.
type secured struct {
	dir    string
	url    string
	node   *nats.Conn
	reader nkeys.KeyPair
}

// password is every test user's password: name + "-secret".
func hash(t *testing.T, name string) string {
	h, err := bcrypt.GenerateFromPassword([]byte(name+"-secret"), bcrypt.MinCost)
	require.NoError(t, err)
	return string(h)
}

func newSecured(t *testing.T) *secured {
	t.Helper()
	dir := t.TempDir()
	ca, err := testcert.NewCA(dir)
	require.NoError(t, err)
	require.NoError(t, ca.Issue(dir, "server", "127.0.0.1"))
	kp, err := nkeys.CreateUser()
	require.NoError(t, err)
	pub, err := kp.PublicKey()
	require.NoError(t, err)
	conf := map[string]any{
		"listen": "127.0.0.1:0",
		"tls":    map[string]any{"cert": "server-cert.pem", "key": "server-key.pem", "ca": "ca.pem"},
		"users": []any{
			map[string]any{"name": "ops", "passwordHash": hash(t, "ops"), "role": "admin"},
			map[string]any{"name": "pay", "passwordHash": hash(t, "pay"), "role": "worker", "jobTypes": []string{"charge"}},
			map[string]any{"name": "look", "passwordHash": hash(t, "look"), "role": "reader"},
			map[string]any{"nkey": pub, "role": "reader"},
		},
	}
	data, err := json.Marshal(conf)
	require.NoError(t, err)
	file := filepath.Join(dir, "flowtrack.json")
	require.NoError(t, os.WriteFile(file, data, 0o600))
	cfg, err := server.ReadNetConfig(file)
	require.NoError(t, err)
	e, err := server.StartEmbedded(cfg, "flowtrack", filepath.Join(dir, "js"), secCluster)
	require.NoError(t, err)
	t.Cleanup(func() { e.Shutdown(); e.WaitForShutdown() })
	nc, err := e.Connect()
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	srv, err := server.New(context.Background(), nc, server.Config{Cluster: secCluster, Access: cfg.Access()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close(context.Background()) })
	return &secured{dir: dir, url: e.ClientURL(), node: nc, reader: kp}
}

// connect connects as user over TLS.
func (s *secured) connect(t *testing.T, user string, opts ...nats.Option) *nats.Conn {
	t.Helper()
	opts = append([]nats.Option{nats.RootCAs(filepath.Join(s.dir, "ca.pem")), nats.UserInfo(user, user+"-secret"), nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {})}, opts...)
	nc, err := nats.Connect(s.url, opts...)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	return nc
}

// refused publishes to subject and reports whether the NATS server
// refused it.
func refused(t *testing.T, nc *nats.Conn, subject string, data []byte) bool {
	t.Helper()
	_, err := nc.Request(subject, data, 500*time.Millisecond)
	require.Error(t, err, "a request to %s is answered", subject)
	return nc.LastError() != nil && strings.Contains(nc.LastError().Error(), `Publish to "`+subject+`"`)
}

// TestAccess_Roles: each role may do what it is given and nothing more;
// a refused call is ErrPermissionDenied whether the NATS server's subject
// permissions refused it or the server's own check; no client reaches a
// partition subject, a KV bucket or the JetStream API.
func TestAccess_Roles(t *testing.T) {
	s := newSecured(t)
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()

	// Without TLS, or without a password, nobody connects.
	_, err := nats.Connect(s.url, nats.UserInfo("ops", "ops-secret"))
	require.Error(t, err, "no TLS")
	_, err = nats.Connect(s.url, nats.RootCAs(filepath.Join(s.dir, "ca.pem")))
	require.Error(t, err, "no user")
	_, err = nats.Connect(s.url, nats.RootCAs(filepath.Join(s.dir, "ca.pem")), nats.UserInfo("ops", "wrong"))
	require.Error(t, err, "wrong password")

	admin := client.New(s.connect(t, "ops"), secCluster)
	xml, err := os.ReadFile(filepath.Join("testdata", "two-jobs.bpmn"))
	require.NoError(t, err)
	_, err = admin.Deploy(ctx, "two-jobs.bpmn", xml)
	require.NoError(t, err)
	events := make(chan engine.Event, 64)
	unsub, err := admin.Subscribe(func(ev engine.Event) { events <- ev })
	require.NoError(t, err)
	defer func() { _ = unsub() }()
	key, err := admin.Start(ctx, "order", nil)
	require.NoError(t, err)
	select {
	case <-events:
	case <-ctx.Done():
		t.Fatal("the admin receives no event")
	}

	t.Run("reader", func(t *testing.T) {
		nc := s.connect(t, "look")
		r := client.New(nc, secCluster)
		in, err := r.Instance(ctx, key)
		require.NoError(t, err)
		assert.Equal(t, "order", in.ProcessID)
		_, err = r.Jobs(ctx, engine.JobFilter{})
		require.NoError(t, err)
		unsub, err := r.Subscribe(func(engine.Event) {})
		require.NoError(t, err)
		_ = unsub()
		_, err = r.Start(ctx, "order", nil)
		require.ErrorIs(t, err, client.ErrPermissionDenied)
		err = r.Cancel(ctx, key)
		require.ErrorIs(t, err, client.ErrPermissionDenied)
		_, err = r.Call(ctx, "checkpoint", []byte(`{}`))
		require.ErrorIs(t, err, client.ErrPermissionDenied)
		err = r.HandleJobs(ctx, "charge", func(context.Context, engine.Job) (map[string]any, error) { return nil, nil }, engine.WorkerOptions{})
		require.ErrorIs(t, err, client.ErrPermissionDenied)
		internals(t, nc)
	})

	t.Run("nkey reader", func(t *testing.T) {
		pub, _ := s.reader.PublicKey()
		nc, err := nats.Connect(s.url, nats.RootCAs(filepath.Join(s.dir, "ca.pem")), nats.Nkey(pub, s.reader.Sign))
		require.NoError(t, err)
		defer nc.Close()
		r := client.New(nc, secCluster)
		_, err = r.Instance(ctx, key)
		require.NoError(t, err)
		_, err = r.Start(ctx, "order", nil)
		require.ErrorIs(t, err, client.ErrPermissionDenied)
	})

	t.Run("worker", func(t *testing.T) {
		nc := s.connect(t, "pay")
		w := client.New(nc, secCluster)
		_, err := w.Start(ctx, "order", nil)
		require.ErrorIs(t, err, client.ErrPermissionDenied)
		_, err = w.Instance(ctx, key)
		require.ErrorIs(t, err, client.ErrPermissionDenied)
		_, err = w.Subscribe(func(engine.Event) {})
		require.ErrorIs(t, err, client.ErrPermissionDenied)
		// Its own type through the job queue.
		wctx, wcancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		charged := make(chan int64, 1)
		go func() {
			done <- w.HandleJobs(wctx, "charge", func(_ context.Context, j engine.Job) (map[string]any, error) {
				charged <- j.InstanceKey
				return map[string]any{"charged": true}, nil
			}, engine.WorkerOptions{Timeout: time.Second})
		}()
		select {
		case got := <-charged:
			assert.Equal(t, key, got)
		case err := <-done:
			t.Fatalf("the worker stopped: %v", err)
		case <-ctx.Done():
			t.Fatal("the worker receives no charge job")
		}
		// The worker acked the message through the imported ack subjects:
		// the work queue holds nothing more.
		js, err := jetstream.New(s.node)
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			st, err := js.Stream(ctx, wire.JobStream(secCluster))
			return err == nil && st.CachedInfo().State.Msgs == 0
		}, bound, 20*time.Millisecond, "the charge job's message is acked")
		wcancel()
		<-done
		// Another type: its queue is refused by the NATS server, its jobs
		// by the server, which knows the job's type.
		err = w.HandleJobs(ctx, "ship", func(context.Context, engine.Job) (map[string]any, error) { return nil, nil }, engine.WorkerOptions{})
		require.ErrorIs(t, err, client.ErrPermissionDenied)
		var ship []engine.Job
		require.Eventually(t, func() bool {
			ship, err = admin.Jobs(ctx, engine.JobFilter{Type: "ship"})
			return err == nil && len(ship) == 1
		}, bound, 20*time.Millisecond)
		err = w.CompleteJob(ctx, ship[0].Key, nil)
		require.ErrorIs(t, err, client.ErrPermissionDenied)
		var we *client.Error
		require.ErrorAs(t, err, &we, "the server's own refusal")
		assert.Contains(t, we.Message, `job type "ship"`)
		_, err = w.Jobs(ctx, engine.JobFilter{Type: "ship"})
		require.ErrorIs(t, err, client.ErrPermissionDenied)
		_, err = w.ActivateJobs(ctx, "ship", "w", time.Second, 1)
		require.ErrorIs(t, err, client.ErrPermissionDenied)
		// A forged identity header is replaced by the NATS server's.
		msg := &nats.Msg{Subject: wire.OpSubject(secCluster, "complete_job"),
			Data:   []byte(fmt.Sprintf(`{"jobKey":%d}`, ship[0].Key)),
			Header: nats.Header{server.RequestInfoHeader: []string{`{"acc":"CLIENTS","user":"ops"}`}}}
		reply, err := nc.RequestMsgWithContext(ctx, msg)
		require.NoError(t, err)
		assert.Contains(t, string(reply.Data), string(wire.CodePermissionDenied))
		// What a worker may do.
		require.NoError(t, w.PublishMessage(ctx, engine.Message{Name: "nobody", CorrelationKey: "k"}))
		_, err = w.Jobs(ctx, engine.JobFilter{Type: "charge"})
		require.NoError(t, err)
		internals(t, nc)
		// The admin completes the ship job: the instance completes.
		require.NoError(t, admin.CompleteJob(ctx, ship[0].Key, nil))
		require.Eventually(t, func() bool {
			in, err := admin.Instance(ctx, key)
			return err == nil && in.State == "completed"
		}, bound, 20*time.Millisecond)
	})

	// The store survived every attempt.
	js, err := jetstream.New(s.node)
	require.NoError(t, err)
	_, err = js.Stream(ctx, "FLOWTRACK_STORE_"+secCluster)
	require.NoError(t, err, "the store stream is still there")
}

// internals: a client reaches no partition subject, no KV bucket and no
// JetStream API subject.
func internals(t *testing.T, nc *nats.Conn) {
	t.Helper()
	for _, subject := range []string{
		wire.PartitionOpSubject(secCluster, 1, "restore"),
		"$KV.flowtrack_" + secCluster + ".partitions",
		"$JS.API.STREAM.DELETE.FLOWTRACK_STORE_" + secCluster,
		"$JS.API.STREAM.LIST",
		"$JS.API.CONSUMER.CREATE.FLOWTRACK_STORE_" + secCluster + ".x",
	} {
		assert.True(t, refused(t, nc, subject, []byte(`{}`)), "%s is refused", subject)
	}
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err = js.KeyValue(ctx, "flowtrack_"+secCluster)
	assert.Error(t, err, "a KV bucket")
	err = js.DeleteStream(ctx, "FLOWTRACK_STORE_"+secCluster)
	assert.Error(t, err, "the store stream")
	assert.False(t, errors.Is(err, nil))
}
