package engine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/churon/churon/engine/arch"
	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/backend/cpu"
)

// place chooses the devices, plans which layers run where and makes the
// weights resident there. Anything that keeps the accelerator from being
// used becomes a device note and the model runs on the CPU; only an
// accelerator asked for by name that has no device fails the load.
func (m *Model) place(opt LoadOptions) error {
	threads := opt.Threads
	if threads <= 0 {
		threads = cpu.DefaultThreads()
	}
	m.cpu = cpu.NewDevice(threads)
	L := m.net.Config().Layers
	cpuPlan := backend.Single(m.cpu, L)

	accel, notes, err := chooseAccelerator(opt)
	m.info.DeviceNotes = notes
	if err != nil {
		m.cpu.Close()
		return err
	}
	if accel == nil {
		return m.usePlan(cpuPlan)
	}
	runs, sizes := m.planInputs(accel, opt)
	n := opt.GPULayers
	if n == OffloadAuto {
		n = backend.AutoOffload(accel.FreeBytes(), sizes, runs)
		if n == 0 {
			m.note(fmt.Sprintf("%s: not one layer fits in its free memory (%s)", accel.Name(), mib(accel.FreeBytes())))
		}
	}
	plan := backend.Offload(m.cpu, accel, L, max(n, 0), runs)
	if layers, out := plan.LayersOn(accel); layers == 0 && !out {
		if n > 0 {
			m.note(fmt.Sprintf("%s runs none of the offloaded layers' weight types", accel.Name()))
		}
		accel.Close()
		return m.usePlan(cpuPlan)
	}
	if err := m.usePlan(plan); err != nil {
		// An upload failed (out of memory, usually): everything on the CPU.
		m.note(fmt.Sprintf("%s: %v; running on the CPU", accel.Name(), err))
		accel.Close()
		return m.usePlan(cpuPlan)
	}
	m.accel = accel
	return nil
}

// chooseAccelerator finds the accelerator LoadOptions ask for: none, the
// one given, the named one, or the first registered that probes.
func chooseAccelerator(opt LoadOptions) (backend.Device, []string, error) {
	if opt.Accelerator != nil {
		return opt.Accelerator, nil, nil
	}
	switch name := strings.ToLower(opt.Device); name {
	case "cpu":
		return nil, nil, nil
	case "", "auto":
		var notes []string
		for _, r := range backend.ProbeAll(true) {
			if r.Err == nil {
				return r.Device, notes, nil
			}
			notes = append(notes, fmt.Sprintf("%s: %v", r.Backend, r.Err))
		}
		return nil, notes, nil
	default:
		d, err := backend.ProbeNamed(name)
		if err != nil {
			return nil, nil, fmt.Errorf("device %s: %w", name, err)
		}
		return d, nil, nil
	}
}

