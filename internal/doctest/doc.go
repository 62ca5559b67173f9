// Package doctest holds no code of its own: its tests check that the
// repository's documents tell the truth. README.md's Go quick starts are
// compiled and run as written, their output compared with the text block
// that follows each (readme_test.go), and the dependency rules of
// docs/ARCHITECTURE.md are checked against `go list -deps` (deps_test.go).
//
// # Why a package of its own?
//
// The README and the architecture document describe the whole module, not
// one package; a test beside either would run a program that imports
// packages above its own (engine's tests running the host), or check
// rules about packages it does not own.
package doctest
