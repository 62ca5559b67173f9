package wire

import "strconv"

// The NATS subjects of flowtrack serve (package server) and its client
// (package client), for a cluster name: the operations above are
// requested on OpSubject with the same requests and responses as through
// the wasm ABI, and the engine's events are published on EventSubject,
// one JSON event a message.

// OpSubject is the subject operation op of cluster is requested on.
func OpSubject(cluster, op string) string { return "flowtrack." + cluster + ".op." + op }

// EventSubject is the subject the events of instance key of cluster are
// published on.
func EventSubject(cluster string, key int64) string {
	return "flowtrack." + cluster + ".events." + strconv.FormatInt(key, 10)
}

// AllEventsSubject matches the events of every instance of cluster.
func AllEventsSubject(cluster string) string { return "flowtrack." + cluster + ".events.*" }

// PartitionOpSubject is the subject operation op of partition p of
// cluster is served on: only by the node holding the partition's lease
// (package cluster), which clients never address themselves; they request
// OpSubject, and the node that takes the request forwards it here.
func PartitionOpSubject(cluster string, p int, op string) string {
	return "flowtrack." + cluster + ".p." + strconv.Itoa(p) + "." + op
}
