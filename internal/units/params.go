package units

import "fmt"

// Params writes a model's parameter count the way model cards do
// ("1.5B", "494M", "260K"); "?" when the file does not say (0).
func Params(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1fB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.0fM", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.0fK", float64(n)/1e3)
	case n > 0:
		return fmt.Sprintf("%d", n)
	}
	return "?"
}
