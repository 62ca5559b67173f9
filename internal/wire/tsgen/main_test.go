package main

import (
	"os"
	"testing"
)

// TestContractUpToDate fails when sdk-js/src/contract.ts is not what
// package wire generates: run go generate ./internal/wire and commit it.
func TestContractUpToDate(t *testing.T) {
	want, err := generate()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../../sdk-js/src/contract.ts")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatal("sdk-js/src/contract.ts is stale: run go generate ./internal/wire and commit the result")
	}
}
