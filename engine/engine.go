package engine

import (
	"context"
	"errors"
	"fmt"
	"github.com/churon/churon/internal/hugemem"
	"math"
	"os"
	"sort"
	"time"

	"github.com/churon/churon/engine/arch"
	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/backend/cpu"
	"github.com/churon/churon/engine/chat"
	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/engine/tokenizer"
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
}

// Model is a loaded model: immutable weights, tokenizer and chat template.
// It is safe for concurrent use; each Sequence is used by one goroutine.
type Model struct {
	path    string
	file    *gguf.File
	net     arch.Model
	tok     *tokenizer.Tokenizer
	tmpl    *chat.Template
	be      *cpu.Backend
	info    Info
	tmplErr error
	loadDur time.Duration
	locked  bool          // weights pinned with mlock (LoadOptions.Lock)
	ident   identityCache // Identity, computed on first use (snapshot.go)
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
	VocabSize     int
	HasTemplate   bool // the file carries tokenizer.chat_template
	FileBytes     int64
	WeightBytes   int64
	Backend       string
	Threads       int
}

// Load opens a GGUF model. It validates the file, builds the architecture
// and tokenizer, and can be cancelled through ctx.
func Load(ctx context.Context, path string, opt LoadOptions) (*Model, error) {
	start := time.Now()
	report := func(f float64) {
		if opt.Progress != nil {
			opt.Progress(f)
		}
	}
	report(0)
	var (
		f   *gguf.File
		err error
	)
	if opt.InMemory {
		f, err = readInMemory(ctx, path, report)
	} else {
		f, err = gguf.Open(path)
	}
	if err != nil {
		return nil, fmt.Errorf("engine: load %s: %w", path, err)
	}
	m, err := build(ctx, f, path, opt)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("engine: load %s: %w", path, err)
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
	buf, release := hugemem.Alloc(int(st.Size()))
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
	net, err := arch.Build(f)
	if err != nil {
		return nil, err
	}
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		return nil, err
	}
	cfg := net.Config()
	if tok.VocabSize() != cfg.Vocab {
		return nil, fmt.Errorf("tokenizer has %d tokens but the embedding has %d rows", tok.VocabSize(), cfg.Vocab)
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
	threads := opt.Threads
	if threads <= 0 {
		threads = cpu.DefaultThreads()
	}
	if opt.Lock {
		if err := lockWeights(f); err != nil {
			return nil, err
		}
		m.locked = true
	}
	m.be = cpu.New(threads)
	m.describe()
	return m, nil
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
	in.Backend = m.be.Name()
	in.Threads = m.be.Threads()
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
	in := m.info
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

// Backend is the compute backend in use.
func (m *Model) Backend() backend.Backend { return m.be }

// Close releases the model's memory and threads. Sequences made from it
// must not be used afterwards.
func (m *Model) Close() error {
	if m.file == nil {
		return nil
	}
	m.be.Close()
	if m.locked {
		unlockWeights(m.file)
	}
	err := m.file.Close()
	m.file = nil
	return err
}

// ErrClosed is returned when a closed model or sequence is used.
var ErrClosed = errors.New("engine: closed")
