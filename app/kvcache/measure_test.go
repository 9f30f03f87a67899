package kvcache

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/churon/churon/engine"
	"github.com/churon/churon/internal/testutil"
)

// TestMeasure reports snapshot size and Save/Load times for a long
// conversation on a real-sized model, and the model's Identity time; then
// those of a follow-up: the Save that appends its tokens, the same state
// written whole (what every Save cost before snapshots were appended to)
// and the Load of the appended file. It runs only when
// CHURON_KV_MEASURE_MODEL names a GGUF, e.g. one made by
// `churon dev synth --shape qwen2.5-0.5b --type Q4_0 --vocab 32000 -o /tmp/q05.gguf`;
// CHURON_KV_MEASURE_TOKENS sets the length (default 2000) and
// CHURON_KV_MEASURE_FOLLOWUP the follow-up's (default 100).
func TestMeasure(t *testing.T) {
	path := measureModelPath(t, "snapshots")
	n := envCount(t, "CHURON_KV_MEASURE_TOKENS", 2000)
	follow := envCount(t, "CHURON_KV_MEASURE_FOLLOWUP", 100)
	ctx := context.Background()
	m := loadThreads(t, path, 0) // the engine's default, as the app runs it
	t0 := time.Now()
	id := m.Identity()
	idDur := time.Since(t0)
	t0 = time.Now()
	m.Identity()
	t.Logf("model %s: Identity %v first call, %v cached (%v)", filepath.Base(path), idDur, time.Since(t0), id)

	for _, kvt := range []engine.KVType{engine.KVF16, engine.KVQ8_0} {
		opt := engine.SequenceOptions{Context: n + follow + 64, KVType: kvt}
		seq := fed(t, m, opt, testutil.Tokens(n, m.Info().VocabSize, 1))
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

		// The follow-up, measured 5 times (the median is reported: the
		// disk's sync times vary): the state of n tokens saved, then the
		// one of n+follow appended; the latter also written whole, as
		// every Save was before snapshots were appended to; and the
		// appended file loaded.
		next, err := m.ReadSnapshot(bytes.NewReader(buf.Bytes()), opt)
		if err != nil {
			t.Fatal(err)
		}
		if err := next.Feed(ctx, testutil.Tokens(follow, m.Info().VocabSize, 2)); err != nil {
			t.Fatal(err)
		}
		var app, whole, ld2 []time.Duration
		var w, w2 Written
		for i := range 5 {
			if _, err := st.Put(fmt.Sprint("a-", i), seq); err != nil {
				t.Fatal(err)
			}
			t0 = time.Now()
			if w, err = st.Put(fmt.Sprint("a-", i), next); err != nil || w.Kind != Appended {
				t.Fatal(w, err)
			}
			app = append(app, time.Since(t0))
			t0 = time.Now()
			if w2, err = st.Put(fmt.Sprint("w-", i), next); err != nil || w2.Kind != Created {
				t.Fatal(w2, err)
			}
			whole = append(whole, time.Since(t0))
			t0 = time.Now()
			got, err := st.Load(ctx, fmt.Sprint("a-", i), m, opt)
			if err != nil {
				t.Fatal(err)
			}
			ld2 = append(ld2, time.Since(t0))
			if !same(got.Logits(), next.Logits()) || got.Len() != next.Len() {
				t.Fatal("restored logits differ after the follow-up")
			}
		}
		t.Logf("%v KV, follow-up of %d tokens after %d: Save %v (median of 5; %v), %.2f MiB written (%v), file %.1f MiB; written whole: %v (%v), %.1f MiB; Load of the appended file %v (%v)",
			kvt, follow, n, median(app), app, float64(w.Bytes)/(1<<20), w.Kind, float64(w.Size)/(1<<20),
			median(whole), whole, float64(w2.Bytes)/(1<<20), median(ld2), ld2)
	}
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// measureModelPath is the GGUF that $CHURON_KV_MEASURE_MODEL names, for
// the measurements on a real-sized model (TestMeasure, BenchmarkLoad); tb
// is skipped when it names none, saying that it would measure what.
func measureModelPath(tb testing.TB, what string) string {
	tb.Helper()
	path := os.Getenv("CHURON_KV_MEASURE_MODEL")
	if path == "" {
		tb.Skip("SKIP: set CHURON_KV_MEASURE_MODEL to a GGUF to measure " + what + " of a real-sized model")
	}
	return path
}

// envCount is the whole number in environment variable name, def when it
// is unset.
func envCount(tb testing.TB, name string, def int) int {
	tb.Helper()
	n := def
	if v := os.Getenv(name); v != "" {
		if _, err := fmt.Sscan(v, &n); err != nil {
			tb.Fatalf("$%s: %v", name, err)
		}
	}
	return n
}
