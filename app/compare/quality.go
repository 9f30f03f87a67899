package compare

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"runtime"
	"sort"
	"sync"

	api "github.com/churon/churon/app/api/compare"
	"github.com/churon/churon/app/paths"
)

// The quality figures are computed per position from two rows of logits
// over the same vocabulary, in float64:
//
//	lp(v)   = x(v) − log Σ exp(x)              (log-softmax)
//	KLD     = Σ_v p_ref(v) · (lp_ref(v) − lp_model(v))
//	Δp      = p_model(t) − p_ref(t)             (t: the token that came next)
//	nll     = −lp(t)                            (perplexity = exp(mean nll))
//	top-1   = argmax x, the lower id on ties
//
// Identical rows give lp_ref(v) − lp_model(v) = 0 exactly, so a model
// compared with itself scores KLD 0, agreement 1 and ratio 1 exactly.

// position is one scored position.
type position struct {
	kld, dp    float64
	nllM, nllR float64
	topM, topR int32
}

// logSoftmaxNorm returns log Σ exp(x) and the index of the largest x.
func logSoftmaxNorm(x []float32) (lse float64, top int32, err error) {
	maxV := math.Inf(-1)
	for i, v := range x {
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, 0, fmt.Errorf("%w: logit %d is %v", api.ErrBadLogits, i, v)
		}
		if f > maxV {
			maxV, top = f, int32(i)
		}
	}
	var sum float64
	for _, v := range x {
		sum += math.Exp(float64(v) - maxV)
	}
	return maxV + math.Log(sum), top, nil
}

// score compares a model's row with the reference's. refLSE and refTop
// are the reference row's normaliser and top token.
func score(ref []float32, refLSE float64, refTop int32, mod []float32, target int32) (position, error) {
	lseM, topM, err := logSoftmaxNorm(mod)
	if err != nil {
		return position{}, err
	}
	var kld float64
	for v := range ref {
		lr := float64(ref[v]) - refLSE
		lm := float64(mod[v]) - lseM
		kld += math.Exp(lr) * (lr - lm)
	}
	lrT := float64(ref[target]) - refLSE
	lmT := float64(mod[target]) - lseM
	return position{
		kld: kld, dp: math.Exp(lmT) - math.Exp(lrT),
		nllM: -lmT, nllR: -lrT, topM: topM, topR: refTop,
	}, nil
}

// forRows runs f(i) for i in [0, n) on up to GOMAXPROCS goroutines and
// returns the first error. The model is idle while its rows are scored, so
// the cores are free.
func forRows(n int, f func(i int) error) error {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := range n {
			if err := f(i); err != nil {
				return err
			}
		}
		return nil
	}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				if err := f(i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	return firstErr
}

// summarize condenses positions.
func summarize(ps []position) api.Summary {
	n := len(ps)
	s := api.Summary{Tokens: n}
	if n == 0 {
		return s
	}
	klds := make([]float64, n)
	var kldSum, dpSum, nllM, nllR float64
	agree := 0
	for i, p := range ps {
		klds[i] = p.kld
		kldSum += p.kld
		dpSum += p.dp
		nllM += p.nllM
		nllR += p.nllR
		if p.topM == p.topR {
			agree++
		}
	}
	sort.Float64s(klds)
	s.KLDMean = kldSum / float64(n)
	s.KLDP99 = percentile(klds, 0.99)
	s.KLDMax = klds[n-1]
	s.Top1Agreement = float64(agree) / float64(n)
	mM, mR := nllM/float64(n), nllR/float64(n)
	s.PPL, s.RefPPL = math.Exp(mM), math.Exp(mR)
	s.PPLRatio = math.Exp(mM - mR)
	s.DeltaPMean = dpSum / float64(n)
	return s
}

// percentile of sorted values, interpolating linearly between the closest
// ranks (NumPy's default).
func percentile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	r := q * float64(len(sorted)-1)
	lo := int(math.Floor(r))
	hi := min(lo+1, len(sorted)-1)
	return sorted[lo] + (r-float64(lo))*(sorted[hi]-sorted[lo])
}

// spill keeps the reference's logits rows until every model has been
// scored against them. They are written exactly as the engine produced
// them (float32), so a model compared with itself gives exactly zero,
// but to a temporary file rather than memory: for a 152k-token vocabulary
// a few hundred rows are hundreds of megabytes, and only one chunk of rows
// is needed at a time. The page cache usually serves the reads. The file
// goes to Churon's cache folder, not os.TempDir, which is often a tmpfs
// held in memory.
type spill struct {
	f     *os.File
	vocab int
	buf   []byte
}

func newSpill(dir string, vocab int) (*spill, error) {
	if dir == "" {
		dir = paths.CacheDir()
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("compare: reference logits file: %w", err)
	}
	f, err := os.CreateTemp(dir, "compare-*.f32")
	if err != nil {
		return nil, fmt.Errorf("compare: reference logits file: %w", err)
	}
	return &spill{f: f, vocab: vocab}, nil
}

func (s *spill) bytes(n int) []byte {
	if cap(s.buf) < n {
		s.buf = make([]byte, n)
	}
	return s.buf[:n]
}

// write stores rows (whole rows of the vocabulary) from row index row0.
func (s *spill) write(row0 int, rows []float32) error {
	b := s.bytes(4 * len(rows))
	for i, v := range rows {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	if _, err := s.f.WriteAt(b, int64(row0)*int64(s.vocab)*4); err != nil {
		return fmt.Errorf("compare: write reference logits: %w", err)
	}
	return nil
}

// read fills rows from row index row0.
func (s *spill) read(row0 int, rows []float32) error {
	b := s.bytes(4 * len(rows))
	if _, err := s.f.ReadAt(b, int64(row0)*int64(s.vocab)*4); err != nil {
		return fmt.Errorf("compare: read reference logits: %w", err)
	}
	for i := range rows {
		rows[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return nil
}

func (s *spill) close() {
	name := s.f.Name()
	s.f.Close()
	os.Remove(name)
}
