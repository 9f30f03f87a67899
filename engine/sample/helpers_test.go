package sample

import (
	"math"
	"slices"
	"sort"
	"testing"
)

// testLogits returns n logits spread like a model's, from a seeded
// SplitMix64 and arithmetic only (an Irwin–Hall sum of four uniforms), so
// that they are bit-identical on every platform.
func testLogits(seed uint64, n int, scale float64) []float32 {
	r := splitMix64{state: seed}
	out := make([]float32, n)
	for i := range out {
		v := r.float64() + r.float64() + r.float64() + r.float64() - 2
		out[i] = float32(v * scale)
	}
	return out
}

func mustNew(t testing.TB, p Params, vocab int) *Sampler {
	t.Helper()
	s, err := New(p, vocab)
	if err != nil {
		t.Fatalf("New(%+v, %d): %v", p, vocab, err)
	}
	return s
}

// offParams turns every truncation and penalty off.
func offParams(temp float32) Params {
	return Params{Temperature: temp, TopP: 1, RepeatPenalty: 1}
}

// candidateIDs returns the sorted ids that survive top-k, top-p and min-p.
func candidateIDs(s *Sampler, logits []float32) []int32 {
	c, _ := s.candidates(s.prepare(logits))
	ids := make([]int32, len(c))
	for i, x := range c {
		ids[i] = x.id
	}
	slices.Sort(ids)
	return ids
}

// refCandidates is the chain written the slow, obvious way: sort the whole
// vocabulary, then cut with math.Exp probabilities.
func refCandidates(logits []float32, p Params) []int32 {
	type tok struct {
		id int32
		x  float64
	}
	var all []tok
	for i, x := range logits {
		if !math.IsInf(float64(x), -1) && !math.IsNaN(float64(x)) {
			all = append(all, tok{int32(i), float64(x)})
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].x != all[j].x {
			return all[i].x > all[j].x
		}
		return all[i].id < all[j].id
	})
	if p.TopK > 0 && p.TopK < len(all) {
		all = all[:p.TopK]
	}
	if p.TopP < 1 {
		var z float64
		for _, t := range all {
			z += math.Exp(t.x - all[0].x)
		}
		var cum float64
		for i, t := range all {
			cum += math.Exp(t.x-all[0].x) / z
			if cum >= float64(p.TopP) {
				all = all[:i+1]
				break
			}
		}
	}
	if p.MinP > 0 {
		for i, t := range all {
			if math.Exp(t.x-all[0].x) < float64(p.MinP) {
				all = all[:i]
				break
			}
		}
	}
	ids := make([]int32, len(all))
	for i, t := range all {
		ids[i] = t.id
	}
	slices.Sort(ids)
	return ids
}

func logf32(x float64) float32 { return float32(math.Log(x)) }
