// Package quanttest holds what the tests of the quantizing packages
// (quant, quantize) measure alike.
package quanttest

import (
	"math"
	"testing"

	"github.com/churon/churon/engine/quant"
)

// RMSError is the root-mean-square difference between x and q, x's
// quantization to typ, dequantized: how far the quants are from the
// weights they stand for.
func RMSError(tb testing.TB, typ quant.Type, q []byte, x []float32) float64 {
	tb.Helper()
	y := make([]float32, len(x))
	if err := quant.Dequantize(typ, q, y); err != nil {
		tb.Fatal(err)
	}
	var s float64
	for i := range x {
		d := float64(y[i]) - float64(x[i])
		s += d * d
	}
	return math.Sqrt(s / float64(len(x)))
}
