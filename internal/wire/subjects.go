package wire

import (
	"context"
	"strconv"
	"time"
)

// The NATS subjects of flowtrack serve (package server) and its client
// (package client), for a cluster name: the operations above are
// requested on OpSubject with the same requests and responses as through
// the wasm ABI, and the engine's events are published on EventSubject,
// one JSON event a message.

// OpSubject is the subject operation op of cluster is requested on.
func OpSubject(cluster, op string) string { return "flowtrack." + cluster + ".op." + op }

// TimeoutHeader is the header of an operation request that says how long
// its requester waits for the answer, in milliseconds (TimeoutOf). A
// cluster node works on the request that long, less a margin for the
// answer to arrive, instead of its default: a request that waits for a
// partition's takeover (its lease to expire, another node to open it)
// waits as long as its requester does, not a fixed time that a loaded
// machine's takeovers outlast. A single flowtrack serve ignores it.
const TimeoutHeader = "Flowtrack-Timeout"

// TimeoutOf is TimeoutHeader's value for a request sent under ctx: the
// time to ctx's deadline in milliseconds; false when ctx has none.
func TimeoutOf(ctx context.Context) (string, bool) {
	dl, ok := ctx.Deadline()
	if !ok {
		return "", false
	}
	return strconv.FormatInt(max(time.Until(dl).Milliseconds(), 0), 10), true
}

// ParseTimeout reads a TimeoutHeader value; false for a missing or
// malformed one.
func ParseTimeout(v string) (time.Duration, bool) {
	ms, err := strconv.ParseInt(v, 10, 64)
	if err != nil || ms < 0 {
		return 0, false
	}
	return time.Duration(ms) * time.Millisecond, true
}

// EventSubject is the subject the events of instance key of cluster are
// published on.
func EventSubject(cluster string, key int64) string {
	return "flowtrack." + cluster + ".events." + strconv.FormatInt(key, 10)
}

// AllEventsSubject matches the events of every instance of cluster.
func AllEventsSubject(cluster string) string { return "flowtrack." + cluster + ".events.*" }

// Job queues: flowtrack serve activates the jobs of every type some
// worker serves and publishes each activation, one JSON job (engine.Job)
// a message with the header Nats-Msg-Id JobMsgID, on JobSubject in the
// work-queue stream JobStream. A worker pulls them through the durable
// consumer JobConsumer of its type, whose AckWait is the activation
// timeout the server gives the type's jobs; it reports the result with
// complete_job, fail_job or throw_error naming the job key and activation,
// then acks the message.

// JobStream is the name of cluster's job work-queue stream.
func JobStream(cluster string) string { return "FLOWTRACK_JOBS_" + cluster }

// JobSubjectPrefix prefixes the subject of every job queue of cluster.
func JobSubjectPrefix(cluster string) string { return "flowtrack." + cluster + ".jobs." }

// JobSubject is the subject the activated jobs of jobType are queued on.
func JobSubject(cluster, jobType string) string { return JobSubjectPrefix(cluster) + JobToken(jobType) }

// JobAPIPrefix is the JetStream API prefix of the job queues for a
// client user of a secured server (server.NetConfig): its account has no
// JetStream of its own and reaches the consumers of JobStream only
// through these subjects, imported from the nodes' account
// (JobAPIPrefix.CONSUMER.CREATE.FLOWTRACK_JOBS_C..., .CONSUMER.INFO...,
// .CONSUMER.MSG.NEXT...).
func JobAPIPrefix(cluster string) string { return "flowtrack." + cluster + ".jsapi" }

// JobConsumer is the durable consumer workers of jobType pull through.
func JobConsumer(jobType string) string { return JobToken(jobType) }

// JobConsumerIdle is the InactiveThreshold workers give a job consumer
// whose AckWait is ackWait: twice that, at least ten minutes. Once no
// worker has pulled from it for so long, JetStream deletes the consumer
// and the server stops activating the type's jobs, which wait in the
// engine, activatable, for the next worker.
func JobConsumerIdle(ackWait time.Duration) time.Duration { return max(2*ackWait, 10*time.Minute) }

// JobMsgID is the message id of an activation, which deduplicates a
// publication repeated after a crash.
func JobMsgID(key, activation int64) string {
	return strconv.FormatInt(key, 10) + "-" + strconv.FormatInt(activation, 10)
}

// JobToken writes a job type as a subject token and consumer name: every
// byte other than an ASCII letter, digit, "_" or "-" as "%" and two
// upper-case hex digits ("io.x:1" is "io%2Ex%3A1"), so any type has one
// token and any token one type.
func JobToken(jobType string) string {
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(jobType))
	for i := 0; i < len(jobType); i++ {
		c := jobType[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' {
			b = append(b, c)
			continue
		}
		b = append(b, '%', hex[c>>4], hex[c&15])
	}
	return string(b)
}

// JobType reads a token JobToken wrote; false for one it cannot have.
func JobType(token string) (string, bool) {
	b := make([]byte, 0, len(token))
	for i := 0; i < len(token); i++ {
		c := token[i]
		if c != '%' {
			b = append(b, c)
			continue
		}
		if i+2 >= len(token) {
			return "", false
		}
		v, err := strconv.ParseUint(token[i+1:i+3], 16, 8)
		if err != nil {
			return "", false
		}
		b = append(b, byte(v))
		i += 2
	}
	if t := string(b); t != "" && JobToken(t) == token {
		return t, true
	}
	return "", false
}

// PartitionOpSubject is the subject operation op of partition p of
// cluster is served on: only by the node holding the partition's lease
// (package cluster), which clients never address themselves; they request
// OpSubject, and the node that takes the request forwards it here.
func PartitionOpSubject(cluster string, p int, op string) string {
	return "flowtrack." + cluster + ".p." + strconv.Itoa(p) + "." + op
}
