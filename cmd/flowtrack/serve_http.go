package main

import (
	"context"
	"fmt"
	flag "github.com/spf13/pflag"
	"net/http"
	"time"

	"github.com/flowtrack/flowtrack/cluster"
	"github.com/flowtrack/flowtrack/engine/clock"
	"github.com/flowtrack/flowtrack/server"
	"github.com/flowtrack/flowtrack/server/monitor"
	"github.com/flowtrack/flowtrack/server/rest"
	"github.com/nats-io/nats.go"
)

// httpFlags are flowtrack serve's REST API flags (--http...).
type httpFlags struct {
	addr, cert, key *string
	insecure        *bool
}

func restFlags(fs *flag.FlagSet) *httpFlags {
	return &httpFlags{
		addr:     fs.String("http", "", "serve Camunda 8's REST API (/v2) on this address (host:port)"),
		cert:     fs.String("http-tls-cert", "", "PEM certificate: the REST API speaks HTTPS"),
		key:      fs.String("http-tls-key", "", "PEM private key of --http-tls-cert"),
		insecure: fs.Bool("insecure", false, "allow listening beyond loopback without TLS and users (NATS), or without users or oauth in --config (REST API)"),
	}
}

// clock is the engine clock the REST API may pin, or nil without --http.
func (f *httpFlags) clock() *rest.Clock {
	if *f.addr == "" {
		return nil
	}
	return rest.NewClock()
}

// clusterTopology reads a cluster's live nodes and the partitions whose
// leases they hold (cluster.ReadStatus).
func clusterTopology(ctx context.Context, nc *nats.Conn, name string, replicas int) (rest.Topology, error) {
	st, err := cluster.ReadStatus(ctx, nc, name)
	if err != nil {
		return rest.Topology{}, err
	}
	t := rest.Topology{Partitions: st.Partitions, Replicas: replicas}
	index := map[string]int{}
	for _, n := range st.Nodes {
		if n.State == cluster.NodeDead {
			continue
		}
		index[n.Name] = len(t.Nodes)
		t.Nodes = append(t.Nodes, rest.TopologyNode{Name: n.Name, Partitions: []int{}})
	}
	for _, o := range st.Owners {
		if i, ok := index[o.Owner]; ok {
			t.Nodes[i].Partitions = append(t.Nodes[i].Partitions, o.ID)
		}
	}
	return t, nil
}

// engineClock is clk as the engine's clock: nil (the real clock) without
// one.
func engineClock(clk *rest.Clock) clock.Clock {
	if clk == nil {
		return nil
	}
	return clk
}

// start starts the REST listener, when --http asks for one, and prints
// its URL; the returned function stops it. With a server configuration
// (--config) that has users or an oauth section, the REST API
// authenticates its callers as those users (Basic, for users with a
// password) and by the issuer's bearer tokens, with the same roles.
func (f *httpFlags) start(nc *nats.Conn, netCfg *server.NetConfig, clusterName string, clk *rest.Clock, node string, replicas int, mon *monitor.Monitor, say announcer) (func(), error) {
	if *f.addr == "" {
		if *f.cert != "" || *f.key != "" {
			return nil, usageError{"serve: --http-tls-cert and --http-tls-key need --http"}
		}
		return func() {}, nil
	}
	cfg := rest.ListenConfig{Addr: *f.addr, TLSCert: *f.cert, TLSKey: *f.key, Insecure: *f.insecure,
		API: rest.Config{Conn: nc, Cluster: clusterName, Clock: clk, Logger: say.log.With("component", "rest")}}
	if mon != nil {
		// Prometheus metrics and health checks beside the API.
		h := mon.Handler()
		cfg.Handlers = map[string]http.Handler{}
		for _, p := range monitor.Paths {
			cfg.Handlers[p] = h
		}
	}
	if node != "" {
		cfg.API.Topology = func(ctx context.Context) (rest.Topology, error) {
			return clusterTopology(ctx, nc, clusterName, replicas)
		}
	}
	if netCfg != nil && (len(netCfg.Users) > 0 || netCfg.OAuth != nil) {
		a, err := rest.NewAuth(netCfg.Users, netCfg.OAuth)
		if err != nil {
			return nil, fmt.Errorf("--http: %w", err)
		}
		cfg.API.Auth = a
	}
	srv, err := rest.Listen(cfg)
	if err != nil {
		return nil, err
	}
	say.say(fmt.Sprintf("REST API on %s/v2", srv.URL()), "url", srv.URL()+"/v2")
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Close(ctx)
	}, nil
}
