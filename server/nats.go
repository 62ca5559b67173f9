package server

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"github.com/flowtrack/flowtrack/api"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ErrNATSNotReady is returned by StartNATS when the embedded NATS server
// does not accept connections in time.
var ErrNATSNotReady = api.ErrNATSNotReady

// StartNATS starts the single-node NATS server flowtrack serve embeds:
// JetStream on, its state under dir, listening on 127.0.0.1 only, on port
// (0 picks a free one; read it from ClientURL). Every JetStream write is
// synced to disk before it is acknowledged (sync_always), so a store
// commit that returned survives a power loss as a boltstore one does.
// Shut it down with Shutdown and WaitForShutdown.
func StartNATS(dir string, port int) (*natsserver.Server, error) {
	if port == 0 {
		port = natsserver.RANDOM_PORT
	}
	ns, err := natsserver.NewServer(&natsserver.Options{
		ServerName: "flowtrack",
		Host:       "127.0.0.1",
		Port:       port,
		JetStream:  true,
		StoreDir:   dir,
		SyncAlways: true,
		NoSigs:     true,
		NoLog:      true,
		// The HTTP monitor, cluster routes and leaf nodes stay off.
	})
	if err != nil {
		return nil, fmt.Errorf("embedded NATS server in %s: %w", dir, err)
	}
	ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		return nil, fmt.Errorf("embedded NATS server in %s: %w", dir, ErrNATSNotReady)
	}
	return ns, nil
}

// NATSNode describes one server of an embedded NATS cluster
// (StartClusteredNATS): a name, a JetStream directory, a client port and
// a route port on 127.0.0.1, and the route URLs of the other servers
// (nats-route://127.0.0.1:PORT).
type NATSNode struct {
	Name        string
	Dir         string
	Port        int // 0 picks a free one
	ClusterPort int
	Routes      []string
}

// StartClusteredNATS starts one server of an embedded NATS cluster named
// "flowtrack": JetStream on with sync_always, as StartNATS, plus routes
// to the other servers, with which it replicates streams (JetStream's own
// Raft). JetStream serves once a majority of the servers run; use
// WaitForJetStream on a connection.
func StartClusteredNATS(node NATSNode) (*natsserver.Server, error) {
	port := node.Port
	if port == 0 {
		port = natsserver.RANDOM_PORT
	}
	var routes []*url.URL
	for _, r := range node.Routes {
		u, err := url.Parse(r)
		if err != nil {
			return nil, fmt.Errorf("embedded NATS server %s: route %q: %w", node.Name, r, err)
		}
		routes = append(routes, u)
	}
	ns, err := natsserver.NewServer(&natsserver.Options{
		ServerName: node.Name,
		Host:       "127.0.0.1",
		Port:       port,
		JetStream:  true,
		StoreDir:   node.Dir,
		SyncAlways: true,
		NoSigs:     true,
		NoLog:      true,
		Cluster:    natsserver.ClusterOpts{Name: "flowtrack", Host: "127.0.0.1", Port: node.ClusterPort},
		Routes:     routes,
	})
	if err != nil {
		return nil, fmt.Errorf("embedded NATS server %s in %s: %w", node.Name, node.Dir, err)
	}
	ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		return nil, fmt.Errorf("embedded NATS server %s in %s: %w", node.Name, node.Dir, ErrNATSNotReady)
	}
	return ns, nil
}

// WaitForJetStream waits until JetStream answers on nc (a clustered
// JetStream has elected its meta leader), or ctx ends. It does not wait
// for the servers a replicated stream needs: a client's account cannot
// list JetStream's peers, so jetstore.Open and cluster.Start, which know
// the replicas they ask for, wait for placement themselves (package
// jswait: "no suitable peers for placement" is a state they wait out).
func WaitForJetStream(ctx context.Context, nc *nats.Conn) error {
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	for {
		actx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := js.AccountInfo(actx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("JetStream did not become ready: %w (last: %v)", ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
