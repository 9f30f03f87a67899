package gpucheck

import (
	"fmt"
	"math"

	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/quant"
)

// Lockstep is a device that runs every operation on two devices — the
// one under test and a reference (the CPU) — and compares their results
// after each: it finds the first operation of a forward pass where an
// accelerator departs from the CPU, which end-to-end logits cannot tell.
// It is slow (a Sync per operation) and meant for diagnosis.
type Lockstep struct {
	Test, Ref backend.Device
	// Tol is the relative L2 difference an operation may introduce.
	Tol float64
	// Report is called for each operation whose result differs by more.
	Report func(op string, n int, rel float64)

	ops int
}

type lsMem struct {
	t, r backend.Buf
	n    int
}

func (m *lsMem) Len() int { return m.n }

func split(b backend.Buf) (backend.Buf, backend.Buf) {
	if b.Mem() == nil {
		return b, b
	}
	m := b.Mem().(*lsMem)
	return m.t.Slice(b.Off(), b.Off()+b.Len()), m.r.Slice(b.Off(), b.Off()+b.Len())
}

type lsWeight struct {
	t, r backend.Weight
}

func (w *lsWeight) Tensor() *backend.Tensor { return w.r.Tensor() }

func ws(w backend.Weight) (backend.Weight, backend.Weight) {
	if w == nil {
		return nil, nil
	}
	lw := w.(*lsWeight)
	return lw.t, lw.r
}

type lsKV struct{ t, r backend.KV }

func (k *lsKV) Spec() backend.KVSpec { return k.r.Spec() }
func (k *lsKV) AppendRows(dst []byte, values bool, p0, p1 int) ([]byte, error) {
	return k.r.AppendRows(dst, values, p0, p1)
}
func (k *lsKV) SetRows(values bool, p0 int, src []byte) error {
	if err := k.t.SetRows(values, p0, src); err != nil {
		return err
	}
	return k.r.SetRows(values, p0, src)
}
func (k *lsKV) Release() { k.t.Release(); k.r.Release() }

type lsState struct{ t, r backend.State }

func (s *lsState) Bytes() int                          { return s.r.Bytes() }
func (s *lsState) AppendTo(dst []byte) ([]byte, error) { return s.r.AppendTo(dst) }
func (s *lsState) Set(src []byte) error {
	if err := s.t.Set(src); err != nil {
		return err
	}
	return s.r.Set(src)
}
func (s *lsState) Release() { s.t.Release(); s.r.Release() }

// check compares dst on both devices after op.
func (l *Lockstep) check(op string, dst backend.Buf) {
	l.ops++
	t, r := split(dst)
	a, b := make([]float32, t.Len()), make([]float32, r.Len())
	l.Test.Read(a, t)
	l.Ref.Read(b, r)
	if err := l.Test.Sync(); err != nil {
		l.Report(op+": "+err.Error(), l.ops, math.Inf(1))
		return
	}
	_ = l.Ref.Sync()
	var num, den float64
	for i := range b {
		d := float64(a[i]) - float64(b[i])
		num += d * d
		den += float64(b[i]) * float64(b[i])
	}
	rel := math.Sqrt(num / max(den, 1e-30))
	if rel > l.Tol || math.IsNaN(rel) {
		l.Report(op, l.ops, rel)
	}
	// Go on from the reference's values, so each operation is judged on
	// the same inputs.
	l.Test.Write(t, b)
}

func (l *Lockstep) Name() string               { return "lockstep " + l.Test.Name() }
func (l *Lockstep) Supports(t quant.Type) bool { return l.Test.Supports(t) }
func (l *Lockstep) FreeBytes() int64           { return l.Test.FreeBytes() }

func (l *Lockstep) Alloc(n int) (backend.Buf, error) {
	t, err := l.Test.Alloc(n)
	if err != nil {
		return backend.Buf{}, err
	}
	r, _ := l.Ref.Alloc(n)
	return backend.NewBuf(&lsMem{t: t, r: r, n: n}), nil
}

