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
	return exitOK, printStatus(stdout, st)
}

// printStatus writes a cluster's status as text: durations rounded for
// reading (98ms, 1.5s), dead and late nodes marked, and what the
// replication columns mean.
func printStatus(w io.Writer, st *cluster.Status) error {
	if st.Forming {
		_, err := fmt.Fprintf(w, "cluster %s: forming (its first node is creating it; ask again in a moment)\n", st.Cluster)
		return err
	}
	live := 0
	for _, n := range st.Nodes {
		if n.State != cluster.NodeDead {
			live++
		}
	}
	fmt.Fprintf(w, "cluster %s: %d partitions, lease TTL %s, %d live nodes", st.Cluster, st.Partitions, readable(st.LeaseTTL), live)
	if dead := len(st.Nodes) - live; dead > 0 {
		fmt.Fprintf(w, ", %d dead", dead)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tSTATE\tLAST RENEWAL")
	for _, n := range st.Nodes {
		age := readable(n.LeaseAge) + " ago"
		if n.State == cluster.NodeDead && n.LeaseAge == 0 {
			age = "lease expired"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", n.Name, n.State, age)
	}
	fmt.Fprintln(tw, "\nPARTITION\tOWNER\tLAST RENEWAL\tLEADER\tCURRENT/REPLICAS\tLAG")
	for _, p := range st.Owners {
		owner, age := p.Owner, readable(p.LeaseAge)+" ago"
		switch {
		case owner == "":
			owner, age = "- (moving)", "-"
		case p.OwnerState != cluster.NodeLive:
			owner += " (" + string(p.OwnerState) + ")"
		}
		leader := p.Leader
		if leader == "" {
			leader = "- (electing)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d/%d\t%d\n", p.ID, owner, age, leader, p.Current, p.Replicas, p.Lag)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, `
Nodes renew their lease every %s: late has missed renewals (slow, cut off or dead), dead has not
renewed for a lease TTL; a dead node's partitions are taken over by the others.
LEADER is the NATS server leading the partition's stream; CURRENT counts the replicas up to date,
the leader included; LAG is how many operations the slowest replica is behind the leader (a
server restarted and catching up, or a slow disk); it should fall to 0.
`, readable(st.LeaseTTL/4))
	return err
}

// readable rounds d for reading: milliseconds below a second, tenths of
// a second below a minute, seconds beyond.
func readable(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}
