package quant

import (
	"encoding/binary"
	"math"
)

// The K-quant reference quantizers, written to follow ggml's scalar
// quantize_row_q*_K_ref step for step: same searches, same float32
// operation order, same integer conversions. Products that feed an
// addition are wrapped in float32(...) so that no architecture fuses them
// (see dequant.go).

// groupMaxEps is ggml's GROUP_MAX_EPS: below it a group counts as all zero.
const groupMaxEps = float32(1e-15)

// nearestInt is ggml's nearest_int: round to nearest, ties to even, by
// adding 1.5·2²³ and reading the mantissa. Valid for |f| ≤ 4194303, as in
// ggml; other inputs give a defined but meaningless value.
func nearestInt(f float32) int {
	v := float32(f) + 12582912
	return int(math.Float32bits(v)&0x007fffff) - 0x00400000
}

func sqrt32(f float32) float32 { return float32(math.Sqrt(float64(f))) }

// makeQXQuants is ggml's make_qx_quants with rmse_type 1 and no importance
// weights (w = x²): symmetric quants L in [0, 2·nmax) and the best scale
// found among 19 candidate inverse scales.
func makeQXQuants(nmax int, x []float32, L []int8) float32 {
	L = L[:len(x)]
	max, amax := absMaxSigned(x)
	if amax < groupMaxEps {
		clear(L)
		return 0
	}
	fnmax := float32(nmax)
	iscale := -fnmax / max
	var sumlx, suml2 float32
	for i, v := range x {
		l := clampInt(nearestInt(iscale*v), -nmax, nmax-1)
		L[i] = int8(l + nmax)
		w, fl := v*v, float32(l)
		sumlx += float32(w * v * fl)
		suml2 += float32(w * fl * fl)
	}
	var scale float32
	if suml2 != 0 {
		scale = sumlx / suml2
	}
	best := scale * sumlx
	for is := -9; is <= 9; is++ {
		if is == 0 {
			continue
		}
		iscale = -(fnmax + float32(0.1*float32(is))) / max
		sumlx, suml2 = 0, 0
		for _, v := range x {
			l := clampInt(nearestInt(iscale*v), -nmax, nmax-1)
			w, fl := v*v, float32(l)
			sumlx += float32(w * v * fl)
			suml2 += float32(w * fl * fl)
		}
		if suml2 > 0 && sumlx*sumlx > best*suml2 {
			for i, v := range x {
				L[i] = int8(nmax + clampInt(nearestInt(iscale*v), -nmax, nmax-1))
			}
			scale = sumlx / suml2
			best = scale * sumlx
		}
	}
	return scale
}

// makeQ3Quants is ggml's make_q3_quants with do_rmse: symmetric quants
// refined one element at a time to maximise the weighted (w = x²) fit.
func makeQ3Quants(nmax int, x []float32, L []int8) float32 {
	L = L[:len(x)]
	max, amax := absMaxSigned(x)
	if amax < groupMaxEps {
		clear(L)
		return 0
	}
	iscale := -float32(nmax) / max
	var sumlx, suml2 float32
	for i, v := range x {
		l := clampInt(nearestInt(iscale*v), -nmax, nmax-1)
		L[i] = int8(l)
		w, fl := v*v, float32(l)
		sumlx += float32(w * v * fl)
		suml2 += float32(w * fl * fl)
	}
	for itry := 0; itry < 5; itry++ {
		changed := 0
		for i, v := range x {
			w, fl := v*v, float32(L[i])
			slx := sumlx - float32(w*v*fl)
			if slx > 0 {
				sl2 := suml2 - float32(w*fl*fl)
				nl := clampInt(nearestInt(v*sl2/slx), -nmax, nmax-1)
				if nl != int(L[i]) {
					fn := float32(nl)
					slx += float32(w * v * fn)
					sl2 += float32(w * fn * fn)
					if sl2 > 0 && slx*slx*suml2 > sumlx*sumlx*sl2 {
						L[i] = int8(nl)
						sumlx, suml2 = slx, sl2
						changed++
					}
				}
			}
		}
		if changed == 0 {
			break
		}
	}
	for i := range L {
		L[i] += int8(nmax)
	}
	if suml2 > 0 {
		return sumlx / suml2
	}
	return 0
}

