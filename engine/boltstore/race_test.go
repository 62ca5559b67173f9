//go:build race

package boltstore_test

// raceDetector is set when the tests run under the race detector, which
// makes large workloads take minutes.
const raceDetector = true