func (l *Lockstep) Free(b backend.Buf) {
	if b.Mem() == nil {
		return
	}
	m := b.Mem().(*lsMem)
	l.Test.Free(m.t)
	l.Ref.Free(m.r)
}

func (l *Lockstep) Upload(t *backend.Tensor) (backend.Weight, error) {
	a, err := l.Test.Upload(t)
	if err != nil {
		return nil, err
	}
	b, err := l.Ref.Upload(t)
	if err != nil {
		return nil, err
	}
	return &lsWeight{a, b}, nil
}

func (l *Lockstep) NewKV(s backend.KVSpec) (backend.KV, error) {
	a, err := l.Test.NewKV(s)
	if err != nil {
		return nil, err
	}
	b, _ := l.Ref.NewKV(s)
	return &lsKV{a, b}, nil
}

func (l *Lockstep) NewState(n int) (backend.State, error) {
	a, err := l.Test.NewState(n)
	if err != nil {
		return nil, err
	}
	b, _ := l.Ref.NewState(n)
	return &lsState{a, b}, nil
}

func (l *Lockstep) Write(dst backend.Buf, src []float32) {
	t, r := split(dst)
	l.Test.Write(t, src)
	l.Ref.Write(r, src)
}

func (l *Lockstep) Read(dst []float32, src backend.Buf) {
	_, r := split(src)
	l.Ref.Read(dst, r)
}

func (l *Lockstep) CopyRows(dst backend.Buf, dstStride int, src backend.Buf, srcStride int, rows, cols int) {
	dt, dr := split(dst)
	st, sr := split(src)
	l.Test.CopyRows(dt, dstStride, st, srcStride, rows, cols)
	l.Ref.CopyRows(dr, dstStride, sr, srcStride, rows, cols)
	l.check("CopyRows", dst)
}

func (l *Lockstep) Embed(dst backend.Buf, table backend.Weight, ids []int32) {
	dt, dr := split(dst)
	tt, tr := ws(table)
	l.Test.Embed(dt, tt, ids)
	l.Ref.Embed(dr, tr, ids)
	l.check("Embed", dst)
}

func (l *Lockstep) MatMul(dst backend.Buf, w backend.Weight, x backend.Buf, n int) {
	dt, dr := split(dst)
	wt, wr := ws(w)
	xt, xr := split(x)
	l.Test.MatMul(dt, wt, xt, n)
	l.Ref.MatMul(dr, wr, xr, n)
	l.check(fmt.Sprintf("MatMul %s n=%d", w.Tensor().Name, n), dst)
}

func (l *Lockstep) MatMulMulti(dst []backend.Buf, w []backend.Weight, x backend.Buf, n int) {
	for i := range dst {
		l.MatMul(dst[i], w[i], x, n)
	}
}

func (l *Lockstep) RMSNorm(dst, x backend.Buf, w backend.Weight, eps float32) {
	dt, dr := split(dst)
	xt, xr := split(x)
	wt, wr := ws(w)
	l.Test.RMSNorm(dt, xt, wt, eps)
	l.Ref.RMSNorm(dr, xr, wr, eps)
	l.check("RMSNorm "+w.Tensor().Name, dst)
}

func (l *Lockstep) AddBias(x backend.Buf, b backend.Weight) {
	xt, xr := split(x)
	bt, br := ws(b)
	l.Test.AddBias(xt, bt)
	l.Ref.AddBias(xr, br)
	l.check("AddBias", x)
}

func (l *Lockstep) RoPE(x backend.Buf, pos []int32, heads, headDim int, r *backend.Rope) {
	xt, xr := split(x)
	l.Test.RoPE(xt, pos, heads, headDim, r)
	l.Ref.RoPE(xr, pos, heads, headDim, r)
	l.check(fmt.Sprintf("RoPE pos %v", pos), x)
}

func (l *Lockstep) StoreKV(kv backend.KV, pos []int32, k, v backend.Buf) {
	c := kv.(*lsKV)
	kt, kr := split(k)
	vt, vr := split(v)
	l.Test.StoreKV(c.t, pos, kt, vt)
	l.Ref.StoreKV(c.r, pos, kr, vr)
}

