package cpu

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/quant"
)

// noopTask does nothing: a loop of it costs the pool's own work only.
type noopTask struct{}

func (noopTask) run(_, _, _ int) {}

// lockedBench runs f with the benchmark's goroutine locked to its OS
// thread, as the churon binary's main goroutine is (Fyne locks it) when
// `churon bench` decodes on it: the pool's caller then pays a thread
// hand-off for every yield.
func lockedBench(b *testing.B, locked bool, f func()) {
	if locked {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
	}
	f()
}

// BenchmarkPoolLoop is the cost of one parallel loop of 16 empty jobs,
// what a decode step pays about 125 times per token (Qwen2.5-0.5B: five
// loops a layer, 24 layers, the head) on top of its kernels.
func BenchmarkPoolLoop(b *testing.B) {
	for _, locked := range []bool{false, true} {
		for _, threads := range []int{2} {
			b.Run(fmt.Sprintf("locked=%v/threads=%d", locked, threads), func(b *testing.B) {
				p := newPool(threads)
				defer p.close()
				lockedBench(b, locked, func() {
					for range b.N {
						p.parallel(noopTask{}, 16, 1)
					}
				})
			})
		}
	}
}

// randQuant is a rows×cols Q4_0 or Q8_0 tensor of random quants under
// one scale: fast to make at the sizes that stream from memory, and the
// kernels' speed does not depend on the values.
func randQuant(r *rand.Rand, typ quant.Type, name string, cols, rows int) *backend.Tensor {
	blockBytes, _ := typ.RowSize(32)
	data := make([]byte, rows*cols/32*blockBytes)
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	for i := 0; i < len(data); i += blockBytes {
		data[i], data[i+1] = 0x66, 0x2e // the block's f16 scale, 0.1
	}
	return &backend.Tensor{Name: name, Type: typ, Ne: [4]int{cols, rows, 1, 1}, Data: data}
}

// BenchmarkDecodeProducts is the matrix products of a decode step of a
// Qwen2.5-0.5B shape in Q4_0 and Q8_0 (q, k and v in one loop, o, gate
// and up in one loop, down; the output head left out) over 8 layers of
// distinct weights, 67 MB in Q4_0, so they stream from memory as a real
// step's 220 MB do. MB/s is the weights read per second: compare it with `churon bench
// --bandwidth` at the same thread count.
func BenchmarkDecodeProducts(b *testing.B) {
	for _, typ := range []quant.Type{quant.Q4_0, quant.Q8_0} {
		b.Run(typ.String(), func(b *testing.B) { benchDecodeProducts(b, typ) })
	}
}

func benchDecodeProducts(b *testing.B, typ quant.Type) {
	const embd, kvDim, ff, layers = 896, 128, 4864, 8
	r := rand.New(rand.NewPCG(3, 4))
	type layer struct{ q, k, v, o, gate, up, down *backend.Tensor }
	lys := make([]layer, layers)
	bytes := 0
	for i := range lys {
		lys[i] = layer{
			q: randQuant(r, typ, "q", embd, embd), k: randQuant(r, typ, "k", embd, kvDim), v: randQuant(r, typ, "v", embd, kvDim),
			o: randQuant(r, typ, "o", embd, embd), gate: randQuant(r, typ, "gate", embd, ff), up: randQuant(r, typ, "up", embd, ff),
			down: randQuant(r, typ, "down", ff, embd),
		}
		for _, w := range []*backend.Tensor{lys[i].q, lys[i].k, lys[i].v, lys[i].o, lys[i].gate, lys[i].up, lys[i].down} {
			bytes += len(w.Data)
		}
	}
	x := randFloats(r, embd, 1)
	q, k, v := make([]float32, embd), make([]float32, kvDim), make([]float32, kvDim)
	o, down := make([]float32, embd), make([]float32, embd)
	gate, up := make([]float32, ff), make([]float32, ff)
	for i := range gate {
		gate[i] = float32(r.NormFloat64())
	}
	qkv, gu := [][]float32{q, k, v}, [][]float32{gate, up}
	ws := make([][]*backend.Tensor, 2*layers)
	for i, ly := range lys {
		ws[2*i], ws[2*i+1] = []*backend.Tensor{ly.q, ly.k, ly.v}, []*backend.Tensor{ly.gate, ly.up}
	}
	for _, locked := range []bool{false, true} {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("locked=%v/threads=%d", locked, threads), func(b *testing.B) {
				be := New(threads)
				defer be.Close()
				b.SetBytes(int64(bytes))
				steps := make([]time.Duration, 0, b.N)
				lockedBench(b, locked, func() {
					for range b.N {
						t0 := time.Now()
						for i, ly := range lys {
							be.MatMulMulti(qkv, ws[2*i], x, 1)
							be.MatMul(o, ly.o, q, 1)
							be.MatMulMulti(gu, ws[2*i+1], x, 1)
							be.MatMul(down, ly.down, gate, 1)
						}
						steps = append(steps, time.Since(t0))
					}
				})
				reportQuantiles(b, steps, float64(bytes))
			})
		}
	}
}

// reportQuantiles reports the 10th and 50th percentile of the steps'
// times as MB/s of the weights read (mbBytes a step): on a machine shared
// with other programs the fast steps are the ones no other program
// disturbed, so they compare two builds more steadily than the mean.
func reportQuantiles(b *testing.B, steps []time.Duration, mbBytes float64) {
	if len(steps) == 0 {
		return
	}
	slices.Sort(steps)
	for _, q := range []struct {
		name string
		at   float64
	}{{"p10-MB/s", 0.1}, {"p25-MB/s", 0.25}, {"p50-MB/s", 0.5}} {
		d := steps[int(q.at*float64(len(steps)-1))]
		b.ReportMetric(mbBytes/d.Seconds()/1e6, q.name)
	}
}
