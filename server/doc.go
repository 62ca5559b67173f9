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
//	                                JSON event (wire.AppendEvent) a message
//	flowtrack.C.jobs.<token>        the activated jobs of one type, one JSON
//	                                engine.Job a message, in the work-queue
//	                                stream FLOWTRACK_JOBS_C (Jobs)
//
// <token> is the job type with every byte other than an ASCII letter,
// digit, "_" or "-" as "%XX" (wire.JobToken). Workers pull a type's jobs
// through the durable consumer <token>, which they create with AckWait
// the activation timeout; they complete, fail or throw on the op subjects
// naming the job's activation, then ack (README.md, "Job workers in any
// language").
//
// On a network (NetConfig, flowtrack serve --config), the embedded NATS
// server has TLS for clients and routes and two accounts: the nodes', with
// JetStream, and the clients', whose users reach only the subjects of
// their role (ClientPermissions); the server checks every request again
// against the caller's role (Access) and answers PERMISSION_DENIED.
//
// A server alone owns all of a cluster's instances. With Config.Partition
// it is instead one partition of a partitioned cluster (package cluster),
// answering flowtrack.C.p.<partition>.<operation> for the node that holds
// the partition's lease.
package server
