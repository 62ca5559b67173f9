package cluster_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flowtrack/flowtrack/client"
	"github.com/flowtrack/flowtrack/cluster"
	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/internal/testtime"
	"github.com/flowtrack/flowtrack/internal/wire"
	"github.com/flowtrack/flowtrack/server"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"
)

// TestCluster_Access: a cluster node checks roles at its router and again
// at the partition, which alone knows a job's type (the router passes the
// caller's identity on); clients reach no partition subject, bucket or
// JetStream API subject of the cluster.
func TestCluster_Access(t *testing.T) {
	dir := t.TempDir()
	users := []any{}
	for _, u := range []struct {
		name, role string
		types      []string
	}{{"ops", "admin", nil}, {"payer", "worker", []string{"pay"}}, {"look", "reader", nil}} {
		h, err := bcrypt.GenerateFromPassword([]byte(u.name+"-secret"), bcrypt.MinCost)
		require.NoError(t, err)
		users = append(users, map[string]any{"name": u.name, "passwordHash": string(h), "role": u.role, "jobTypes": u.types})
	}
	conf, err := json.Marshal(map[string]any{"listen": "127.0.0.1:0", "users": users})
	require.NoError(t, err)
	file := filepath.Join(dir, "flowtrack.json")
	require.NoError(t, os.WriteFile(file, conf, 0o600))
	cfg, err := server.ReadNetConfig(file)
	require.NoError(t, err)
	const name = "acl"
	e, err := server.StartEmbedded(cfg, "n1", filepath.Join(dir, "js"), name)
	require.NoError(t, err)
	t.Cleanup(func() { e.Shutdown(); e.WaitForShutdown() })
	nc, err := e.Connect(nats.ReconnectBufSize(-1))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	ctx, cancel := context.WithTimeout(context.Background(), testtime.Scale(60*time.Second))
	defer cancel()
	n, err := cluster.Start(ctx, nc, cluster.Config{Cluster: name, Node: "n1", Partitions: 2, Access: cfg.Access(),
		LeaseTTL: testtime.Scale(2 * time.Second)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = n.Close(context.Background()) })
	connect := func(user string) *nats.Conn {
		c, err := nats.Connect(e.ClientURL(), nats.UserInfo(user, user+"-secret"), nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
		require.NoError(t, err)
		t.Cleanup(c.Close)
		return c
	}
	admin := client.New(connect("ops"), name)
	require.Eventually(t, func() bool {
		_, err = admin.Deploy(ctx, "order.bpmn", orderBPMN)
		return err == nil
	}, testtime.Scale(30*time.Second), 50*time.Millisecond, "deploy: %v", err)
	// Instances on both partitions, each waiting at its pack job.
	for range 2 {
		_, err = admin.Start(ctx, "shipping", nil)
		require.NoError(t, err)
	}
	var packs []engine.Job
	require.Eventually(t, func() bool {
		packs, err = admin.Jobs(ctx, engine.JobFilter{Type: "pack"})
		return err == nil && len(packs) == 2
	}, testtime.Scale(30*time.Second), 20*time.Millisecond)

	wc := connect("payer")
	worker := client.New(wc, name)
	for _, j := range packs {
		err := worker.CompleteJob(ctx, j.Key, nil)
		require.ErrorIs(t, err, client.ErrPermissionDenied, "the partition knows the job's type")
		assert.Contains(t, err.Error(), `job type "pack"`)
	}
	_, err = worker.Jobs(ctx, engine.JobFilter{})
	require.ErrorIs(t, err, client.ErrPermissionDenied, "the router: a worker names its type")
	_, err = worker.ActivateJobs(ctx, "pack", "w", time.Second, 1)
	require.ErrorIs(t, err, client.ErrPermissionDenied)
	_, err = worker.Jobs(ctx, engine.JobFilter{Type: "pay"})
	require.NoError(t, err)

	rc := connect("look")
	reader := client.New(rc, name)
	_, err = reader.Jobs(ctx, engine.JobFilter{})
	require.NoError(t, err)
	_, err = reader.Start(ctx, "shipping", nil)
	require.ErrorIs(t, err, client.ErrPermissionDenied)
	for _, c := range []*nats.Conn{wc, rc} {
		for _, subject := range []string{
			wire.PartitionOpSubject(name, 1, "cancel"),
			"flowtrack." + name + ".msg.1.publish",
			"flowtrack." + name + ".sync.1",
			"$KV.flowtrack_" + name + "_leases.partition.1",
			"$JS.API.STREAM.DELETE.FLOWTRACK_STORE_" + name + "_p1",
		} {
			_, err := c.Request(subject, []byte(`{}`), 300*time.Millisecond)
			require.Error(t, err)
			assert.True(t, strings.Contains(c.LastError().Error(), `Publish to "`+subject+`"`), "%s: %v", subject, c.LastError())
		}
	}
	// Nothing moved: the admin completes the jobs.
	for _, j := range packs {
		require.NoError(t, admin.CompleteJob(ctx, j.Key, nil))
	}
}
