package server_test

import (
	"testing"

	"github.com/heraldpush/herald/internal/testenv"
)

// env is a running Herald for the tests that send pushes end to end (see
// testenv.Harness), with this package's helpers as methods.
type env struct{ *testenv.Harness }

// start runs Herald for an end-to-end test (testenv.Start).
func start(t *testing.T, opts ...testenv.Options) *env { return &env{testenv.Start(t, opts...)} }

// The lines that start and end an outage.
const (
	outageStart = "database unavailable"
	outageEnd   = "database available again"
)