// planInputs says which parts the accelerator can run and what each
// needs of its memory: the weights as the devices hold them (one-row
// tensors as float32), the caches of opt.Sequences sequences, the
// scratch of a prompt pass and the output head's logits.
func (m *Model) planInputs(accel backend.Device, opt LoadOptions) (func(int) bool, backend.Sizes) {
	c := m.net.Config()
	L := c.Layers
	unsupported := make(map[int]bool)
	bytes := make([]int64, L+1)
	for _, p := range m.net.Weights() {
		if p.Part < 0 {
			continue // the embedding stays on the CPU
		}
		t := p.Tensor
		if t.IsVector() {
			bytes[p.Part] += 4 * int64(t.Elements())
		} else {
			bytes[p.Part] += int64(len(t.Data))
			if !accel.Supports(t.Type) {
				unsupported[p.Part] = true
			}
		}
	}
	ctxLen := m.contextFor(SequenceOptions{Context: opt.Context})
	kvType, err := opt.KVType.quantType()
	if err != nil {
		kvType, _ = KVF16.quantType()
	}
	seqs := max(1, opt.Sequences)
	specs := m.net.CacheSpec(kvType, ctxLen)
	s := backend.Sizes{Layer: make([]int64, L)}
	// A recurrent layer (its state) runs where the device has the
	// operation: Gated DeltaNet is the only one so far.
	if _, ok := accel.(backend.DeltaNetRunner); !ok {
		kept := 0
		for i := range L {
			if specs[i].StateBytes > 0 {
				unsupported[i] = true
				kept++
			}
		}
		if kept > 0 {
			m.note(fmt.Sprintf("%s does not run Gated DeltaNet layers: %d of %d layers stay on the CPU", accel.Name(), kept, L))
		}
	}
	for i := range L {
		s.Layer[i] = bytes[i]
		if kv := specs[i].KV; kv != nil {
			s.Layer[i] += int64(seqs) * kv.Bytes()
		}
		s.Layer[i] += int64(seqs) * int64(specs[i].StateBytes)
	}
	s.Output = bytes[L] + arch.OutputBytes(c)
	batch := opt.Batch
	if batch <= 0 {
		batch = DefaultBatch
	}
	s.Fixed = arch.ScratchBytes(c, batch)
	return func(stage int) bool { return !unsupported[stage] }, s
}

// usePlan places the weights for p and makes it the model's plan.
func (m *Model) usePlan(p *backend.Plan) error {
	if err := m.net.Place(p); err != nil {
		return err
	}
	m.plan = p
	return nil
}

// note adds a device note.
func (m *Model) note(s string) {
	m.infoMu.Lock()
	m.info.DeviceNotes = append(m.info.DeviceNotes, s)
	m.infoMu.Unlock()
}

// describePlan fills Info's device fields from the plan.
func (m *Model) describePlan() {
	m.infoMu.Lock()
	defer m.infoMu.Unlock()
	in := &m.info
	in.Backend = m.plan.String()
	in.Accelerator, in.OffloadedLayers, in.OffloadedOutput = "", 0, false
	if m.accel != nil {
		in.Accelerator = m.accel.Name()
		in.OffloadedLayers, in.OffloadedOutput = m.plan.LayersOn(m.accel)
	}
}

// forward runs one pass for seqs, where group i of bt belongs to
// seqs[i]. A failure of the accelerator moves the model to the CPU —
// every sequence's cache there is rebuilt from its tokens — and the pass
// runs again there, so an answer in progress finishes on the CPU.
// The caller holds m.exec.
func (m *Model) forward(bt *arch.Batch, seqs []*Sequence, logits []float32) error {
	return m.withFallback(func() error {
		for i, s := range seqs {
			if err := m.revive(s); err != nil {
				return err
			}
			g := &bt.Groups[i]
			c := s.held.cache
			// Feeds refill a cache cut back past its rings first
			// (Sequence.refill); a pass over missing rows would be wrong.
			if !c.Holds(int(bt.Pos[g.Start])) {
				return fmt.Errorf("engine: a sequence's cache lacks the rows of its window at position %d", bt.Pos[g.Start])
			}
			if s.stale {
				return fmt.Errorf("engine: a sequence's recurrent states are of a later position than %d (not rewound)", bt.Pos[g.Start])
			}
			// Before the pass: the rows it overwrites are gone even if it
			// fails.
			c.Stored(int(bt.Pos[g.End-1]) + 1)
			g.Cache = c
		}
		m.rowsRun += int64(len(bt.Tokens))
		return m.net.Forward(&m.scratch, bt, logits)
	})
}

// withFallback runs f and, when the accelerator failed in it, moves the
// model to the CPU and runs f once more. The caller holds m.exec.
func (m *Model) withFallback(f func() error) error {
	if m.closed {
		return ErrClosed
	}
	for attempt := 0; ; attempt++ {
		err := f()
		if err == nil {
			return nil
		}
		// Only the accelerator's failures are worth a second try: the CPU's
		// would fail the same way again.
		de := deviceFailure(err)
		if attempt > 0 || de == nil || m.accel == nil || de.Device != m.accel {
			if errors.Is(err, ErrClosed) {
				return err
			}
			return fmt.Errorf("engine: %w", err)
		}
		m.moveToCPU(de)
	}
}

