package units

import "strconv"

// Params writes a model's parameter count the way model cards do
// ("1.5B", "494M", "260K"); "?" when the file does not say (0).
func Params(n int64) string {
	if n <= 0 {
		return "?"
	}
	return scaled(n, 0)
}

// ParamsPrecise is Params with one digit more ("7.24B", "292.8K"), for
// a model's own description (churon info, the bench header); 0 stays 0.
func ParamsPrecise(n int64) string { return scaled(n, 1) }

// scaled writes n in billions, millions or thousands with extra digits
// beyond a model card's (one for B, none for M and K); a smaller count
// whole.
func scaled(n int64, extra int) string {
	for _, u := range [...]struct {
		size   float64
		digits int
		suffix string
	}{{1e9, 1, "B"}, {1e6, 0, "M"}, {1e3, 0, "K"}} {
		if float64(n) >= u.size {
			return strconv.FormatFloat(float64(n)/u.size, 'f', u.digits+extra, 64) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}
