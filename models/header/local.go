package header

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/churon/churon/engine/arch"
	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/models/fit"
)

// Describe reads a parsed header. It never fails: missing keys leave
// fields zero (or at the defaults llama.cpp would use).
func Describe(f *gguf.File) fit.Meta {
	m := fit.Meta{Architecture: f.Architecture(), FileBytes: f.Size(), HeaderBytes: int64(f.HeaderSize())}
	m.Name, _ = f.String("general.name")
	a := m.Architecture
	geti := func(key string, def int) int {
		if v, ok := f.Uint(a + "." + key); ok && v < 1<<31 {
			return int(v)
		}
		// Some models store one value per layer: take the largest.
		if vs, ok := f.Int32s(a + "." + key); ok && len(vs) > 0 {
			mx := 0
			for _, v := range vs {
				mx = max(mx, int(v))
			}
			return mx
		}
		return def
	}
	m.ContextLength = geti("context_length", 2048)
	m.Layers = geti("block_count", 0)
	m.Embedding = geti("embedding_length", 0)
	m.Heads = geti("attention.head_count", 0)
	m.KVHeads = geti("attention.head_count_kv", m.Heads)
	def := 0
	if m.Heads > 0 {
		def = m.Embedding / m.Heads
	}
	m.HeadDimK = geti("attention.key_length", def)
	m.HeadDimV = geti("attention.value_length", m.HeadDimK)
	// Layers that keep a ring of KV rows: what the architecture reads as
	// a sliding window (a header it cannot read counts as none).
	if ws, err := arch.Windows(f); err == nil {
		for _, w := range ws {
			if w > 0 {
				m.SlidingWindow = max(m.SlidingWindow, w)
				m.WindowLayers++
			}
		}
	}
	// Layers with a recurrent state instead of KV rows. States covers the
	// trunk: multi-token-prediction layers stored after it (counted in
	// block_count) keep no cache, and are not what a model card calls its
	// layers either.
	if states, err := arch.States(f); err == nil && states != nil {
		m.Layers = len(states)
		for _, b := range states {
			if b > 0 {
				m.RecurrentLayers++
				m.StateBytes += int64(b)
			}
		}
	}
	_, m.HasTemplate = f.String("tokenizer.chat_template")
	if n, ok := f.Uint("split.count"); ok && n > 1 && n < 1<<16 {
		m.SplitCount = int(n)
	}
	for _, t := range f.Tensors {
		m.Parameters += int64(t.Elements())
		m.WeightBytes += int64(t.Size)
	}
	m.Quant = f.FileType()
	return m
}

// Local reads the header of a local GGUF file.
func Local(path string) (fit.Meta, error) {
	fd, err := os.Open(path)
	if err != nil {
		return fit.Meta{}, fmt.Errorf("fit: %w", err)
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return fit.Meta{}, fmt.Errorf("fit: %w", err)
	}
	// The header only: a multi-gigabyte file is neither mapped nor read.
	f, err := gguf.OpenReader(fd, st.Size())
	if err != nil {
		return fit.Meta{}, fmt.Errorf("fit: %s: %w", path, err)
	}
	m := Describe(f)
	if m.Name == "" {
		m.Name = strings.TrimSuffix(filepath.Base(path), ".gguf")
	}
	return m, nil
}
