package units

import "strconv"

// Decimal widens a float32 setting to the float64 of its shortest
// decimal, so that it prints as people wrote it (0.8, where the float32
// widened as is prints 0.800000011920929); converting back gives the
// same float32.
func Decimal(v float32) float64 {
	d, err := strconv.ParseFloat(strconv.FormatFloat(float64(v), 'g', -1, 32), 64)
	if err != nil {
		return float64(v)
	}
	return d
}
