package quant

import (
	"os"
	"slices"
)

// cpuSetting reads CHURON_CPU, the highest kernel level the user allows
// (levels lists this architecture's from lowest to highest). An unset or
// unknown value allows the highest; known reports whether a set value
// was understood.
func cpuSetting(levels []string) (level string, known bool) {
	v := os.Getenv("CHURON_CPU")
	if slices.Contains(levels, v) {
		return v, true
	}
	return levels[len(levels)-1], v == ""
}

// CPUSetting reports the value of CHURON_CPU, which caps the kernel level
// (amd64: go, avx2, avx512 or amx; arm64: go, neon or dotprod), and
// whether it was understood: an unknown value is ignored, and callers
// should say so where they report the level.
func CPUSetting() (value string, known bool) {
	return os.Getenv("CHURON_CPU"), cpuKnown
}
