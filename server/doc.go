// Package server is flowtrack serve: the native engine, durable in
// JetStream (engine/jetstore), serving the operations of the wire contract
// (internal/wire, wasm/ABI.md) over NATS request/reply and publishing its
// events as NATS messages. The client package speaks to it.
//
// Subjects, for a cluster name C:
//
//	flowtrack.C.op.<operation>      request: the operation's JSON request;
//	                                reply: the JSON response envelope, as
//	                                the wasm module answers it
//	flowtrack.C.events.<instance>   every event of instance <instance>, one
//	                                JSON event (Event.AppendJSON) a message
//
// A server alone owns all of a cluster's instances. With Config.Partition
// it is instead one partition of a partitioned cluster (package cluster),
// answering flowtrack.C.p.<partition>.<operation> for the node that holds
// the partition's lease.
package server
