package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/flowtrack/flowtrack/cluster"
	"github.com/flowtrack/flowtrack/internal/tracing"
	"github.com/flowtrack/flowtrack/internal/wire"
	"github.com/flowtrack/flowtrack/server"
	"github.com/flowtrack/flowtrack/server/monitor"
	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

const serveUsage = `usage: flowtrack serve [--data DIR | --nats URL[,URL...]] [--config FILE | --port N] [--cluster NAME] [--replicas N]
                       [--node ID --partitions P [--routes URL,URL... --route-port N] [--lease-ttl D] [--business-key VAR]]
                       [--http ADDR [--http-tls-cert FILE --http-tls-key FILE] [--insecure]]
                       [--log-format text|json] [--log-level debug|info|warn|error]

Runs the native engine as a long-running server: the operations of the wasm
ABI (wasm/ABI.md) on NATS subjects flowtrack.NAME.op.OPERATION (request:
the operation's JSON request; reply: the JSON response envelope) and every
event on flowtrack.NAME.events.INSTANCEKEY. Its state is kept in JetStream,
so a restarted server goes on where it stopped. By default it embeds a
single-node NATS server with JetStream in --data, listening on 127.0.0.1;
with --nats it connects to an existing NATS system instead. It stops on
SIGINT or SIGTERM.

With --node it is one node of a cluster (docs/cluster.md): the cluster's
instances are spread over P partitions (fixed when the cluster is created),
each owned by one node through a lease in JetStream and taken over by
another when its node dies; every node answers the same subjects. With
--routes, the embedded NATS server (named after the node, client port
--port, route port --route-port on 127.0.0.1) joins the others' as one NATS
cluster whose streams are replicated --replicas times.

With --config FILE (docs/server.md, "Putting a server on a network") the
embedded NATS server takes its addresses (client, cluster routes,
advertised), TLS for clients and routes, and its users with their roles
(admin, worker, reader) from the JSON file; secrets are never flags. A
server that would listen beyond loopback without TLS and users refuses to
start unless --insecure.

With --http it also serves Camunda 8's REST API (/v2/..., docs/camunda-rest.md)
on ADDR, so Camunda's clients and job workers run against it; in a cluster
every node's listener answers for the whole cluster. It authenticates its
callers as the --config file's users (Basic, users with a password hash)
and by the bearer tokens of its "oauth" issuer, with the same roles; a
worker's job types bound the jobs it activates and completes. Without
users or oauth it listens on loopback only, unless --insecure.
Beside the API it serves Prometheus metrics at /metrics and
the health checks /healthz and /readyz (docs/observability.md).

It logs with log/slog on standard output, as key=value lines (--log-format
text, the default) or one JSON object a line (json): the cluster's leases
and partitions, incidents, failed requests, and at --log-level debug every
engine event, each with the node, partition, process, instance and job
keys that apply. In json format the start-up lines are JSON records too.

Traces (OpenTelemetry, a span per command, W3C trace context through NATS
headers and the REST API's traceparent) are exported by OTLP over HTTP when
OTEL_TRACES_EXPORTER=otlp or OTEL_EXPORTER_OTLP_ENDPOINT says so.
`

