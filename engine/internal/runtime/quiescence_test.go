package runtime

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestQuiescence_Halves: records waiting for observers hold wait but not
// waitWork, the engine's own work holds both, and neither half borrows
// from the other.
func TestQuiescence_Halves(t *testing.T) {
	q := newQuiescence()
	done, cancel := context.WithCancel(context.Background())
	cancel() // an ended context: a wait that would block returns its error at once

	q.addObserved(3)
	require.NoError(t, q.waitWork(done), "observers do not hold the engine's work")
	require.ErrorIs(t, q.wait(done), context.Canceled, "observers hold the whole count")

	q.add(2)
	require.ErrorIs(t, q.waitWork(done), context.Canceled)
	q.add(-2)
	require.NoError(t, q.waitWork(done))

	// A waiter blocked on the work is woken when the work ends, while
	// records still wait for observers.
	q.add(1)
	woke := make(chan error, 1)
	go func() { woke <- q.waitWork(context.Background()) }()
	q.add(-1)
	require.NoError(t, <-woke)

	all := make(chan error, 1)
	go func() { all <- q.wait(context.Background()) }()
	q.addObserved(-3)
	require.NoError(t, <-all)
	require.Zero(t, q.n.Load())
}
