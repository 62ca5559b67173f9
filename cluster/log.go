package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// logf reports what the node does: to Config.Logf as a line
// ("cluster C node N: ..."), and to Config.Logger as a record whose
// attributes are the cluster, the node and, for a line about one
// partition ("partition %d: ..."), the partition. A line that reports an
// error is a warning; the others are at level Info.
func (n *Node) logf(format string, args ...any) {
	if n.cfg.Logf != nil {
		n.cfg.Logf("cluster %s node %s: "+format, append([]any{n.cfg.Cluster, n.cfg.Node}, args...)...)
	}
	if n.cfg.Logger == nil {
		return
	}
	level := slog.LevelInfo
	for _, a := range args {
		if _, ok := a.(error); ok {
			level = slog.LevelWarn
		}
	}
	ctx := context.Background()
	if !n.cfg.Logger.Enabled(ctx, level) {
		return
	}
	attrs := []slog.Attr{slog.String("cluster", n.cfg.Cluster), slog.String("node", n.cfg.Node)}
	if rest, ok := strings.CutPrefix(format, "partition %d: "); ok && len(args) > 0 {
		if id, isInt := args[0].(int); isInt {
			attrs = append(attrs, slog.Int("partition", id))
			format, args = rest, args[1:]
		}
	}
	n.cfg.Logger.LogAttrs(ctx, level, fmt.Sprintf(format, args...), attrs...)
}
