// Package link is where package engine hands package partitioned the
// implementation of the cluster's operations on an engine. partitioned
// imports engine, so engine cannot import partitioned: both import this
// package instead, which imports neither.
package link

// Partitioned is set by package engine at init to the value whose methods
// implement package partitioned's functions; partitioned asserts its type.
var Partitioned any
