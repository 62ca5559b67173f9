package runtime

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestGoroutineID: the id read from the stack trace's header is known (not
// 0), the same for one goroutine, and another goroutine's differs: what
// callingObserver tells observers' goroutines apart by.
func TestGoroutineID(t *testing.T) {
	here := goroutineID()
	assert.NotZero(t, here)
	assert.Equal(t, here, goroutineID())
	var other uint64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); other = goroutineID() }()
	wg.Wait()
	assert.NotZero(t, other)
	assert.NotEqual(t, here, other)
}
