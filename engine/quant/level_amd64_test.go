//go:build amd64 && !noasm

package quant

import "testing"

// runAt runs the rest of the test or benchmark at level ("avx2" or
// "avx512") and restores the level it found when tb ends; where this CPU
// lacks the level, tb is skipped.
func runAt(tb testing.TB, level string) {
	tb.Helper()
	has := map[string]bool{"avx2": hasAVX2, "avx512": hasAVX512}
	if !has[level] {
		tb.Skipf("no %s level on this CPU", level)
	}
	tb.Cleanup(setSIMDLevel(level))
}