func (l *Lockstep) Attend(dst, q backend.Buf, kv backend.KV, pos []int32, a *backend.Attention, in backend.AttendInputs) {
	c := kv.(*lsKV)
	dt, dr := split(dst)
	qt, qr := split(q)
	var it, ir backend.AttendInputs
	it.Gate, ir.Gate = split(in.Gate)
	it.Sinks, ir.Sinks = ws(in.Sinks)
	l.Test.Attend(dt, qt, c.t, pos, a, it)
	l.Ref.Attend(dr, qr, c.r, pos, a, ir)
	l.check(fmt.Sprintf("Attend pos %v", pos), dst)
}

// three runs an operation of a destination and two inputs on both.
func (l *Lockstep) three(op string, dst, a, b backend.Buf, f func(d backend.Device, dst, a, b backend.Buf)) {
	dt, dr := split(dst)
	at, ar := split(a)
	bt, br := split(b)
	f(l.Test, dt, at, bt)
	f(l.Ref, dr, ar, br)
	l.check(op, dst)
}

func (l *Lockstep) SwiGLU(dst, gate, up backend.Buf) {
	l.three("SwiGLU", dst, gate, up, func(d backend.Device, x, g, u backend.Buf) { d.SwiGLU(x, g, u) })
}

func (l *Lockstep) GeGLU(dst, gate, up backend.Buf) {
	l.three("GeGLU", dst, gate, up, func(d backend.Device, x, g, u backend.Buf) { d.GeGLU(x, g, u) })
}

func (l *Lockstep) Scale(x backend.Buf, s float32) {
	xt, xr := split(x)
	l.Test.Scale(xt, s)
	l.Ref.Scale(xr, s)
	l.check("Scale", x)
}

func (l *Lockstep) SoftCap(x backend.Buf, c float32) {
	xt, xr := split(x)
	l.Test.SoftCap(xt, c)
	l.Ref.SoftCap(xr, c)
	l.check("SoftCap", x)
}

func (l *Lockstep) Add(dst, x backend.Buf) {
	dt, dr := split(dst)
	xt, xr := split(x)
	l.Test.Add(dt, xt)
	l.Ref.Add(dr, xr)
	l.check("Add", dst)
}

func (l *Lockstep) WeightSlice(w backend.Weight, i int) (backend.Weight, error) {
	wt, wr := ws(w)
	a, err := l.Test.WeightSlice(wt, i)
	if err != nil {
		return nil, err
	}
	b, err := l.Ref.WeightSlice(wr, i)
	if err != nil {
		return nil, err
	}
	return &lsWeight{a, b}, nil
}

func (l *Lockstep) MatMulEach(dst []backend.Buf, w []backend.Weight, x []backend.Buf, n []int) {
	for i := range dst {
		l.MatMul(dst[i], w[i], x[i], n[i])
	}
}

func (l *Lockstep) GatherRows(dst, src backend.Buf, cols int, rows []int32) {
	dt, dr := split(dst)
	st, sr := split(src)
	l.Test.GatherRows(dt, st, cols, rows)
	l.Ref.GatherRows(dr, sr, cols, rows)
	l.check("GatherRows", dst)
}

func (l *Lockstep) ScatterAddRows(dst, src backend.Buf, cols int, rows []int32, scale []float32) {
	dt, dr := split(dst)
	st, sr := split(src)
	l.Test.ScatterAddRows(dt, st, cols, rows, scale)
	l.Ref.ScatterAddRows(dr, sr, cols, rows, scale)
	l.check("ScatterAddRows", dst)
}

func (l *Lockstep) SwiGLUClamped(dst, gate, up backend.Buf, alpha, limit float32) {
	l.three("SwiGLUClamped", dst, gate, up, func(d backend.Device, x, g, u backend.Buf) { d.SwiGLUClamped(x, g, u, alpha, limit) })
}

func (l *Lockstep) Sync() error {
	if err := l.Test.Sync(); err != nil {
		return err
	}
	return l.Ref.Sync()
}

func (l *Lockstep) Close() error {
	l.Ref.Close()
	return l.Test.Close()
}

var _ backend.Device = (*Lockstep)(nil)
