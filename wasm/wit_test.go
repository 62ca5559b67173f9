package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/flowtrack/flowtrack/internal/dispatch"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// witFunctions returns the functions of interface name in the WIT
// document wit, in snake case as the exports name them.
func witFunctions(t *testing.T, wit, name string) []string {
	t.Helper()
	start := regexp.MustCompile(`(?m)^interface ` + name + ` \{$`).FindStringIndex(wit)
	require.NotNil(t, start, "interface %s", name)
	body := wit[start[1]:]
	end := regexp.MustCompile(`(?m)^\}$`).FindStringIndex(body)
	require.NotNil(t, end, "end of interface %s", name)
	var fns []string
	for _, m := range regexp.MustCompile(`(?m)^\s*%?([a-z][a-z0-9-]*): func\(`).FindAllStringSubmatch(body[:end[0]], -1) {
		fns = append(fns, strings.ReplaceAll(m[1], "-", "_"))
	}
	slices.Sort(fns)
	return fns
}

// wasmExports returns the //go:wasmexport names of a Go file that are
// operations, i.e. all but the memory, version and test-only exports.
func wasmExports(t *testing.T, file string) []string {
	t.Helper()
	src, err := os.ReadFile(file)
	require.NoError(t, err)
	var ops []string
	for _, m := range regexp.MustCompile(`(?m)^//go:wasmexport (\S+)$`).FindAllStringSubmatch(string(src), -1) {
		switch m[1] {
		case "alloc", "free", "abi_version", "debug_trap":
		default:
			ops = append(ops, m[1])
		}
	}
	slices.Sort(ops)
	return ops
}

// TestOperations_EverySurface checks that the operations the module
// dispatches are exactly those both builds export (ABI.md's and the
// Extism plug-in's) and those flowtrack.wit lists: JSON ones all, typed
// ones all but the generic call.
func TestOperations_EverySurface(t *testing.T) {
	ops := dispatch.Operations()
	assert.Equal(t, ops, wasmExports(t, "exports_wasip1.go"), "exports_wasip1.go")
	assert.Equal(t, ops, wasmExports(t, "exports_extism.go"), "exports_extism.go")

	wit, err := os.ReadFile("flowtrack.wit")
	require.NoError(t, err)
	assert.Equal(t, ops, witFunctions(t, string(wit), "operations"), "flowtrack.wit, interface operations")
	typed := slices.DeleteFunc(slices.Clone(ops), func(op string) bool { return op == "call" })
	assert.Equal(t, typed, witFunctions(t, string(wit), "engine"), "flowtrack.wit, interface engine")
}
