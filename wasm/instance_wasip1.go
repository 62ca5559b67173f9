package main

// mod is the engine behind every export, of either build (ABI.md's or the
// Extism plug-in's).
var mod *module

// instance returns the module's engine, created on first use rather than in
// _initialize so that a host that only asks abi_version starts nothing.
func instance() *module {
	if mod == nil {
		mod = newModule()
	}
	return mod
}
