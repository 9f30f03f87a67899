package percentile

import (
	"testing"
	"time"
)

func TestOf(t *testing.T) {
	ten := []time.Duration{10, 1, 9, 2, 8, 3, 7, 4, 6, 5} // 1 to 10, shuffled
	for _, tc := range []struct {
		ds   []time.Duration
		p    int
		want time.Duration
	}{
		{nil, 50, 0},
		{[]time.Duration{7}, 0, 7}, {[]time.Duration{7}, 99, 7},
		{ten, 0, 1}, {ten, 10, 1}, {ten, 11, 2}, {ten, 50, 5}, {ten, 51, 6},
		{ten, 95, 10}, {ten, 99, 10}, {ten, 100, 10},
	} {
		if got := Of(tc.ds, tc.p); got != tc.want {
			t.Errorf("Of(%v, %d) = %v, want %v", tc.ds, tc.p, got, tc.want)
		}
	}
	if ten[0] != 10 || ten[9] != 5 {
		t.Errorf("Of sorted its argument: %v", ten)
	}
}
