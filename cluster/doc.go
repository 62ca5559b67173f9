// Package cluster runs flowtrack as several nodes on one NATS JetStream
// system: the engine's instances are spread over a fixed number of
// partitions, each a native engine with a store of its own
// (engine/jetstore, one stream per partition, replicated), each owned by
// one node at a time through a lease, and every node answers the one wire
// contract on flowtrack.<cluster>.op.<operation>, forwarding what it takes
// to the partition that owns it.
//
// # Keys and partitions
//
// A cluster is created with P partitions, numbered 1 to P, and P never
// changes: the first node writes it once (compare-and-set) in the KV
// bucket flowtrack_<cluster>, and a node started with another P is refused
// (ErrPartitions). Partition p's engine hands out keys of p's key space
// (engine.WithKeySpace), so every instance, job, incident and process
// version key names its partition (engine.PartitionOf), as Zeebe's keys
// do.
//
// # Leases
//
// Membership and ownership are KV entries in flowtrack_<cluster>_leases, a
// bucket whose entries expire LeaseTTL after their last write:
// node.<id> (a node is live while its entry is) and partition.<p> (the
// node holding the partition). A node renews its entries every LeaseTTL/4
// with a revision compare-and-set; a node that has not renewed a
// partition's lease for LeaseTTL/2 is fenced: its store refuses every
// commit from then on (ErrFenced), and it stops serving and closes the
// partition, long before the entry can expire and another node take the
// partition. The fence is the node's own clock; JetStream closes what
// it leaves open: a node opens a partition's store with
// jetstore.Options.TakeOver, so a commit of the previous owner that the
// stream accepts only after that open (sent before the fence closed,
// delayed past it) is refused (jetstore.ErrSuperseded) rather than
// landing behind the new owner's back. Each node takes free partitions
// (no lease entry) up to its fair share, ceil(P / live nodes), from its
// first lease round on, one round after it joined, so that nodes started
// together see each other before they take any; a node above its share (a node
// joined) releases the surplus cleanly: it stops serving, closes the
// engine (its last commit) and deletes the lease. When a node dies, its
// leases expire after LeaseTTL and the others take its partitions: the
// partition's engine opens from its stream (instances resume where their
// last commit left them, overdue timers fire) and serves.
//
// # Routing
//
// Every node answers flowtrack.<cluster>.op.* in one NATS queue group and
// forwards to flowtrack.<cluster>.p.<p>.<operation>, served only by the
// partition's lease holder (package server, Config.Partition):
//
//   - an operation naming an instance, job or incident key goes to the
//     key's partition;
//   - start goes to the partition of its business key (Config.BusinessKey,
//     the start variable whose value is the correlation key of the
//     instance's messages) or, without one, round robin over partitions;
//   - publish_message goes to the partition of its correlation key,
//     hash(correlationKey) mod P (see Messages);
//   - broadcast_signal goes to every partition;
//   - jobs, activate_jobs, incidents and metrics merge the answers of every
//     partition; definitions, definition_xml, evaluate_decision and now
//     ask one partition,
//     for all hold the same deployments;
//   - deploy is validated, appended to the cluster's deployment log (the
//     stream FLOWTRACK_<cluster>_DEPLOYMENTS) and applied by every
//     partition in the log's order, so every partition holds the same
//     process versions; a partition applies what it has not yet before it
//     serves;
//   - advance, configure, checkpoint, restore and call are UNSUPPORTED.
//
// A partition without an owner at the moment (moving, or its owner dead
// and its lease not yet expired) does not answer; the forwarding node
// retries until the request's deadline, then answers CLOSED.
//
// # Messages
//
// Messages go to the partition of their correlation key (MessagePartition:
// FNV-1a of the key, mod P, plus 1), which buffers them (TTL),
// deduplicates their message ids and starts instances by message start
// events; message waits of instances on other partitions are registered
// there, as Zeebe's process message subscriptions are opened on the
// message partition:
//
//   - Partition A registers each open message wait (catch event, receive
//     task, boundary, event-based gateway arm, event sub-process start) of
//     its instances whose key belongs to partition B≠A as an entry of the
//     KV bucket flowtrack_<cluster>_msgsubs, key s.<B>.<A>.<instance>.<hash
//     of process, name and key>, and deletes it when the wait ends
//     (correlated, interrupted, cancelled, instance ended). A keeps the
//     entries equal to its engine's open waits (partitioned.MessageSubscriptions)
//     on every event that opens or closes one, so opening and closing are
//     idempotent, and a new owner of A confirms and cleans them up with one
//     pass.
//   - B watches its entries into an index by name and key, oldest first.
//     publish_message on B correlates to B's own waits first, then, for
//     each process no own wait served, to the oldest registered wait of
//     that process that takes it: B asks A (flowtrack.<cluster>.msg.<A>.correlate)
//     to correlate the message to that instance (partitioned.CorrelateMessageTo,
//     only while the wait is open); a wait that has closed meanwhile
//     answers no, and the next is asked. At most one instance per process
//     takes a message, as in Zeebe. A's yes says where the instance stands
//     once settled (state, activatable jobs), so that B answers
//     publish_message as one engine does: the instances the message was
//     correlated to (B's own, then the other partitions'), then those it
//     started.
//   - A message published with a TTL that no wait took stays buffered on B;
//     a wait registered later is offered the buffered messages its process
//     has not had (partitioned.ClaimBufferedMessage), as a wait opened on B
//     would be.
//   - B writes each correlation under way (an intent, i.<B>.<hash>) before
//     it asks A and deletes it once answered; a new owner of B asks again.
//     A answers a request it has answered yes before (same instance, same
//     message id, or B's id for a message without one) yes again, from
//     the bucket flowtrack_<cluster>_msgdone, whose entries live DoneTTL
//     and are written pending before A's engine correlates (a retry after
//     A died in between reads the instance's history): the request is
//     delivered at least once, the correlation made once.
//
// Messages an instance throws itself (intermediate message throw events)
// reach only its own partition's waits.
//
// # Timer and signal start events
//
// Every partition holds every deployment, but only partition 1 starts
// instances by timer start events and signal start events, as Zeebe
// starts timer-started instances on partition 1: one firing or one
// broadcast starts one instance. A broadcast still reaches the waiting
// instances of every partition.
//
// # Call activities
//
// A call activity's child instance runs on its parent's partition, in
// the parent's engine: no call crosses partitions.
package cluster
