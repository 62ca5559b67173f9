package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/flowtrack/flowtrack/server"
	"github.com/nats-io/nats.go"
)

const serveUsage = `usage: flowtrack serve [--data DIR | --nats URL] [--port N] [--cluster NAME] [--replicas N]

Runs the native engine as a long-running server: the operations of the wasm
ABI (wasm/ABI.md) on NATS subjects flowtrack.NAME.op.OPERATION (request:
the operation's JSON request; reply: the JSON response envelope) and every
event on flowtrack.NAME.events.INSTANCEKEY. Its state is kept in JetStream,
so a restarted server goes on where it stopped. By default it embeds a
single-node NATS server with JetStream in --data, listening on 127.0.0.1;
with --nats it connects to an existing NATS system instead. It stops on
SIGINT or SIGTERM.
`

// serveCmd runs flowtrack serve until ctx is done or a signal arrives. It
// prints the NATS URL it serves on, one line, once it serves.
func serveCmd(ctx context.Context, args []string, stdout io.Writer) (int, error) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	data := fs.String("data", "flowtrack-data", "directory of the embedded NATS server's JetStream state")
	natsURL := fs.String("nats", "", "URL of an existing NATS system with JetStream (no embedded server)")
	port := fs.Int("port", 4222, "port of the embedded NATS server on 127.0.0.1 (0 picks a free one)")
	cluster := fs.String("cluster", "default", "cluster name: subjects flowtrack.NAME.* and store FLOWTRACK_STORE_NAME")
	replicas := fs.Int("replicas", 1, "replicas of the store's stream (3 in a NATS cluster)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, helpError{serveUsage}
		}
		return exitUsage, usageError{"serve: " + err.Error()}
	}
	if fs.NArg() > 0 {
		return exitUsage, usageError{fmt.Sprintf("serve: unexpected argument %q", fs.Arg(0))}
	}
	if *port < 0 || *port > 65535 {
		return exitUsage, usageError{fmt.Sprintf("serve: --port %d is not a port", *port)}
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	url := *natsURL
	if url == "" {
		if err := os.MkdirAll(*data, 0o700); err != nil {
			return exitUsage, fmt.Errorf("serve: --data %s: %w", *data, err)
		}
		ns, err := server.StartNATS(*data, *port)
		if err != nil {
			return exitUsage, fmt.Errorf("serve: %w", err)
		}
		defer func() { ns.Shutdown(); ns.WaitForShutdown() }()
		url = ns.ClientURL()
	}
	nc, err := nats.Connect(url, nats.Name("flowtrack serve"))
	if err != nil {
		return exitUsage, fmt.Errorf("serve: connect to %s: %w", url, err)
	}
	defer nc.Close()
	srv, err := server.New(ctx, nc, server.Config{Cluster: *cluster, Replicas: *replicas})
	if err != nil {
		return exitUsage, fmt.Errorf("serve: %w", err)
	}
	fmt.Fprintf(stdout, "flowtrack: serving cluster %s on %s\n", *cluster, url)
	<-ctx.Done()
	closeCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Close(closeCtx); err != nil {
		return exitProcess, fmt.Errorf("serve: %w", err)
	}
	if err := nc.Drain(); err != nil {
		return exitProcess, fmt.Errorf("serve: %w", err)
	}
	return exitOK, nil
}
