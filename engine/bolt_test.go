//go:build !wasip1

// The engine's tests that need a store on disk: bbolt does not build for
// wasip1, where make test-wasm runs this package's other tests.

package engine_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/flowtrack/flowtrack/engine"
	"github.com/flowtrack/flowtrack/engine/boltstore"
	"github.com/flowtrack/flowtrack/engine/clock"
)

func init() {
	openBoltStore = func(t *testing.T) engine.Store {
		s, err := boltstore.Open(filepath.Join(t.TempDir(), "state.db"), &boltstore.Options{NoSync: true})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, s.Close()) }) // after the engine's Close
		return s
	}
}

// TestEngine_RestoreInstance_Durable: with a store, a restored instance is
// in the store when RestoreInstance returns, and an engine opened on the
// store again finds it where it was.
func TestEngine_RestoreInstance_Durable(t *testing.T) {
	ctx := ctxT(t)
	src := newEngine(t)
	deploy(t, src, catchProcess)
	inst := start(t, src, map[string]any{"key": "k1"})
	doc, err := src.CheckpointInstance(ctx, inst.Key())
	require.NoError(t, err)

	path := filepath.Join(t.TempDir(), "state.db")
	s, err := boltstore.Open(path, &boltstore.Options{NoSync: true})
	require.NoError(t, err)
	dst, err := engine.New(engine.WithStore(s), engine.WithClock(clock.NewVirtual(clock.Epoch)))
	require.NoError(t, err)
	moved, err := dst.RestoreInstance(ctx, doc)
	require.NoError(t, err)
	require.NoError(t, dst.Close(ctx))
	require.NoError(t, s.Close())

	s, err = boltstore.Open(path, &boltstore.Options{NoSync: true})
	require.NoError(t, err)
	defer s.Close()
	again, err := engine.New(engine.WithStore(s))
	require.NoError(t, err)
	defer again.Close(ctx)
	back, ok := again.Instance(moved.Key())
	require.True(t, ok, "the restored instance is in the store")
	require.NoError(t, again.PublishMessage(ctx, engine.Message{Name: "go", CorrelationKey: "k1"}))
	st, err := back.Wait(ctx)
	require.NoError(t, err)
	assert.Equal(t, engine.Completed, st)
}
