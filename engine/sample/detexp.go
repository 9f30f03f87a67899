package sample

import "math"

// Cody–Waite split of ln2/64: expHi has its low mantissa bits clear, so
// k*expHi is exact for every k detExp can produce (|k| < 2^17).
const (
	expHi      = 6.93147180369123816490e-01 / 64
	expLo      = 1.90821492927058770002e-10 / 64
	expInvStep = 64 * 1.44269504088896338700e+00 // 64/ln2
	expMin     = -708.0                          // below this e^x is subnormal; 0 is as good for sampling
	expMax     = 709.0
	roundMagic = 0x1.8p52
)

// expTable[j] = 2^(j/64), computed once with the long Taylor series, which
// is itself deterministic.
var expTable = func() (t [64]float64) {
	for j := range t {
		t[j] = taylorExp(float64(j) * (expHi + expLo))
	}
	return t
}()

// detExp is e^x with a relative error below 1e-15, computed so that the
// result is bit-identical on every platform: math.Exp has assembly on some
// architectures and not on others, and the compiler may fuse x*y+z into an
// FMA on some targets. Each product below is wrapped in an explicit
// float64 conversion, which the Go spec says forbids fusion.
//
// x = (64q + j)·ln2/64 + r with |r| <= ln2/128, so
// e^x = 2^q · 2^(j/64) · e^r, and e^r needs only a degree-5 polynomial.
func detExp(x float64) float64 {
	switch {
	case x != x:
		return 0
	case x < expMin:
		return 0
	case x > expMax:
		return math.Inf(1)
	}
	// Round to the nearest integer by adding and subtracting 1.5·2^52,
	// which leaves no fraction bits: exact, and cheaper than math.Floor,
	// which is a function call on GOAMD64=v1.
	kf := float64(float64(x*expInvStep)+roundMagic) - roundMagic
	r := float64(x-float64(kf*expHi)) - float64(kf*expLo)
	// Truncation error r^6/6! < 4e-17.
	p := 1.0 / 120
	p = float64(p*r) + 1.0/24
	p = float64(p*r) + 1.0/6
	p = float64(p*r) + 1.0/2
	p = float64(p*r) + 1
	p = float64(p*r) + 1
	k := int64(kf)
	// q = k>>6 is in [-1022, 1023] here, so 2^q is a normal float64.
	scale := math.Float64frombits(uint64(k>>6+1023) << 52)
	return float64(p*expTable[k&63]) * scale
}

// taylorExp is e^x for |x| <= ln2 by a degree-16 Taylor series (error below
// 0.7^17/17! ≈ 1e-17); it only builds expTable.
func taylorExp(x float64) float64 {
	p := 1.0
	for n := 16; n >= 1; n-- {
		p = float64(float64(p*x)/float64(n)) + 1
	}
	return p
}
