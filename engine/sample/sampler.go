package sample

import (
	"fmt"
	"math"
	"slices"
)

var negInf = math.Inf(-1)

// cand is a token that is still in the running.
type cand struct {
	id    int32
	logit float64
}

// better is the order of the whole chain: higher logit first, lower id on
// ties. It is total, so every selection and sort gives one answer no matter
// the algorithm behind it.
func better(a, b cand) bool {
	return a.logit > b.logit || (a.logit == b.logit && a.id < b.id)
}

func cmpCand(a, b cand) int {
	switch {
	case better(a, b):
		return -1
	case better(b, a):
		return 1
	}
	return 0
}

// Sampler picks tokens for one sequence. It is not safe for concurrent
// use; give each sequence its own.
//
// Its buffers are sized to the vocabulary at New (32 bytes per token, 8
// more with penalties and 8 more for top-p without top-k: about 5–7 MB for
// a 152k vocabulary), so Sample does not allocate.
//
// The working buffers hold float64 even though logits are float32: the
// conversion is done once, in a loop with nothing else to wait for. Inside
// the exp-heavy loops it would cost a lot, because x86's CVTSS2SD writes
// only half of its register, and when the compiler picks the register that
// holds the previous iteration's exp, every iteration waits for the one
// before (measured: 37 ns per token instead of 7).
type Sampler struct {
	p       Params
	vocab   int
	greedy  bool
	topK    int // 0 when off or when it would keep the whole vocabulary
	window  int // > 0: ring of that many; -1: whole history; 0: penalties off
	rng     splitMix64
	buf     []float64 // the caller's logits, sanitised, with the penalties applied
	cands   []cand
	weights []float64
	probs   []float64 // e^(logit-max) by token id, for top-p without top-k

	// Penalty history: counts per token id, the distinct ids with a
	// non-zero count (so applying penalties costs the window, not the
	// vocabulary), where each id sits in distinct (+1, 0 = absent), and the
	// ring of the last window tokens.
	counts   []int32
	where    []int32
	distinct []int32
	ring     []int32
	head     int
}

// New returns a Sampler for a vocabulary of vocabSize tokens.
func New(p Params, vocabSize int) (*Sampler, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if vocabSize <= 0 || vocabSize > math.MaxInt32 {
		return nil, fmt.Errorf("sample: vocabulary of %d tokens: %w", vocabSize, ErrVocabSize)
	}
	s := &Sampler{
		p:       p,
		vocab:   vocabSize,
		greedy:  p.Temperature <= 0,
		buf:     make([]float64, vocabSize),
		cands:   make([]cand, vocabSize),
		weights: make([]float64, vocabSize),
	}
	if p.TopK < vocabSize {
		s.topK = p.TopK
	}
	if s.topK == 0 && p.TopP < 1 && !s.greedy {
		s.probs = make([]float64, vocabSize)
	}
	if p.penalized() {
		s.window = p.PenaltyWindow
		if s.window == 0 {
			s.window = DefaultPenaltyWindow
		}
		s.counts = make([]int32, vocabSize)
		s.where = make([]int32, vocabSize)
	}
	s.rng.state = p.Seed
	return s, nil
}

// Params returns the parameters the Sampler was made with.
func (s *Sampler) Params() Params { return s.p }

// VocabSize returns the vocabulary size the Sampler was made for.
func (s *Sampler) VocabSize() int { return s.vocab }

// Reset forgets the penalty history and restarts the random stream from
// the seed, so a reset Sampler repeats its first sequence.
func (s *Sampler) Reset() {
	for _, t := range s.distinct {
		s.counts[t] = 0
		s.where[t] = 0
	}
	s.distinct = s.distinct[:0]
	s.ring = s.ring[:0]
	s.head = 0
	s.rng.state = s.p.Seed
}

// Accept records a token (from the prompt or generated) in the penalty
// history. Ids outside the vocabulary take their place in the window but
// penalise nothing. Without penalties Accept does nothing. Accept may
// allocate while the window fills up (with the whole history as window:
// when it meets a token it has not seen before), never once it is full.
func (s *Sampler) Accept(tok int32) {
	switch {
	case s.window == 0:
		return
	case s.window < 0:
		s.count(tok)
	case len(s.ring) < s.window:
		s.ring = append(s.ring, tok)
		s.count(tok)
	default:
		s.uncount(s.ring[s.head])
		s.ring[s.head] = tok
		s.head++
		if s.head == s.window {
			s.head = 0
		}
		s.count(tok)
	}
}