// makeQKX2Quants is ggml's make_qkx2_quants: asymmetric quants L in
// [0, nmax] with a scale and a min (returned negated, as ggml's the_min),
// searched over nstep+1 candidate scales by weighted least squares.
func makeQKX2Quants(nmax int, x, weights []float32, L, Laux []uint8,
	rmin, rdelta float32, nstep int, useMAD bool) (scale, theMin float32) {
	n := len(x)
	weights, L, Laux = weights[:n], L[:n], Laux[:n]
	min, max := x[0], x[0]
	sumW := weights[0]
	sumX := float32(sumW * x[0])
	for i := 1; i < n; i++ {
		if x[i] < min {
			min = x[i]
		}
		if x[i] > max {
			max = x[i]
		}
		w := weights[i]
		sumW += w
		sumX += float32(w * x[i])
	}
	if min > 0 {
		min = 0
	}
	if max == min {
		clear(L)
		return 0, -min
	}
	fnmax := float32(nmax)
	iscale := fnmax / (max - min)
	scale = 1 / iscale
	var bestErr float32
	for i, v := range x {
		L[i] = uint8(clampInt(nearestInt(iscale*(v-min)), 0, nmax))
		diff := float32(scale*float32(L[i])) + min - v
		if useMAD {
			diff = abs32(diff)
		} else {
			diff = diff * diff
		}
		bestErr += float32(weights[i] * diff)
	}
	for is := 0; is <= nstep; is++ {
		iscale = (rmin + float32(rdelta*float32(is)) + fnmax) / (max - min)
		var sumL, sumL2, sumXL float32
		for i, v := range x {
			l := clampInt(nearestInt(iscale*(v-min)), 0, nmax)
			Laux[i] = uint8(l)
			w, fl := weights[i], float32(l)
			sumL += float32(w * fl)
			sumL2 += float32(w * fl * fl)
			sumXL += float32(w * fl * v)
		}
		D := float32(sumW*sumL2) - float32(sumL*sumL)
		if D > 0 {
			thisScale := (float32(sumW*sumXL) - float32(sumX*sumL)) / D
			thisMin := (float32(sumL2*sumX) - float32(sumL*sumXL)) / D
			if thisMin > 0 {
				thisMin = 0
				thisScale = sumXL / sumL2
			}
			var curErr float32
			for i, v := range x {
				diff := float32(thisScale*float32(Laux[i])) + thisMin - v
				if useMAD {
					diff = abs32(diff)
				} else {
					diff = diff * diff
				}
				curErr += float32(weights[i] * diff)
			}
			if curErr < bestErr {
				copy(L, Laux)
				bestErr = curErr
				scale, min = thisScale, thisMin
			}
		}
	}
	return scale, -min
}

func clampInt(v, lo, hi int) int {
	return max(lo, min(hi, v))
}

// packQ2Bits packs 256 two-bit values as Q2_K and Q3_K store them: byte l
// of each 32-byte half holds elements l, l+32, l+64, l+96 of that half.
func packQ2Bits(L []uint8, qs []byte) {
	for j := 0; j < QK_K; j += 128 {
		for l := 0; l < 32; l++ {
			qs[j/4+l] = L[j+l] | L[j+l+32]<<2 | L[j+l+64]<<4 | L[j+l+96]<<6
		}
	}
}

// Q2_K block (84 bytes): scales[16] (low nibble scale, high nibble min),
// qs[64], d, dmin.
func quantQ2_K(x []float32, b []byte) {
	x = x[:QK_K]
	var L [QK_K]uint8
	var Laux [16]uint8
	var weights [16]float32
	var mins, scales [16]float32
	const q4scale = 15
	var maxScale, maxMin float32
	for j := 0; j < 16; j++ {
		xs := x[16*j : 16*j+16]
		for l, v := range xs {
			weights[l] = abs32(v)
		}
		scales[j], mins[j] = makeQKX2Quants(3, xs, weights[:], L[16*j:16*j+16], Laux[:], -0.5, 0.1, 15, true)
		if scales[j] > maxScale {
			maxScale = scales[j]
		}
		if mins[j] > maxMin {
			maxMin = mins[j]
		}
	}
	sc := b[0:16]
	if maxScale > 0 {
		iscale := q4scale / maxScale
		for j := range sc {
			sc[j] = uint8(nearestInt(iscale * scales[j]))
		}
		putFP16(b[80:], maxScale/q4scale)
	} else {
		clear(sc)
		putFP16(b[80:], 0)
	}
	if maxMin > 0 {
		iscale := q4scale / maxMin
		for j := range sc {
			sc[j] |= uint8(nearestInt(iscale*mins[j])) << 4
		}
		putFP16(b[82:], maxMin/q4scale)
	} else {
		putFP16(b[82:], 0)
	}
	dAll, mAll := fp16(b[80:]), fp16(b[82:])
	for j := 0; j < 16; j++ {
		d := dAll * float32(sc[j]&0xf)
		if d == 0 {
			continue
		}
		dm := float32(mAll * float32(sc[j]>>4))
		for ii := 0; ii < 16; ii++ {
			L[16*j+ii] = uint8(clampInt(nearestInt((x[16*j+ii]+dm)/d), 0, 3))
		}
	}
	packQ2Bits(L[:], b[16:80])
}

