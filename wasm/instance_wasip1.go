package main

import (
	"fmt"

	"github.com/flowtrack/flowtrack/internal/dispatch"
	"github.com/flowtrack/flowtrack/internal/wire"
)

// abiVersion is the version documented in ABI.md.
const abiVersion = wire.ABIVersion

// maxRequest bounds a request: larger ones are rejected before decoding.
const maxRequest = wire.MaxRequest

// mod is the engine behind every export, of either build (ABI.md's or the
// Extism plug-in's).
var mod *dispatch.Module

// instance returns the module's engine, created on first use rather than in
// _initialize so that a host that only asks abi_version starts nothing.
func instance() *dispatch.Module {
	if mod == nil {
		mod = dispatch.New()
	}
	return mod
}

// badRequest is a BAD_REQUEST response for a request the exports reject
// before it reaches the dispatch.
func badRequest(format string, args ...any) wire.Response[any] {
	return wire.Response[any]{Error: &wire.Error{Code: wire.CodeBadRequest, Message: fmt.Sprintf(format, args...)}}
}
