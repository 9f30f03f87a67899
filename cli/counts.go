package cli

import (
	"cmp"
	"maps"
	"slices"
)

// keysByCount returns m's keys, largest count first and equal counts in
// key order, so that summaries such as "Q4_K 96, F32 49" read the same on
// every run (a map's own order changes from run to run).
func keysByCount[K cmp.Ordered, N int | int64](m map[K]N) []K {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b K) int {
		return cmp.Or(cmp.Compare(m[b], m[a]), cmp.Compare(a, b))
	})
	return keys
}
