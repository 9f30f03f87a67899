package arch

import (
	"fmt"

	"github.com/churon/churon/engine/backend"
)

// Scratch holds the intermediate buffers of forward passes, on every
// device a plan uses, so decoding does not allocate per token. Buffers
// grow to the largest batch seen. One Scratch serves one pass at a time.
type Scratch struct {
	devs []*devScratch
	host []float32 // the residual stream on its way between devices
	moe  moeHost   // a mixture-of-experts layer's routing, on the host
	mdst []backend.Buf
	mw   []backend.Weight
	mx   []backend.Buf
	min  []backend.Buf
}

// Buffers a pass uses on each device, by role.
const (
	bufX       = iota // the residual stream: n×embd
	bufXN             // normalised input of a block, and a block's output: n×embd
	bufQ              // queries: n×qDim
	bufK              // keys: n×kvDim
	bufV              // values: n×kvDim
	bufAttn           // attention output: n×qDim
	bufQKV            // the fused q, k and v projection's output: n×(qDim+2·kvDim)
	bufGateUp         // the fused gate and up projection's output: n×2ff
	bufGate           // n×ff
	bufUp             // n×ff
	bufFFN            // n×ff
	bufSel            // the rows whose logits are wanted: rows×embd
	bufLogits         // their logits, a chunk at a time
	bufRouter         // mixture of experts: router logits, n×experts (+n shared-expert gates)
	bufMoEIn          // the rows routed to one expert: rows×embd
	bufMoEOut         // one expert's output rows: rows×embd
	bufMoESum         // the layer's weighted sum of experts: n×embd
	bufQG             // gated attention: queries and their gates, n×2qDim
	bufDNQKV          // Gated DeltaNet: the projection the convolution runs over, n×convDim
	bufDNZ            // its output gate: n×valueDim
	bufDNAlpha        // its decays' and
	bufDNBeta         // its update strengths' projections: n×heads each
	bufDNOut          // its output: n×valueDim
	numBufs
)

// devScratch is one device's buffers: whole allocations, each at least
// as long as the largest view handed out.
type devScratch struct {
	dev  backend.Device
	bufs [numBufs]backend.Buf
}

// on returns d's buffers.
func (s *Scratch) on(d backend.Device) *devScratch {
	for _, ds := range s.devs {
		if ds.dev == d {
			return ds
		}
	}
	ds := &devScratch{dev: d}
	s.devs = append(s.devs, ds)
	return ds
}

// get returns n values of buffer role, allocating it anew (with room to
// spare) when it is shorter.
func (ds *devScratch) get(role, n int) (backend.Buf, error) {
	b := ds.bufs[role]
	if b.Len() >= n {
		return b.Slice(0, n), nil
	}
	ds.dev.Free(b)
	ds.bufs[role] = backend.Buf{}
	nb, err := ds.dev.Alloc(n + n/4)
	if err != nil {
		// The device failing to give memory in a pass is its failure, as
		// an operation's would be: the engine can finish on the CPU.
		return backend.Buf{}, &backend.DeviceError{Device: ds.dev, Err: fmt.Errorf("scratch buffer: %w", err)}
	}
	ds.bufs[role] = nb
	return nb.Slice(0, n), nil
}

// Release frees every buffer on every device. The Scratch can be used
// again afterwards; it allocates anew.
func (s *Scratch) Release() {
	for _, ds := range s.devs {
		for i, b := range ds.bufs {
			ds.dev.Free(b)
			ds.bufs[i] = backend.Buf{}
		}
	}
	s.devs = nil
}

// Bytes is the device memory the scratch holds on d.
func (s *Scratch) Bytes(d backend.Device) int64 {
	var n int64
	for _, ds := range s.devs {
		if ds.dev == d {
			for _, b := range ds.bufs {
				n += 4 * int64(b.Len())
			}
		}
	}
	return n
}

// cross moves n values of the residual stream x from device from to
// device to, through host memory: from's queued work is waited for, so a
// failure there surfaces here.
func (s *Scratch) cross(from, to backend.Device, x backend.Buf, n int) (backend.Buf, error) {
	s.host = grow(s.host, n)
	from.Read(s.host, x)
	if err := from.Sync(); err != nil {
		return backend.Buf{}, &backend.DeviceError{Device: from, Err: err}
	}
	dst, err := s.on(to).get(bufX, n)
	if err != nil {
		return backend.Buf{}, err
	}
	to.Write(dst, s.host)
	return dst, nil
}

func grow(s []float32, n int) []float32 {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]float32, n)
}

// ScratchBytes bounds the device memory one pass of up to rows tokens
// needs on a device that runs any layer of a model of shape c: what a
// planner sets aside before it counts layers.
func ScratchBytes(c *Config, rows int) int64 {
	qDim, kvDim := c.Heads*c.HeadDim, c.KVDim()
	perRow := 2*c.Embd + 2*qDim + 2*kvDim + 3*c.FF + (qDim + 2*kvDim) + 2*c.FF + c.Embd
	if c.SSMConvDim > 0 {
		perRow += 2*qDim + c.SSMConvDim + 2*c.SSMValueDim + 2*c.SSMHeads
	}
	n := int64(perRow) * int64(rows)
	if c.Experts > 0 {
		// the router's logits, and the experts' buffers, which hold all
		// the experts' rows at once (moe.forward)
		n += int64(c.Experts+1+c.Embd) * int64(rows)
		n += int64(2*c.Embd+5*c.ExpertFF) * int64(rows*c.ExpertsUsed)
	}
	// Buffers are allocated with a quarter to spare (devScratch.get).
	return 4 * n * 5 / 4
}

// OutputBytes bounds the buffers of the output head: the logits of one
// chunk of rows, and those rows.
func OutputBytes(c *Config) int64 {
	return 4 * int64(outChunk+15) * int64(c.Vocab+c.Embd) * 5 / 4
}
