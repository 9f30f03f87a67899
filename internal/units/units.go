// Package units formats quantities for people: one implementation for
// the CLI, the window and the download manager, so a size reads the same
// everywhere.
package units

import "fmt"

// Bytes writes a byte count in binary units ("1.5 GiB", "512 B").
func Bytes(n int64) string {
	const unit = 1024
	if n < unit && n > -unit {
		return fmt.Sprintf("%d B", n)
	}
	sign := ""
	if n < 0 {
		sign, n = "-", -n
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%s%.1f %ciB", sign, float64(n)/float64(div), "KMGTPE"[exp])
}