// Q3_K block (110 bytes): hmask[32] (the third bit of element e is bit e/32
// of hmask[e%32]), qs[64] (the low two bits), scales[12] (16 six-bit
// scales), d.
func quantQ3_K(x []float32, b []byte) {
	x = x[:QK_K]
	var L [QK_K]int8
	var scales [16]float32
	for j := 0; j < 16; j++ {
		scales[j] = makeQ3Quants(4, x[16*j:16*j+16], L[16*j:16*j+16])
	}
	maxScale, _ := absMaxSigned(scales[:])
	hmask, qs, sc := b[0:32], b[32:96], b[96:108]
	clear(sc)
	if maxScale != 0 {
		iscale := -32 / maxScale
		for j := 0; j < 16; j++ {
			l := int8(nearestInt(iscale * scales[j]))
			l = max(-32, min(31, l)) + 32
			if j < 8 {
				sc[j] = byte(l) & 0xf
			} else {
				sc[j-8] |= (byte(l) & 0xf) << 4
			}
			l >>= 4
			sc[j%4+8] |= byte(l) << (2 * uint(j/4))
		}
		putFP16(b[108:], 1/iscale)
	} else {
		putFP16(b[108:], 0)
	}
	var s16 [16]int8
	q3KScales(sc, &s16)
	dAll := fp16(b[108:])
	for j := 0; j < 16; j++ {
		d := dAll * float32(int(s16[j])-32)
		if d == 0 {
			continue
		}
		for ii := 0; ii < 16; ii++ {
			L[16*j+ii] = int8(clampInt(nearestInt(x[16*j+ii]/d), -4, 3) + 4)
		}
	}
	clear(hmask)
	var U [QK_K]uint8
	for j := range L {
		u := uint8(L[j])
		if L[j] > 3 {
			hmask[j%32] |= 1 << uint(j/32)
			u -= 4
		}
		U[j] = u
	}
	packQ2Bits(U[:], qs)
}

// packScaleMinK4 stores the j-th 6-bit scale and min of Q4_K/Q5_K.
func packScaleMinK4(s []byte, j int, ls, lm uint8) {
	s = s[:12]
	if j < 4 {
		s[j] = ls
		s[j+4] = lm
		return
	}
	s[j+4] = ls&0xf | (lm&0xf)<<4
	s[j-4] |= (ls >> 4) << 6
	s[j] |= (lm >> 4) << 6
}

