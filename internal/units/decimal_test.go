package units

import (
	"math"
	"strconv"
	"testing"
)

// TestDecimal: the settings print as written and convert back to the
// same float32, the edges of float32 included.
func TestDecimal(t *testing.T) {
	for _, c := range []struct {
		v    float32
		want string
	}{
		{0.8, "0.8"}, {1.1, "1.1"}, {0.05, "0.05"}, {0, "0"}, {-0.3, "-0.3"}, {1, "1"},
		{math.MaxFloat32, "3.4028235e+38"}, {math.SmallestNonzeroFloat32, "1e-45"},
	} {
		d := Decimal(c.v)
		if got := strconv.FormatFloat(d, 'g', -1, 64); got != c.want {
			t.Errorf("Decimal(%v) prints %s, want %s", c.v, got, c.want)
		}
		if float32(d) != c.v {
			t.Errorf("Decimal(%v) = %v: back as float32 %v", c.v, d, float32(d))
		}
	}
}
