package cpu

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/quant"
	"github.com/churon/churon/internal/hugemem"
)

// BenchmarkDecodeStream is a decode step's matrix products alone, over
// weights that stream from DRAM, each pass timed against a plain read of
// the same bytes just before it: a kernel's share of what memory gives,
// apart from the rest of a step and from the minute's noise, which moves
// a whole `churon bench` run by ±20 % here.
//
// 512 MiB of one weight type, in huge pages as loaded weights are, is cut
// into matrices of 2,048 columns and 2,048 or 5,632 rows (a 1B model's
// projections and FFN); each product is one parallel loop over the
// threads and joined, as in a decode step, and a pass runs them all in
// turn. The rows repeat one random 256-row pattern (quantizing 512 MiB
// would take minutes); the caches cannot tell. Where the device holds
// the type interleaved (Q4_K, Q6_K; Q4_0 at avx2) the pass reads the
// interleave, as a model's would, and "file" the file's layout.
//
// The read runs in the same parallel loops, a matrix each, summing its
// bytes as ReadBandwidth does. "of-read", the median over iterations of
// read time ÷ product time, is the kernels' share of what memory gave at
// that moment: it moves a few points between runs where either figure
// moves ±20 %. Also p10/p25/p50-MB/s of the product passes (weights read
// per second) and read-p10-MB/s.
func BenchmarkDecodeStream(b *testing.B) {
	const cols, size = 2048, 512 << 20
	for _, typ := range []quant.Type{quant.Q8_0, quant.Q4_0, quant.Q4_K, quant.Q6_K} {
		rowBytes, _ := typ.RowSize(cols)
		pattern := streamPattern(b, typ, cols)
		data, release := hugemem.Alloc(size / rowBytes * rowBytes)
		for off := 0; off < len(data); off += copy(data[off:], pattern) {
		}
		big := &backend.Tensor{Name: "stream", Type: typ, Ne: [4]int{cols, len(data) / rowBytes, 1, 1}, Data: data}
		// The interleave made here, not by Device.interleave, which would
		// give the file layout's pages back (they are read too).
		var il *interleaved
		var freeIL func() error
		if l := interleavable(big); l != nil {
			packed, free := hugemem.Alloc(l.size(big.Rows(), cols))
			if err := l.repack(packed, data, rowBytes, big.Rows(), cols); err != nil {
				b.Fatal(err)
			}
			il, freeIL = &interleaved{l: l, data: packed, group: l.size(ilRows, cols)}, free
		}
		for _, threads := range []int{1, 2} {
			d := NewDevice(threads)
			for _, rows := range []int{2048, 5632} {
				layouts := []*interleaved{nil}
				if il != nil {
					layouts = append(layouts, il)
				}
				for _, l := range layouts {
					name := "file"
					if l != nil {
						name = "interleave"
					}
					b.Run(fmt.Sprintf("%v/t=%d/rows=%d/%s", typ, threads, rows, name), func(b *testing.B) {
						streamPasses(b, d, big, l, rows)
					})
				}
			}
			d.Close()
		}
		for _, f := range []func() error{freeIL, release} {
			if f != nil {
				_ = f()
			}
		}
	}
}

// streamPattern is 256 rows of typ quantized from Gaussian values.
func streamPattern(b *testing.B, typ quant.Type, cols int) []byte {
	r := rand.New(rand.NewPCG(22, 43))
	vals := make([]float32, 256*cols)
	for i := range vals {
		vals[i] = float32(r.NormFloat64())
	}
	rowBytes, _ := typ.RowSize(cols)
	p := make([]byte, 256*rowBytes)
	if err := quant.Quantize(typ, vals, p); err != nil {
		b.Fatal(err)
	}
	return p
}

// streamPasses times passes over big's rows, rows at a time (one
// product each), reading il where it is not nil, each after a plain read
// of the same bytes, and reports both.
func streamPasses(b *testing.B, d *Device, big *backend.Tensor, il *interleaved, rows int) {
	cols := big.Cols()
	rowBytes, _ := big.Type.RowSize(cols)
	nmat := big.Rows() / rows
	mats := make([]*backend.Tensor, nmat)
	subs := make([]*interleaved, nmat)
	for i := range mats {
		lo := i * rows
		mats[i] = &backend.Tensor{Name: "m", Type: big.Type, Ne: [4]int{cols, rows, 1, 1}, Data: big.Data[lo*rowBytes : (lo+rows)*rowBytes]}
		if il != nil {
			subs[i] = il.sub(lo, rows, cols)
		}
	}
	r := rand.New(rand.NewPCG(5, 6))
	x := make([]float32, cols)
	for i := range x {
		x[i] = float32(r.NormFloat64())
	}
	dst := make([]float32, rows)
	bytes := nmat * rows * rowBytes
	// The read pass: the same bytes (the interleave's where it is read),
	// a parallel loop a matrix in as many jobs as a product's, summed.
	read := &readTask{jobs: jobsPerThread * d.b.threads}
	for i, m := range mats {
		if subs[i] != nil {
			read.mats = append(read.mats, subs[i].data[:subs[i].l.size(rows, cols)])
		} else {
			read.mats = append(read.mats, m.Data)
		}
	}
	b.SetBytes(int64(bytes))
	passes := make([]time.Duration, 0, b.N)
	reads := make([]time.Duration, 0, b.N)
	shares := make([]float64, 0, b.N)
	for b.Loop() {
		t0 := time.Now()
		for i := range read.mats {
			read.cur = read.mats[i]
			d.b.pool.parallel(read, read.jobs, 1)
		}
		t1 := time.Now()
		for i, m := range mats {
			d.b.matMul(dst, m, subs[i], x, 1)
		}
		t2 := time.Now()
		reads, passes = append(reads, t1.Sub(t0)), append(passes, t2.Sub(t1))
		shares = append(shares, t1.Sub(t0).Seconds()/t2.Sub(t1).Seconds())
	}
	reportQuantiles(b, passes, float64(bytes))
	slices.Sort(reads)
	slices.Sort(shares)
	b.ReportMetric(float64(bytes)/reads[len(reads)/10].Seconds()/1e6, "read-p10-MB/s")
	b.ReportMetric(shares[len(shares)/2], "of-read")
	if read.sum.Load() == 1 {
		b.Log("") // keeps the sums observable
	}
}

// readTask sums cur in jobs equal parts: the read pass's loop.
type readTask struct {
	mats [][]byte
	cur  []byte
	jobs int
	sum  atomic.Uint64
}

func (t *readTask) run(_, lo, hi int) {
	part := len(t.cur) / t.jobs &^ 255
	end := hi * part
	if hi == t.jobs {
		end = len(t.cur) &^ 255
	}
	t.sum.Add(readSum(t.cur[lo*part : end]))
}
