//go:build amd64 && !noasm

package quant

import (
	"fmt"
	"testing"
)

// forQ4X16Variants runs f once per Q4_0/Q8_0 interleave kernel at level.
func forQ4X16Variants(t *testing.T, level string, f func(t *testing.T)) {
	forVNNIVariants(t, level, &q4x16VNNI, f)
}

// forQ6X16Variants runs f once per Q6_K interleave kernel at level.
func forQ6X16Variants(t *testing.T, level string, f func(t *testing.T)) {
	forVNNIVariants(t, level, &q6x16VNNI, f)
}

// forVNNIVariants runs f; at the avx2 level, where this CPU has AVX-VNNI
// (*vnni set), with that level's AVX-VNNI kernel and without it.
func forVNNIVariants(t *testing.T, level string, vnni *bool, f func(t *testing.T)) {
	if level != "avx2" || !*vnni {
		f(t)
		return
	}
	for _, v := range []bool{true, false} {
		t.Run(fmt.Sprintf("avxvnni=%v", v), func(t *testing.T) {
			defer func() { *vnni = true }()
			*vnni = v
			f(t)
		})
	}
}
