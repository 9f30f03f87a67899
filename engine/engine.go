package engine

import (
	"context"
	"fmt"
	"math"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/churon/churon/engine/arch"
	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/backend/cpu"
	"github.com/churon/churon/engine/chat"
	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/engine/tokenizer"
	"github.com/churon/churon/internal/hugemem"
)

// LoadOptions control how a model is opened.
type LoadOptions struct {
	// Threads for the CPU backend; 0 picks the number of physical cores
	// (cpu.DefaultThreads).
	Threads int
	// InMemory reads the weights into ordinary memory instead of mapping
	// the file. Mapping is faster to open and shares pages with the page
	// cache; reading avoids the kernel paging weights out under memory
	// pressure, which slows decoding badly on some machines.
	InMemory bool
	// Lock pins the weights in RAM (mlock) so they are never paged out.
	// It needs a memory-lock limit (ulimit -l) at least the model's size;
	// Load fails with the reason when the system refuses.
	Lock bool
	// Progress, when set, is called with the fraction loaded (0..1).
	Progress func(fraction float64)

	// Device chooses where layers may run besides the CPU: "" or "auto"
	// tries the registered accelerator backends in order and keeps the
	// first that works; "cpu" uses none; a backend's name uses that one,
	// and Load fails when it has no device.
	Device string
	// Accelerator, when set, is used as the accelerator instead of
	// probing (tests pass the fake device). The model owns it and closes
	// it.
	Accelerator backend.Device
	// GPULayers is how many layers run on the accelerator, counted as
	// llama.cpp's -ngl: the last N layers, and with N > Layers the output
	// head too. OffloadAuto (0) puts as many as fit in its free memory,
	// OffloadNone none.
	GPULayers int
	// Context, KVType and Sequences size the caches an automatic offload
	// keeps room for on the accelerator: Sequences caches of Context
	// positions (DefaultContext and 1 when 0).
	Context   int
	KVType    KVType
	Sequences int
	// Batch is the most tokens a prompt pass will take (the largest
	// SequenceOptions.Batch to come), for the scratch an automatic offload
	// keeps room for; DefaultBatch when 0.
	Batch int
	// OnFallback, when set, is called when the accelerator failed during
	// a forward pass and the model moved to the CPU, with the reason; it
	// runs on the goroutine of the pass, which then finishes on the CPU.
	// The model's lock is held meanwhile: the callback may call Info, but
	// nothing that runs the model (NewSequence, Feed, snapshots) or it
	// deadlocks.
	OnFallback func(reason error)
}

// Offload counts for LoadOptions.GPULayers.
const (
	OffloadAuto = 0
	OffloadNone = -1
)

// Model is a loaded model: immutable weights, tokenizer and chat template.
// It is safe for concurrent use; each Sequence is used by one goroutine.
type Model struct {
	path    string
	file    *gguf.File
	net     arch.Model
	tok     *tokenizer.Tokenizer
	tmpl    *chat.Template
	info    Info
	tmplErr error
	loadDur time.Duration
	locked  bool          // weights pinned with mlock (LoadOptions.Lock)
	ident   identityCache // Identity, computed on first use (snapshot.go)

	cpu        *cpu.Device
	accel      backend.Device // nil without one, or after it failed
	onFallback func(error)
	// exec serialises forward passes, and guards the plan, the scratch
	// buffers and the move to the CPU after a device failure.
	exec    sync.Mutex
	closed  bool // guarded by exec
	plan    *backend.Plan
	scratch arch.Scratch
	rowsRun int64      // rows of every pass run, for tests: what feeding cost
	infoMu  sync.Mutex // guards info's device fields, which a fallback changes
}

