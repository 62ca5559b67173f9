// Package rest serves Camunda 8's Orchestration Cluster REST API (/v2)
// for flowtrack serve, so that Camunda's own clients, job workers and
// tools run against flowtrack unchanged (docs/camunda-rest.md has the
// support table).
//
// # One router for both transports
//
// A handler never calls an engine: it issues the wire operations
// (internal/wire) on the NATS subjects of its cluster through the node's
// own connection (Config.Conn), exactly as a NATS client does. On a single
// flowtrack serve the server answers them; in a cluster the nodes' routers
// forward them to the partition that owns the key, so any node's HTTP
// listener answers for the whole cluster and a node's death costs its
// HTTP clients only the requests under way.
//
// # Searches
//
// Camunda answers searches from secondary storage (Elasticsearch,
// OpenSearch or an RDBMS) fed by an exporter, eventually consistent with
// the engine. flowtrack's equivalent is a projection each listener keeps
// in memory from the cluster's event subjects (flowtrack.C.events.*):
// process and element instances, incidents and user tasks, from the
// moment the listener started. Definitions, variables and jobs are read
// from the engine through operations.
package rest
