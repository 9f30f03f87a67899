//go:build linux || windows

package cuda

import (
	"testing"

	"github.com/churon/churon/engine/backend/internal/gputwin"
)

// twin runs the same operations on the CUDA device and on the CPU, the
// oracle every kernel is pinned to (engine/backend/internal/gputwin).
type twin = gputwin.Twin[*Device]

type (
	pair  = gputwin.Pair
	wpair = gputwin.WPair
)

func newTwin(t *testing.T, env ...string) *twin {
	t.Helper()
	return gputwin.New(t, openTest(t, env...))
}

// chk compares this device's values with the CPU's.
var chk = gputwin.Check{Name: "GPU", On: "on the GPU"}
