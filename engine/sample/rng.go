package sample

// splitMix64 is the random stream behind every draw. It is written here
// rather than taken from math/rand (whose streams are not promised stable)
// or math/rand/v2 (stable generators, but the conversion to float64 lives in
// rand.Rand and is ours to pin only if we write it): a reproducible seed
// must give the same tokens after a Go upgrade. SplitMix64 (Steele, Lea and
// Flood 2014) passes BigCrush, is four lines, and its reference outputs
// are pinned in the tests.
type splitMix64 struct{ state uint64 }

func (r *splitMix64) next() uint64 {
	r.state += 0x9e3779b97f4a7c15
	z := r.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// float64 returns a uniform value in [0, 1) with 53 random bits.
func (r *splitMix64) float64() float64 {
	return float64(r.next()>>11) * 0x1p-53
}
