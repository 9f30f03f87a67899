// Package percentile is the one definition of a percentile that the
// measuring tools (tools/scale, tools/serveload) report, so that their
// figures are comparable.
package percentile

import (
	"slices"
	"time"
)

// Of is the p-th percentile of ds by nearest rank: the smallest of them
// with at least p percent of ds at or below it (p from 0 to 100; 0 for no
// durations). ds is left as it is.
func Of(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := (len(s)*p + 99) / 100 // ⌈len·p/100⌉, 1-based
	return s[min(max(rank-1, 0), len(s)-1)]
}