// quantKX is the shared body of Q4_K and Q5_K: eight groups of 32 with a
// 6-bit scale and min each. It fills L with values in [0, nmax] and writes
// d, dmin and the scales (at b[0:16]).
func quantKX(x []float32, b []byte, L *[QK_K]uint8, nmax int, rmin float32, nstep int) {
	var Laux [32]uint8
	var weights [32]float32
	var mins, scales [8]float32
	var maxScale, maxMin float32
	for j := 0; j < 8; j++ {
		xs := x[32*j : 32*j+32]
		var sumX2 float32
		for _, v := range xs {
			sumX2 += float32(v * v)
		}
		avX := sqrt32(sumX2 / 32)
		for l, v := range xs {
			weights[l] = avX + abs32(v)
		}
		scales[j], mins[j] = makeQKX2Quants(nmax, xs, weights[:], L[32*j:32*j+32], Laux[:], rmin, 0.1, nstep, false)
		if scales[j] > maxScale {
			maxScale = scales[j]
		}
		if mins[j] > maxMin {
			maxMin = mins[j]
		}
	}
	var invScale, invMin float32
	if maxScale > 0 {
		invScale = 63 / maxScale
	}
	if maxMin > 0 {
		invMin = 63 / maxMin
	}
	sc := b[4:16]
	for j := 0; j < 8; j++ {
		ls := min(63, uint8(nearestInt(invScale*scales[j])))
		lm := min(63, uint8(nearestInt(invMin*mins[j])))
		packScaleMinK4(sc, j, ls, lm)
	}
	putFP16(b, maxScale/63)
	putFP16(b[2:], maxMin/63)
	dAll, mAll := fp16(b), fp16(b[2:])
	for j := 0; j < 8; j++ {
		s, m := scaleMinK4(j, sc)
		d := dAll * float32(s)
		if d == 0 {
			continue
		}
		dm := float32(mAll * float32(m))
		for ii := 0; ii < 32; ii++ {
			L[32*j+ii] = uint8(clampInt(nearestInt((x[32*j+ii]+dm)/d), 0, nmax))
		}
	}
}

// Q4_K block (144 bytes): d, dmin, scales[12], qs[128].
func quantQ4_K(x []float32, b []byte) {
	x = x[:QK_K]
	var L [QK_K]uint8
	quantKX(x, b, &L, 15, -1, 20)
	qs := b[16:144]
	for j := 0; j < 4; j++ {
		for l := 0; l < 32; l++ {
			qs[32*j+l] = L[64*j+l] | L[64*j+l+32]<<4
		}
	}
}

// Q5_K block (176 bytes): d, dmin, scales[12], qh[32], qs[128].
func quantQ5_K(x []float32, b []byte) {
	x = x[:QK_K]
	var L [QK_K]uint8
	quantKX(x, b, &L, 31, -0.5, 15)
	qh, qs := b[16:48], b[48:176]
	clear(qh)
	for j := 0; j < 4; j++ {
		m1, m2 := byte(1)<<(2*j), byte(2)<<(2*j)
		for l := 0; l < 32; l++ {
			l1, l2 := L[64*j+l], L[64*j+l+32]
			if l1 > 15 {
				l1 -= 16
				qh[l] |= m1
			}
			if l2 > 15 {
				l2 -= 16
				qh[l] |= m2
			}
			qs[32*j+l] = l1 | l2<<4
		}
	}
}

// Q6_K block (210 bytes): ql[128], qh[64], scales[16] (int8), d.
func quantQ6_K(x []float32, b []byte) {
	x = x[:QK_K]
	var L [QK_K]int8
	var scales [16]float32
	for ib := 0; ib < 16; ib++ {
		scales[ib] = makeQXQuants(32, x[16*ib:16*ib+16], L[16*ib:16*ib+16])
	}
	maxScale, maxAbsScale := absMaxSigned(scales[:])
	if maxAbsScale < groupMaxEps {
		clear(b)
		return
	}
	iscale := -128 / maxScale
	putFP16(b[208:], 1/iscale)
	sc := b[192:208]
	for ib := range sc {
		sc[ib] = byte(int8(min(127, nearestInt(iscale*scales[ib]))))
	}
	dAll := fp16(b[208:])
	for j := 0; j < 16; j++ {
		d := dAll * float32(int8(sc[j]))
		if d == 0 {
			continue
		}
		for ii := 0; ii < 16; ii++ {
			L[16*j+ii] = int8(clampInt(nearestInt(x[16*j+ii]/d), -32, 31) + 32)
		}
	}
	ql, qh := b[0:128], b[128:192]
	for n := 0; n < 2; n++ {
		Ln := L[128*n : 128*n+128]
		for l := 0; l < 32; l++ {
			q1, q2, q3, q4 := byte(Ln[l]), byte(Ln[l+32]), byte(Ln[l+64]), byte(Ln[l+96])
			ql[64*n+l] = q1&0xf | (q3&0xf)<<4
			ql[64*n+l+32] = q2&0xf | (q4&0xf)<<4
			qh[32*n+l] = q1>>4 | (q2>>4)<<2 | (q3>>4)<<4 | (q4>>4)<<6
		}
	}
}