// Info describes a loaded model.
type Info struct {
	Path          string
	Name          string // general.name, or the file name
	Architecture  string
	Parameters    int64
	FileType      string         // e.g. "Q4_K_M" (general.file_type), else the dominant weight type
	QuantMix      map[string]int // tensors per type
	ContextLength int            // trained context length
	Layers        int
	Embedding     int
	Heads         int
	KVHeads       int
	// Experts per layer of a mixture of experts (0 for a dense model),
	// and how many each token runs through.
	Experts, ExpertsUsed int
	VocabSize            int
	HasTemplate          bool // the file carries tokenizer.chat_template
	FileBytes            int64
	WeightBytes          int64
	// Backend says what runs where: the CPU's name alone ("CPU avx2 (8
	// threads)"), or each device with its share of the model.
	Backend string
	Threads int // the CPU's threads
	// Accelerator is the device layers run on besides the CPU ("" for
	// none); OffloadedLayers of Layers run there, and the output head
	// when OffloadedOutput.
	Accelerator     string
	OffloadedLayers int
	OffloadedOutput bool
	// DeviceNotes says, a line each, why a backend is not used: a probe
	// that found no device, an offload that did not fit, a device that
	// failed during an answer.
	DeviceNotes []string
}

// Load opens a GGUF model. It validates the file, builds the architecture
// and tokenizer, and can be cancelled through ctx.
func Load(ctx context.Context, path string, opt LoadOptions) (*Model, error) {
	return load(ctx, path, opt, func(report func(float64)) (*gguf.File, error) {
		if opt.InMemory {
			return readInMemory(ctx, path, report)
		}
		return gguf.Open(path)
	})
}

// LoadMemory opens a GGUF model held in memory — one built into the
// program — as Load opens a file. data must not change while the model
// lives; name stands for the file's path in Info and errors.
func LoadMemory(ctx context.Context, name string, data []byte, opt LoadOptions) (*Model, error) {
	m, err := load(ctx, name, opt, func(func(float64)) (*gguf.File, error) { return gguf.Parse(data) })
	if err != nil {
		return nil, err
	}
	m.info.FileBytes = int64(len(data))
	return m, nil
}

// load reports progress around open, which yields the parsed file, and
// builds the model from it.
func load(ctx context.Context, name string, opt LoadOptions, open func(report func(float64)) (*gguf.File, error)) (*Model, error) {
	start := time.Now()
	report := func(f float64) {
		if opt.Progress != nil {
			opt.Progress(f)
		}
	}
	report(0)
	f, err := open(report)
	if err != nil {
		return nil, fmt.Errorf("engine: load %s: %w", name, err)
	}
	m, err := build(ctx, f, name, opt)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("engine: load %s: %w", name, err)
	}
	m.loadDur = time.Since(start)
	report(1)
	return m, nil
}

func readInMemory(ctx context.Context, path string, report func(float64)) (*gguf.File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > math.MaxInt {
		return nil, fmt.Errorf("file of %d bytes is too large for this platform", st.Size())
	}
	buf, release := hugemem.AllocFile(fh, int(st.Size()))
	parsed := false
	defer func() {
		if !parsed && release != nil {
			release()
		}
	}()
	const chunk = 64 << 20
	for off := 0; off < len(buf); {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, err := fh.ReadAt(buf[off:min(len(buf), off+chunk)], int64(off))
		off += n
		if err != nil && off < len(buf) {
			return nil, fmt.Errorf("read: %w", err)
		}
		report(0.9 * float64(off) / float64(len(buf)))
	}
	f, err := gguf.ParseOwned(buf, release)
	parsed = err == nil
	return f, err
}

func build(ctx context.Context, f *gguf.File, path string, opt LoadOptions) (*Model, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	net, tok, err := interpret(f)
	if err != nil {
		return nil, err
	}
	m := &Model{path: path, file: f, net: net, tok: tok}
	if src, ok := f.String("tokenizer.chat_template"); ok && src != "" {
		t, err := chat.Parse(src)
		if err != nil {
			// A broken template must not make the model unusable: fall back
			// and say so in Info (HasTemplate stays true, Template reports it).
			m.tmpl = chat.Fallback()
			m.info.HasTemplate = true
			m.tmplErr = fmt.Errorf("chat template: %w", err)
		} else {
			m.tmpl = t
			m.info.HasTemplate = true
		}
	} else {
		m.tmpl = chat.Fallback()
	}
	if opt.Lock {
		if err := lockWeights(f); err != nil {
			return nil, err
		}
		m.locked = true
	}
	m.onFallback = opt.OnFallback
	if err := m.place(opt); err != nil {
		return nil, err
	}
	m.describe()
	return m, nil
}

