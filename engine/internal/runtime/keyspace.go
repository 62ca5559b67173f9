package runtime

// KeySpaceBits is how many low bits of a key count within its partition
// (engine.WithKeySpace): partition p's keys are p<<KeySpaceBits plus a
// counter, so that with at most MaxPartitions partitions every key stays
// below 2^53.
const KeySpaceBits = 43

// MaxPartitions is the highest partition a key can name: 2^(53-43)-1.
const MaxPartitions = 1<<(53-KeySpaceBits) - 1

// keyBase is the key before the first of partition p.
func keyBase(p int) int64 { return int64(p) << KeySpaceBits }

// PartitionOf returns the partition key belongs to; 0 for the keys of an
// engine without a key space.
func PartitionOf(key int64) int { return int(key >> KeySpaceBits) }
