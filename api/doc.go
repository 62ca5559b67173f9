// Package api holds what every surface of flowtrack speaks: the records
// (Job, Token, Incident, Event, Definition, Metrics...), the event types,
// the limits, and every error sentinel, in errors.go. It imports only the
// standard library, so a program that talks to an engine (the Go host of
// the WebAssembly module, the client of a server, the wire codec) links
// these types without linking the native engine.
//
// The native engine (package engine), the Go host (package host) and the
// client of a server (package client) all take and return these types;
// engine keeps its names for them as aliases (engine.Job is api.Job), so
// code written against engine needs no change. Every record is plain
// data: a copy, changing it never changes an engine.
package api
