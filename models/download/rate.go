package download

import (
	"math"
	"time"
)

// rateSampler averages the transfer rate over the last few seconds, so the
// ETA neither jumps with every read nor lags behind a change of speed.
type rateSampler struct {
	t []time.Time
	n []int64
}

const rateWindow = 5 * time.Second

func (r *rateSampler) add(now time.Time, bytes int64) float64 {
	r.t = append(r.t, now)
	r.n = append(r.n, bytes)
	for len(r.t) > 2 && now.Sub(r.t[1]) >= rateWindow {
		r.t, r.n = r.t[1:], r.n[1:]
	}
	dt := now.Sub(r.t[0]).Seconds()
	if dt <= 0 {
		return 0
	}
	return float64(r.n[len(r.n)-1]-r.n[0]) / dt
}

func mathFloat(f float64) uint64 { return math.Float64bits(f) }