// moveToCPU gives up the accelerator after it failed: the plan becomes
// all-CPU, the failed device is closed, and caches made for the old plan
// are rebuilt by revive when their sequences next run.
func (m *Model) moveToCPU(cause *backend.DeviceError) {
	m.scratch.Release()
	plan := backend.Single(m.cpu, m.net.Config().Layers)
	// On the CPU an upload is the mapped tensor (vectors widened), which
	// cannot fail for weights that loaded.
	if err := m.usePlan(plan); err != nil {
		panic(fmt.Sprintf("engine: placing on the CPU after %v: %v", cause, err))
	}
	m.accel.Close() // withFallback moves only for the accelerator's failures
	m.accel = nil
	reason := fmt.Errorf("%w; the model runs on the CPU now", cause)
	m.note(reason.Error())
	m.describePlan()
	if m.onFallback != nil {
		// Called with m.exec held: the callback may read Info, nothing
		// that runs the model.
		m.onFallback(reason)
	}
}

// revive rebuilds s's cache when it was made for an older plan: the
// state of its layers on a failed device is lost, so its tokens are run
// through the model again. Until that succeeds the sequence keeps its
// old cache, and the next use tries again. The caller holds m.exec.
func (m *Model) revive(s *Sequence) error {
	if s.closed {
		return ErrClosed
	}
	if s.held.cache != nil && s.held.cache.Plan() == m.plan {
		return nil
	}
	cache, err := backend.NewCache(m.plan, m.net.CacheSpec(s.kvType, s.ctxLen))
	if err != nil {
		return err
	}
	toks := s.tokens
	for done := 0; done < len(toks); {
		n := s.chunk(len(toks)-done, s.batch)
		bt := &arch.Batch{Tokens: toks[done : done+n], Pos: make([]int32, n),
			Groups: []arch.Group{{Start: 0, End: n, Cache: cache}}}
		for i := range n {
			bt.Pos[i] = int32(done + i)
		}
		cache.Stored(done + n)
		if err := m.net.Forward(&m.scratch, bt, nil); err != nil {
			cache.Release()
			return fmt.Errorf("rebuilding a sequence's cache: %w", err)
		}
		done += n
	}
	if s.held.cache != nil {
		s.held.cache.Release()
	}
	s.held.cache = cache
	s.stale = false // the states were computed again, up to the last token
	return nil
}

// DeviceReport is one line of what Devices found.
type DeviceReport struct {
	Backend string // "cpu", or a registered backend's name
	Device  string // the device's name, when there is one
	Err     error  // why there is none
}

// Devices reports the devices this program can run models on: the CPU,
// then every registered accelerator backend with its device or the reason
// it has none. It probes each backend (loading its libraries) and closes
// what it found.
func Devices(threads int) []DeviceReport {
	d := cpu.NewDevice(threads)
	out := []DeviceReport{{Backend: "cpu", Device: d.Name()}}
	d.Close()
	for _, r := range backend.ProbeAll(false) {
		rep := DeviceReport{Backend: r.Backend, Err: r.Err}
		if r.Device != nil {
			rep.Device = r.Device.Name()
			r.Device.Close()
		}
		out = append(out, rep)
	}
	return out
}

func mib(b int64) string {
	if b < 0 {
		return "unbounded"
	}
	return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
}

// deviceFailure is the device failure err holds, or nil. (Its own
// function: errors.As's target escapes, and a pass must not allocate.)
func deviceFailure(err error) *backend.DeviceError {
	var de *backend.DeviceError
	if errors.As(err, &de) {
		return de
	}
	return nil
}