func (s *Sampler) count(tok int32) {
	if tok < 0 || int(tok) >= s.vocab {
		return
	}
	if s.counts[tok] == 0 {
		s.distinct = append(s.distinct, tok)
		s.where[tok] = int32(len(s.distinct))
	}
	s.counts[tok]++
}

func (s *Sampler) uncount(tok int32) {
	if tok < 0 || int(tok) >= s.vocab {
		return
	}
	s.counts[tok]--
	if s.counts[tok] > 0 {
		return
	}
	i := s.where[tok] - 1
	last := s.distinct[len(s.distinct)-1]
	s.distinct[i] = last
	s.where[last] = i + 1
	s.distinct = s.distinct[:len(s.distinct)-1]
	s.where[tok] = 0
}

// Sample returns the next token for logits, one per vocabulary entry. It
// does not modify logits and does not allocate.
//
// NaN logits count as -Inf (masked) and +Inf as the largest float32. When
// every logit is masked the result is 0: the caller masked everything,
// and 0 is at least a valid id. A logits slice of the wrong length is
// read up to the shorter of it and the vocabulary; an empty one gives 0.
// Sample never returns an id outside [0, VocabSize()).
//
// Sample does not record the token; call Accept with it.
func (s *Sampler) Sample(logits []float32) int32 {
	buf := s.prepare(logits)
	if len(buf) == 0 {
		return 0
	}
	if s.greedy {
		return argmax(buf)
	}
	c, m := s.candidates(buf)
	switch len(c) {
	case 0:
		return argmax(buf)
	case 1:
		return c[0].id
	}
	return s.draw(c, m)
}

// prepare copies logits into s.buf, sanitised, with the penalties applied.
func (s *Sampler) prepare(logits []float32) []float64 {
	n := min(len(logits), s.vocab)
	buf := s.buf[:n]
	for i, x := range logits[:n] {
		buf[i] = float64(sanitize(x))
	}
	if s.window != 0 {
		s.applyPenalties(buf)
	}
	return buf
}

func sanitize(x float32) float32 {
	switch {
	case x != x:
		return float32(negInf)
	case x > math.MaxFloat32:
		return math.MaxFloat32
	}
	return x
}

// applyPenalties applies llama.cpp's penalties (llama_sampler_penalties) to
// every token seen in the window: the repeat penalty divides a positive
// logit and multiplies a non-positive one (dividing a negative logit would
// make the token more likely), then count*frequency + presence is
// subtracted. All in float32, as llama.cpp does.
func (s *Sampler) applyPenalties(buf []float64) {
	rp, fp, pp := s.p.RepeatPenalty, s.p.FrequencyPenalty, s.p.PresencePenalty
	for _, t := range s.distinct {
		if int(t) >= len(buf) {
			continue
		}
		x := float32(buf[t])
		if x <= 0 {
			x *= rp
		} else {
			x /= rp
		}
		x -= float32(float32(s.counts[t])*fp) + pp
		buf[t] = float64(sanitize(x))
	}
}

// argmax returns the first index of the largest value: llama.cpp's greedy
// sampler keeps the first maximum, so ties go to the lowest id.
func argmax(buf []float64) int32 {
	best, bx := 0, buf[0]
	for i, x := range buf {
		if x > bx {
			best, bx = i, x
		}
	}
	return int32(best)
}

