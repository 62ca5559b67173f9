package engine_test

import (
	"testing"

	"github.com/flowtrack/flowtrack/engine"
)

// openBoltStore opens a bolt store in t's temporary directory, closed
// after t; nil where bbolt does not build (wasip1), so the tests that
// play a scenario on a store as well play it without one there.
var openBoltStore func(t *testing.T) engine.Store