// serveCmd runs flowtrack serve until ctx is done or a signal arrives. It
// prints the NATS URL it serves on, one line, once it serves.
func serveCmd(ctx context.Context, args []string, stdout io.Writer) (int, error) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	data := fs.String("data", "flowtrack-data", "directory of the embedded NATS server's JetStream state")
	natsURL := fs.String("nats", "", "URLs of an existing NATS system with JetStream, comma-separated (no embedded server)")
	port := fs.Int("port", 4222, "port of the embedded NATS server on 127.0.0.1 (0 picks a free one)")
	clusterName := fs.String("cluster", "default", "cluster name: subjects flowtrack.NAME.* and store FLOWTRACK_STORE_NAME")
	replicas := fs.Int("replicas", 1, "replicas of the store's streams (3 in a NATS cluster)")
	node := fs.String("node", "", "this node's name, unique in the cluster: serve as one node of a partitioned cluster")
	partitions := fs.Int("partitions", 0, "the cluster's partition count (with --node; 0 reads an existing cluster's)")
	routes := fs.String("routes", "", "route URLs of the other embedded NATS servers, comma-separated (nats-route://127.0.0.1:PORT)")
	routePort := fs.Int("route-port", 6222, "route port of the embedded NATS server on 127.0.0.1 (with --routes)")
	leaseTTL := durationFlag(fs, "lease-ttl", cluster.DefaultLeaseTTL, "lease TTL of a cluster created by this node (with --node)")
	businessKey := fs.String("business-key", "", "start variable whose value places an instance on its messages' partition (with --node)")
	configFile := fs.String("config", "", "JSON server configuration: addresses, TLS, users and roles (docs/server.md)")
	httpFlags := restFlags(fs)
	logging := serveLogFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, helpError{serveUsage}
		}
		return exitUsage, usageError{"serve: " + err.Error()}
	}
	switch {
	case fs.NArg() > 0:
		return exitUsage, usageError{fmt.Sprintf("serve: unexpected argument %q", fs.Arg(0))}
	case *port < 0 || *port > 65535:
		return exitUsage, usageError{fmt.Sprintf("serve: --port %d is not a port", *port)}
	case *node == "" && (*partitions != 0 || *routes != "" || *businessKey != ""):
		return exitUsage, usageError{"serve: --partitions, --routes and --business-key need --node"}
	case *routes != "" && *natsURL != "":
		return exitUsage, usageError{"serve: --routes configures the embedded NATS server; --nats connects to another"}
	case *configFile != "" && (*natsURL != "" || fs.Changed("port") || *routes != "" || fs.Changed("route-port")):
		return exitUsage, usageError{"serve: --config sets the embedded NATS server's addresses and routes: without --nats, --port, --routes and --route-port"}
	}
	if *routes != "" && !*httpFlags.insecure {
		for _, r := range strings.Split(*routes, ",") {
			if u, err := url.Parse(r); err != nil || !loopbackHost(u.Hostname()) {
				return exitUsage, fmt.Errorf("serve: --routes %s: %w; routes to other machines are configured with --config (TLS on routes)", r, server.ErrInsecure)
			}
		}
	}
	var netCfg *server.NetConfig
	if *configFile != "" {
		var err error
		if netCfg, err = server.ReadNetConfig(*configFile); err != nil {
			return exitUsage, fmt.Errorf("serve: %w", err)
		}
		if err := netCfg.CheckExposure(*httpFlags.insecure); err != nil {
			return exitUsage, fmt.Errorf("serve: %w", err)
		}
		if *httpFlags.addr == "" {
			*httpFlags.addr = netCfg.HTTP
		}
	}
	logger, err := logging.logger(stdout)
	if err != nil {
		return exitUsage, err
	}
	say := announcer{w: stdout, json: *logging.format == "json", log: logger}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Traces go to an OTLP collector when the OTEL_* environment says so
	// (docs/observability.md); otherwise tracing stays off.
	stopTracing, err := tracing.FromEnv(ctx)
	if err != nil {
		return exitUsage, fmt.Errorf("serve: %w", err)
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := stopTracing(sctx); err != nil {
			logger.Warn("flush the traces", "err", err)
		}
	}()

	// Nothing is buffered while reconnecting: a cluster node's commit
	// must not reach its stream after the node was fenced off it.
	connOpts := []nats.Option{nats.Name("flowtrack serve"), nats.MaxReconnects(-1), nats.ReconnectBufSize(-1)}
	url := *natsURL
	var nc *nats.Conn
	var embedded *natsserver.Server
	switch {
	case netCfg != nil:
		if err := os.MkdirAll(*data, 0o700); err != nil {
			return exitUsage, fmt.Errorf("serve: --data %s: %w", *data, err)
		}
		name := *node
		if name == "" {
			name = "flowtrack"
		}
		e, err := server.StartEmbedded(netCfg, name, *data, *clusterName)
		if err != nil {
			return exitUsage, fmt.Errorf("serve: %w", err)
		}
		defer func() { e.Shutdown(); e.WaitForShutdown() }()
		url = e.ClientURL()
		embedded = e.Server
		if nc, err = e.Connect(connOpts...); err != nil {
			return exitUsage, fmt.Errorf("serve: %w", err)
		}
	default:
		if url == "" {
			if err := os.MkdirAll(*data, 0o700); err != nil {
				return exitUsage, fmt.Errorf("serve: --data %s: %w", *data, err)
			}
			ns, err := startEmbedded(*data, *port, *node, *routePort, *routes)
			if err != nil {
				return exitUsage, fmt.Errorf("serve: %w", err)
			}
			defer func() { ns.Shutdown(); ns.WaitForShutdown() }()
			url = ns.ClientURL()
			embedded = ns
		}
		var err error
		if nc, err = nats.Connect(url, connOpts...); err != nil {
			return exitUsage, fmt.Errorf("serve: connect to %s: %w", url, err)
		}
	}
	defer nc.Close()
	access := netCfg.Access()
	// The metrics and health checks, which --http serves: without it
	// nothing reads them, and nothing is counted.
	var mon *monitor.Monitor
	if *httpFlags.addr != "" {
		mon = monitor.New()
		mon.SetNATS(nc, embedded)
	}
	var closer func(context.Context) error
	clk := httpFlags.clock()
	if *node == "" {
		// Answers that could not be sent and job queue trouble (JetStream
		// not answering yet, retried in the background) go to the log.
		srv, err := server.New(ctx, nc, server.Config{Cluster: *clusterName, Replicas: *replicas, Clock: engineClock(clk), Access: access,
			OnError: func(err error) { logger.Error(err.Error()) }, Monitor: mon, Logger: logger})
		if err != nil {
			return exitUsage, fmt.Errorf("serve: %w", err)
		}
		closer = srv.Close
		say.say(fmt.Sprintf("serving cluster %s on %s", *clusterName, url), "cluster", *clusterName, "url", url)
	} else {
		// A clustered JetStream serves once a majority of its servers
		// run: the first node started waits for the others.
		wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		err := server.WaitForJetStream(wctx, nc)
		cancel()
		if err != nil {
			return exitUsage, fmt.Errorf("serve: %w", err)
		}
		n, err := cluster.Start(ctx, nc, cluster.Config{Cluster: *clusterName, Node: *node, Partitions: *partitions,
			Replicas: *replicas, LeaseTTL: *leaseTTL, BusinessKey: *businessKey, Access: access, Monitor: mon, Logger: logger})
		if err != nil {
			return exitUsage, fmt.Errorf("serve: %w", err)
		}
		closer = n.Close
		say.say(fmt.Sprintf("node %s of cluster %s (%d partitions) serving on %s", *node, *clusterName, n.Partitions(), url),
			"cluster", *clusterName, "node", *node, "partitions", n.Partitions(), "url", url)
		defer reportJobLeader(ctx, nc, *clusterName, stdout)()
		clk = nil // each partition keeps its own clock
	}
	stopHTTP, err := httpFlags.start(nc, netCfg, *clusterName, clk, *node, *replicas, mon, say)
	if err != nil {
		_ = closer(context.Background())
		return exitUsage, fmt.Errorf("serve: %w", err)
	}
	defer stopHTTP()
	<-ctx.Done()
	closeCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := closer(closeCtx); err != nil {
		return exitProcess, fmt.Errorf("serve: %w", err)
	}
	if err := nc.Drain(); err != nil {
		return exitProcess, fmt.Errorf("serve: %w", err)
	}
	return exitOK, nil
}