// candidates runs top-k, top-p and min-p over buf (already penalised) and
// returns the survivors with the largest logit among them (which is the
// largest finite logit in buf). It returns no candidates when every logit
// is -Inf. The slice aliases s.cands.
//
// Cost for a vocabulary of n: with top-k on, one pass with a k-sized heap
// (O(n log k), in practice n comparisons against the heap's root) and a
// sort of k. With top-k off, top-p needs the tokens in order, but only up
// to where the running probability reaches p: three linear passes (n exps,
// then two histograms of probability mass by logit distance from the top
// that pin the cutoff to a 1/512-wide band) and a sort of the few tokens in
// that band; see topPCandidates. Min-p alone and plain temperature need no
// sort, only one pass (and the draw's n exps for plain temperature).
func (s *Sampler) candidates(buf []float64) ([]cand, float64) {
	p := s.p
	if s.topK > 0 {
		c := s.topKCandidates(buf, s.topK)
		if len(c) == 0 {
			return c, negInf
		}
		m := c[0].logit
		if p.TopP < 1 || p.MinP > 0 {
			var z float64
			if p.TopP < 1 {
				for _, x := range c {
					z += detExp(x.logit - m)
				}
			}
			c = s.truncate(c, m, z)
		}
		return c, m
	}

	m := negInf
	for _, x := range buf {
		if x > m {
			m = x
		}
	}
	if m == negInf {
		return s.cands[:0], m
	}
	if p.TopP < 1 {
		return s.topPCandidates(buf, m), m
	}
	return s.gather(buf, m, p.MinP), m
}

// topKCandidates returns the k best finite tokens of buf, best first.
func (s *Sampler) topKCandidates(buf []float64, k int) []cand {
	h := s.cands[:0]
	for i, x := range buf {
		if x == negInf {
			continue
		}
		if len(h) < k {
			h = append(h, cand{int32(i), x})
			siftUp(h, len(h)-1)
			continue
		}
		// The root is the worst kept token. Ids arrive in increasing
		// order, so an equal logit loses the tie and a strict > decides.
		if x > h[0].logit {
			h[0] = cand{int32(i), x}
			siftDown(h, 0)
		}
	}
	// Heap sort: moving the worst to the end each time leaves best first.
	for end := len(h) - 1; end > 0; end-- {
		h[0], h[end] = h[end], h[0]
		siftDown(h[:end], 0)
	}
	return h
}

// The heap keeps its worst candidate at the root.
func siftUp(h []cand, i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !better(h[parent], h[i]) {
			break
		}
		h[parent], h[i] = h[i], h[parent]
		i = parent
	}
}

func siftDown(h []cand, i int) {
	for {
		worst := i
		l, r := 2*i+1, 2*i+2
		if l < len(h) && better(h[worst], h[l]) {
			worst = l
		}
		if r < len(h) && better(h[worst], h[r]) {
			worst = r
		}
		if worst == i {
			return
		}
		h[i], h[worst] = h[worst], h[i]
		i = worst
	}
}

// Top-p without top-k places every token in a band by the distance d of
// its logit below the maximum: band = floor(d*bandsPerUnit) for d below
// maxDist, one last band beyond. Bands are grouped bandsPerBin to a bin
// for the first histogram.
const (
	bandsPerUnit = 512
	maxDist      = 32
	bandsPerBin  = 128
	lastBand     = maxDist * bandsPerUnit // everything at distance >= maxDist
	numBins      = lastBand/bandsPerBin + 1
)

func bandOf(d float64) int {
	if d >= maxDist {
		return lastBand
	}
	return int(d * bandsPerUnit) // exact: bandsPerUnit is a power of two
}

