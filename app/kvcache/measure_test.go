package kvcache

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/churon/churon/engine"
)

// TestMeasure reports snapshot size and Save/Load times for a long
// conversation on a real-sized model, and the model's Identity time. It
// runs only when CHURON_KV_MEASURE_MODEL names a GGUF, e.g. one made by
// `churon dev synth --shape qwen2.5-0.5b --type Q4_0 --vocab 32000 -o /tmp/q05.gguf`;
// CHURON_KV_MEASURE_TOKENS sets the length (default 2000).
func TestMeasure(t *testing.T) {
	path := os.Getenv("CHURON_KV_MEASURE_MODEL")
	if path == "" {
		t.Skip("SKIP: set CHURON_KV_MEASURE_MODEL to a GGUF to measure snapshots of a real-sized model")
	}
	n := 2000
	if v := os.Getenv("CHURON_KV_MEASURE_TOKENS"); v != "" {
		if _, err := fmt.Sscan(v, &n); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	m, err := engine.Load(ctx, path, engine.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	t0 := time.Now()
	id := m.Identity()
	idDur := time.Since(t0)
	t0 = time.Now()
	m.Identity()
	t.Logf("model %s: Identity %v first call, %v cached (%v)", filepath.Base(path), idDur, time.Since(t0), id)

	for _, kvt := range []engine.KVType{engine.KVF16, engine.KVQ8_0} {
		opt := engine.SequenceOptions{Context: n + 64, KVType: kvt}
		seq := fed(t, m, opt, toks(n, m.Info().VocabSize, 1))
		st := open(t, 0)
		t0 = time.Now()
		size, err := st.Save("conv-1", seq)
		if err != nil {
			t.Fatal(err)
		}
		save := time.Since(t0)
		t0 = time.Now()
		got, err := st.Load(ctx, "conv-1", m, opt)
		if err != nil {
			t.Fatal(err)
		}
		ld := time.Since(t0)
		if !same(got.Logits(), seq.Logits()) {
			t.Fatal("restored logits differ")
		}
		var buf bytes.Buffer
		buf.Grow(int(size))
		t0 = time.Now()
		if err := seq.WriteSnapshot(&buf); err != nil {
			t.Fatal(err)
		}
		wmem := time.Since(t0)
		t0 = time.Now()
		if _, err := m.ReadSnapshot(bytes.NewReader(buf.Bytes()), opt); err != nil {
			t.Fatal(err)
		}
		rmem := time.Since(t0)
		t.Logf("%v KV in memory: WriteSnapshot %v, ReadSnapshot %v", kvt, wmem, rmem)
		t.Logf("%v KV, %d tokens: snapshot %.1f MiB (%.1f KiB/token); Save %v (%.0f MiB/s, with fsync), Load %v (%.0f MiB/s)",
			kvt, n, float64(size)/(1<<20), float64(size)/1024/float64(n), save, float64(size)/(1<<20)/save.Seconds(),
			ld, float64(size)/(1<<20)/ld.Seconds())
	}
}