// bestIndexIQ4 returns the index of the codebook value nearest to v,
// with ggml's binary search and its tie rule (the upper value wins).
func bestIndexIQ4(v float32) int {
	val := &kvaluesIQ4NL
	if v <= float32(val[0]) {
		return 0
	}
	if v >= float32(val[15]) {
		return 15
	}
	lo, hi := 0, 15
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if v < float32(val[mid]) {
			hi = mid
		} else {
			lo = mid
		}
	}
	if v-float32(val[hi-1]) < float32(val[hi])-v {
		return hi - 1
	}
	return hi
}

// iq4Scale finds the scale of one 32-element IQ4 group as ggml's
// quantize_row_iq4_nl_impl does without importance weights (w = x²) and
// with ntry = 7: a first fit, then 15 trial inverse scales around it.
// L receives the codebook indexes of the first fit.
func iq4Scale(x []float32, L []uint8) float32 {
	x, L = x[:32], L[:32]
	max, amax := absMaxSigned(x)
	if amax < groupMaxEps {
		clear(L)
		return 0
	}
	const ntry = 7
	v0 := int(kvaluesIQ4NL[0])
	d := -max / float32(v0)
	id := 1 / d
	var sumqx, sumq2 float32
	for j, v := range x {
		l := bestIndexIQ4(id * v)
		L[j] = uint8(l)
		q, w := float32(kvaluesIQ4NL[l]), v*v
		sumqx += float32(w * q * v)
		sumq2 += float32(w * q * q)
	}
	d = 0
	if sumq2 > 0 {
		d = sumqx / sumq2
	}
	best := d * sumqx
	for itry := -ntry; itry <= ntry; itry++ {
		id = float32(itry+v0) / max
		sumqx, sumq2 = 0, 0
		for _, v := range x {
			q, w := float32(kvaluesIQ4NL[bestIndexIQ4(id*v)]), v*v
			sumqx += float32(w * q * v)
			sumq2 += float32(w * q * q)
		}
		if sumq2 > 0 && sumqx*sumqx > best*sumq2 {
			d = sumqx / sumq2
			best = d * sumqx
		}
	}
	return d
}

// packIQ4 stores 32 codebook indexes per 16 bytes: low nibbles hold
// elements 0–15, high nibbles 16–31.
func packIQ4(L []uint8, qs []byte) {
	for i := 0; i < len(L)/32; i++ {
		for j := 0; j < 16; j++ {
			qs[16*i+j] = L[32*i+j] | L[32*i+16+j]<<4
		}
	}
}

// IQ4_NL block (18 bytes): d, qs[16]. Matches ggml's quantize_iq4_nl (what
// llama-quantize runs), which searches 15 trial scales.
func quantIQ4_NL(x []float32, b []byte) {
	x = x[:32]
	var L [32]uint8
	d := iq4Scale(x, L[:])
	putFP16(b, d)
	id := inverse(d)
	for j, v := range x {
		L[j] = uint8(bestIndexIQ4(id * v))
	}
	packIQ4(L[:], b[2:18])
}

// IQ4_XS block (136 bytes): d, scales_h (uint16), scales_l[4], qs[128].
func quantIQ4_XS(x []float32, b []byte) {
	x = x[:QK_K]
	var L [QK_K]uint8
	var scales [8]float32
	for ib := 0; ib < 8; ib++ {
		scales[ib] = iq4Scale(x[32*ib:32*ib+32], L[32*ib:32*ib+32])
	}
	maxScale, _ := absMaxSigned(scales[:])
	d := -maxScale / 32
	putFP16(b, d)
	id := inverse(d)
	var scalesH uint16
	scalesL := b[4:8]
	for ib := 0; ib < 8; ib++ {
		l := clampInt(nearestInt(id*scales[ib]), -32, 31)
		idl := inverse(d * float32(l))
		for j, v := range x[32*ib : 32*ib+32] {
			L[32*ib+j] = uint8(bestIndexIQ4(idl * v))
		}
		l += 32
		if ib%2 == 0 {
			scalesL[ib/2] = byte(l & 0xf)
		} else {
			scalesL[ib/2] |= byte(l&0xf) << 4
		}
		scalesH |= uint16(l>>4) << (2 * uint(ib%8))
	}
	binary.LittleEndian.PutUint16(b[2:], scalesH)
	packIQ4(L[:], b[8:136])
}