// topPCandidates handles top-p (and min-p) when top-k is off, without
// sorting the vocabulary. The tokens top-p keeps are the most likely ones,
// so they are all the tokens in bands nearer the top than some cutoff
// band, plus a prefix of that band in sorted order. Two histograms find the
// cutoff band (bins of bands, then the bands of one bin); only the tokens
// in the cutoff band and the next (slack for the rounding difference between
// the histograms' sums and the sorted running sum) are sorted.
//
// No probability at distance >= 32 can matter while TopP < 1: e^-32 times
// even 10^6 tokens is far below the smallest gap between a float32 TopP
// and 1. If rounding ever puts the cutoff there, the whole last band is
// sorted, which is slow but right.
func (s *Sampler) topPCandidates(buf []float64, m float64) []cand {
	var bins [numBins]float64
	var z float64
	probs := s.probs[:len(buf)]
	for i, x := range buf {
		if x == negInf {
			probs[i] = 0
			continue
		}
		d := m - x
		e := detExp(-d)
		probs[i] = e
		z += e
		bins[bandOf(d)/bandsPerBin] += e
	}
	target := float64(s.p.TopP) * z

	// The cutoff bin, and the mass of everything nearer the top.
	bin, before := numBins-1, 0.0
	for b, mass := range bins {
		if before+mass >= target {
			bin = b
			break
		}
		before += mass
	}
	cut := lastBand
	if bin < numBins-1 {
		var bands [bandsPerBin]float64
		lo := bin * bandsPerBin
		for i, x := range buf {
			if x == negInf {
				continue
			}
			if b := bandOf(m-x) - lo; b >= 0 && b < bandsPerBin {
				bands[b] += probs[i]
			}
		}
		cut = lo + bandsPerBin - 1
		for b, mass := range bands {
			if before+mass >= target {
				cut = lo + b
				break
			}
			before += mass
		}
	}

	// Sure tokens go to the front of s.cands in id order, tokens of the
	// cutoff band (and the slack band) to the back.
	minP := float64(s.p.MinP)
	all := s.cands[:len(buf)]
	sure, edge := 0, len(all)
	var sureMass float64
	for i, x := range buf {
		if x == negInf || probs[i] < minP {
			continue
		}
		switch b := bandOf(m - x); {
		case b < cut:
			all[sure] = cand{int32(i), x}
			sure++
			sureMass += probs[i]
		case b <= cut+1:
			edge--
			all[edge] = cand{int32(i), x}
		}
	}
	c := all[:sure]
	if sureMass >= target {
		return c // reached within rounding before the cutoff band
	}
	tail := all[edge:]
	slices.SortFunc(tail, cmpCand)
	cum := sureMass
	for _, t := range tail {
		c = append(c, t) // never overtakes tail: sure+len(tail) <= len(all)
		cum += probs[t.id]
		if cum >= target {
			break
		}
	}
	return c
}

// gather collects, in id order, the finite tokens whose probability
// relative to the top token is at least minP (all finite ones for 0).
func (s *Sampler) gather(buf []float64, m float64, minP float32) []cand {
	c := s.cands[:0]
	if minP <= 0 {
		for i, x := range buf {
			if x != negInf {
				c = append(c, cand{int32(i), x})
			}
		}
		return c
	}
	// A cheap bound first (math.Log may differ in the last bit between
	// platforms, hence the slack); detExp decides exactly.
	limit := -math.Log(float64(minP)) + 1e-6
	for i, x := range buf {
		if d := m - x; d < limit && detExp(-d) >= float64(minP) {
			c = append(c, cand{int32(i), x})
		}
	}
	return c
}

// truncate applies top-p, then min-p, to c sorted best first, whose
// top logit is m; z is the probability mass (relative to the top token) of
// everything top-p normalises over. Both keep a prefix of c, so the chain's
// result is the shorter of the two: llama.cpp's top-p keeps tokens up to
// and including the one where the running probability reaches TopP, and
// min-p then keeps those whose probability is at least MinP times the top
// one's. The top token always survives.
func (s *Sampler) truncate(c []cand, m, z float64) []cand {
	topP, minP := s.p.TopP < 1, s.p.MinP > 0
	target := float64(s.p.TopP) * z
	var cum float64
	for i, x := range c {
		e := detExp(x.logit - m)
		if minP && i > 0 && e < float64(s.p.MinP) {
			return c[:i]
		}
		cum += e
		if topP && cum >= target {
			return c[:i+1]
		}
	}
	return c
}

// draw picks one of c with probability softmax(logit/T), whose largest
// logit is m.
func (s *Sampler) draw(c []cand, m float64) int32 {
	t := float64(s.p.Temperature)
	w := s.weights[:len(c)]
	var total float64
	for i, x := range c {
		w[i] = detExp((x.logit - m) / t)
		total += w[i]
	}
	u := s.rng.float64() * total
	var cum float64
	last := 0
	for i := range c {
		if w[i] == 0 {
			continue
		}
		cum += w[i]
		if cum > u {
			return c[i].id
		}
		last = i
	}
	// Reached only if rounding left cum a hair short of total.
	return c[last].id
}