// interpret builds the network and tokenizer a parsed file describes:
// everything Load checks about a file short of placing its weights.
func interpret(f *gguf.File) (arch.Model, *tokenizer.Tokenizer, error) {
	net, err := arch.Build(f)
	if err != nil {
		return nil, nil, err
	}
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		return nil, nil, err
	}
	if cfg := net.Config(); tok.VocabSize() != cfg.Vocab {
		return nil, nil, fmt.Errorf("tokenizer has %d tokens but the embedding has %d rows", tok.VocabSize(), cfg.Vocab)
	}
	return net, tok, nil
}

// Check reports whether Load would accept the file at path — its format
// and extents (a truncated download fails with gguf.ErrTruncated), its
// architecture (arch.ErrUnknownArchitecture), its tensors and tokenizer —
// without placing the weights on a device. The file is mapped, not read,
// so Check is cheap: the session calls it before unloading a working
// model for another, so that a bad file never costs the good one.
func Check(path string) error {
	f, err := gguf.Open(path)
	if err != nil {
		return fmt.Errorf("engine: %w", err) // gguf's error names the file
	}
	defer f.Close()
	if _, _, err := interpret(f); err != nil {
		return fmt.Errorf("engine: load %s: %w", path, err)
	}
	return nil
}

func (m *Model) describe() {
	f, cfg := m.file, m.net.Config()
	in := &m.info
	in.Path = m.path
	in.Name, _ = f.String("general.name")
	if in.Name == "" {
		in.Name = baseName(m.path)
	}
	in.Architecture = cfg.Arch
	in.ContextLength = cfg.Context
	in.Layers, in.Embedding, in.Heads, in.KVHeads, in.VocabSize = cfg.Layers, cfg.Embd, cfg.Heads, cfg.KVHeads, cfg.Vocab
	in.Experts, in.ExpertsUsed = cfg.Experts, cfg.ExpertsUsed
	in.QuantMix = map[string]int{}
	for _, t := range f.Tensors {
		in.Parameters += int64(t.Elements())
		in.QuantMix[t.Type.String()]++
		in.WeightBytes += int64(t.Size)
	}
	in.FileType = f.FileType()
	if st, err := os.Stat(m.path); err == nil {
		in.FileBytes = st.Size()
	}
	in.Threads = m.cpu.Threads()
	m.describePlan()
}

func baseName(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' || p[i] == '\\' {
			return p[i+1:]
		}
	}
	return p
}

// Info describes the model.
func (m *Model) Info() Info {
	m.infoMu.Lock()
	in := m.info
	in.DeviceNotes = append([]string(nil), m.info.DeviceNotes...)
	m.infoMu.Unlock()
	in.QuantMix = make(map[string]int, len(m.info.QuantMix))
	for k, v := range m.info.QuantMix {
		in.QuantMix[k] = v
	}
	return in
}

// QuantMixString formats the tensor-type mix, largest count first.
func (in Info) QuantMixString() string {
	type kv struct {
		k string
		v int
	}
	var all []kv
	for k, v := range in.QuantMix {
		all = append(all, kv{k, v})
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].v != all[j].v {
			return all[i].v > all[j].v
		}
		return all[i].k < all[j].k
	})
	s := ""
	for i, e := range all {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s×%d", e.k, e.v)
	}
	return s
}

// LoadDuration is how long Load took.
func (m *Model) LoadDuration() time.Duration { return m.loadDur }

// Tokenizer returns the model's tokenizer.
func (m *Model) Tokenizer() *tokenizer.Tokenizer { return m.tok }

// Template returns the model's chat template, or the fallback when the
// file has none (or its template does not parse; see TemplateError).
func (m *Model) Template() *chat.Template { return m.tmpl }

// TemplateError says why the file's template was not used, or nil.
func (m *Model) TemplateError() error { return m.tmplErr }

// Config is the architecture's shape.
func (m *Model) Config() arch.Config { return *m.net.Config() }

// Close releases the model's memory and threads. Sequences made from it
// must not be used afterwards.
func (m *Model) Close() error {
	if m.file == nil {
		return nil
	}
	m.exec.Lock()
	m.closed = true
	m.scratch.Release()
	if m.accel != nil {
		m.accel.Close()
		m.accel = nil
	}
	m.cpu.Close()
	m.exec.Unlock()
	if m.locked {
		unlockWeights(m.file)
	}
	err := m.file.Close()
	m.file = nil
	return err
}
