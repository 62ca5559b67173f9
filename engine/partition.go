package engine

import "github.com/flowtrack/flowtrack/engine/internal/runtime"

// An engine that is one partition of a cluster (package cluster) hands out keys
// that name their partition, as Zeebe encodes the partition id in its
// keys, so that a key alone says which partition owns what it names and
// keys stay unique across partitions.
//
// A key of partition p (1 to MaxPartitions) is p<<KeySpaceBits plus a
// counter from 1, so every key stays below 2^53 and JavaScript clients,
// which read keys as numbers, read them exactly. An engine without a key
// space (partition 0) counts from 1, as before.
const (
	// KeySpaceBits is how many low bits of a key count within its
	// partition: 2^43 (about 8.8 trillion) keys per partition.
	KeySpaceBits = runtime.KeySpaceBits
	// MaxPartitions is the highest partition a key can name.
	MaxPartitions = runtime.MaxPartitions
)

// WithKeySpace makes the engine hand out the keys of partition (1 to
// MaxPartitions): every instance, job, activation, incident and process
// version key k has PartitionOf(k) == partition. The default, partition
// 0, is a standalone engine's key space.
//
// It is configuration, not state: the state document's lastKey already
// lies in the partition's range, and restoring a document whose lastKey
// lies outside the configured key space is refused with ErrBadState.
func WithKeySpace(partition int) Option { return func(cfg *config) { cfg.partition = partition } }

// PartitionOf returns the partition key belongs to (WithKeySpace); 0 for
// a standalone engine's keys.
func PartitionOf(key int64) int { return runtime.PartitionOf(key) }

// WithoutTimerAndSignalStarts makes the engine start no instances by
// timer start events (it schedules none) nor by signal start events (a
// broadcast still reaches the instances waiting for it). A cluster's
// partitions other than the first use it: every partition holds the same
// deployments, and as in Zeebe, instances of timer start events are
// started on partition 1 only, and so are those of signal start events,
// so that one firing or one broadcast starts one instance, not one per
// partition. Message start events are unaffected: a message reaches one
// partition. It is configuration, not state.
func WithoutTimerAndSignalStarts() Option {
	return func(cfg *config) { cfg.noTimerSignalStarts = true }
}