// startEmbedded starts the embedded NATS server: single-node, or with
// routes one server of a NATS cluster named after the node.
func startEmbedded(dir string, port int, node string, routePort int, routes string) (*natsserver.Server, error) {
	if routes == "" {
		return server.StartNATS(dir, port)
	}
	return server.StartClusteredNATS(server.NATSNode{Name: node, Dir: dir, Port: port, ClusterPort: routePort,
		Routes: strings.Split(routes, ",")})
}

// reportJobLeader prints which NATS server leads the cluster's job
// work-queue stream once it has one, and again whenever JetStream elects
// another (its stream leader advisory): the server whose loss pauses job
// delivery until the next election. The returned function stops it.
func reportJobLeader(ctx context.Context, nc *nats.Conn, clusterName string, out io.Writer) func() {
	stream := wire.JobStream(clusterName)
	sub, err := nc.Subscribe("$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED."+stream, func(m *nats.Msg) {
		var adv struct {
			Leader string `json:"leader"`
		}
		if json.Unmarshal(m.Data, &adv) == nil && adv.Leader != "" {
			fmt.Fprintf(out, "flowtrack: job stream %s leader: %s\n", stream, adv.Leader)
		}
	})
	if err != nil {
		fmt.Fprintf(out, "flowtrack: job stream leader advisories: %v\n", err)
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		js, err := jetstream.New(nc)
		if err != nil {
			return
		}
		for ctx.Err() == nil {
			ictx, icancel := context.WithTimeout(ctx, time.Second)
			st, err := js.Stream(ictx, stream)
			icancel()
			if err == nil && st.CachedInfo().Cluster != nil && st.CachedInfo().Cluster.Leader != "" {
				fmt.Fprintf(out, "flowtrack: job stream %s leader: %s\n", stream, st.CachedInfo().Cluster.Leader)
				return
			}
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
	return func() { cancel(); _ = sub.Unsubscribe() }
}

// loopbackHost reports whether host names this machine only.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
