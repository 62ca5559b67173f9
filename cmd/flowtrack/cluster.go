package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	flag "github.com/spf13/pflag"

	"github.com/flowtrack/flowtrack/cluster"
	"github.com/nats-io/nats.go"
)

const clusterUsage = `usage: flowtrack cluster status [--nats URL[,URL...]] [--cluster NAME] [--json]

Prints a cluster's status as JetStream holds it (no node needs to run): its
partition count and lease TTL, the live nodes with the age of their last
lease renewal, and per partition its owner, the owner's lease age, the NATS
server leading its stream, the replicas that are current and the commit
lag (the most operations a replica is behind). --json prints one object.
`

// clusterCmd runs flowtrack cluster SUBCOMMAND.
func clusterCmd(ctx context.Context, args []string, stdout io.Writer) (int, error) {
	if len(args) == 0 || args[0] != "status" {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
			return exitOK, helpError{clusterUsage}
		}
		return exitUsage, usageError{"cluster: the only subcommand is status"}
	}
	fs := flag.NewFlagSet("cluster status", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	natsURL := fs.String("nats", nats.DefaultURL, "URLs of the cluster's NATS system, comma-separated")
	name := fs.String("cluster", "default", "cluster name")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, helpError{clusterUsage}
		}
		return exitUsage, usageError{"cluster status: " + err.Error()}
	}
	if fs.NArg() > 0 {
		return exitUsage, usageError{fmt.Sprintf("cluster status: unexpected argument %q", fs.Arg(0))}
	}
	nc, err := nats.Connect(*natsURL, nats.Name("flowtrack cluster status"))
	if err != nil {
		return exitUsage, fmt.Errorf("cluster status: connect to %s: %w", *natsURL, err)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	st, err := cluster.ReadStatus(ctx, nc, *name)
	if err != nil {
		return exitProcess, fmt.Errorf("cluster status: %w", err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return exitOK, enc.Encode(st)
	}
	fmt.Fprintf(stdout, "cluster %s: %d partitions, lease TTL %s, %d live nodes\n", st.Cluster, st.Partitions, st.LeaseTTL, len(st.Nodes))
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tLEASE AGE")
	for _, n := range st.Nodes {
		fmt.Fprintf(tw, "%s\t%s\n", n.Name, n.LeaseAge.Round(time.Millisecond))
	}
	fmt.Fprintln(tw, "\nPARTITION\tOWNER\tLEASE AGE\tLEADER\tCURRENT/REPLICAS\tLAG")
	for _, p := range st.Owners {
		owner, age := p.Owner, p.LeaseAge.Round(time.Millisecond).String()
		if owner == "" {
			owner, age = "-", "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d/%d\t%d\n", p.ID, owner, age, p.Leader, p.Current, p.Replicas, p.Lag)
	}
	return exitOK, tw.Flush()
}
