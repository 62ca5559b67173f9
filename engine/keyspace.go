package engine

import "github.com/flowtrack/flowtrack/engine/internal/runtime"

// Key spaces: an engine that is one partition of a cluster hands out keys
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
