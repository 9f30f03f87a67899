//go:build amd64 && !noasm

package quant

import (
	"fmt"
	"testing"
)

// forQ6X16Variants runs f; at the avx2 level, where this CPU has
// AVX-VNNI, with that level's AVX-VNNI kernel and without it.
func forQ6X16Variants(t *testing.T, level string, f func(t *testing.T)) {
	if level != "avx2" || !q6x16VNNI {
		f(t)
		return
	}
	for _, v := range []bool{true, false} {
		t.Run(fmt.Sprintf("avxvnni=%v", v), func(t *testing.T) {
			defer func() { q6x16VNNI = true }()
			q6x16VNNI = v
			f(t)
		})
	}
}
