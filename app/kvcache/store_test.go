package kvcache

import (
	"bytes"
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/churon/churon/app/paths"
	"github.com/churon/churon/engine"
	"github.com/churon/churon/engine/quant"
	"github.com/churon/churon/internal/testdata"
	"github.com/churon/churon/internal/testutil"
	"github.com/churon/churon/models/synth"
)

func model(t testing.TB, s synth.Spec) *engine.Model {
	t.Helper()
	p := filepath.Join(t.TempDir(), "m.gguf")
	if err := synth.Write(p, s); err != nil {
		t.Fatal(err)
	}
	return load(t, p)
}

func load(t testing.TB, path string) *engine.Model {
	t.Helper()
	return loadThreads(t, path, 2)
}

// loadThreads loads the model at path on threads CPU threads (0: the
// engine's default, one per physical core), until the end of t.
func loadThreads(t testing.TB, path string, threads int) *engine.Model {
	t.Helper()
	m, err := engine.Load(context.Background(), path, engine.LoadOptions{Threads: threads})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func fed(t testing.TB, m *engine.Model, opt engine.SequenceOptions, ids []int32) *engine.Sequence {
	t.Helper()
	s, err := m.NewSequence(opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Feed(context.Background(), ids); err != nil {
		t.Fatal(err)
	}
	return s
}

func open(t testing.TB, budget int64) *Store {
	t.Helper()
	st, err := Open(filepath.Join(t.TempDir(), "kv"), budget)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// continuesAlike feeds more to a restored sequence and to the one it
// was saved from, and fails unless both then give bit-identical logits:
// a snapshot must hold everything the computation goes on from.
func continuesAlike(t testing.TB, orig, restored *engine.Sequence, more []int32) {
	t.Helper()
	for _, s := range []*engine.Sequence{orig, restored} {
		if err := s.Feed(context.Background(), more); err != nil {
			t.Fatal(err)
		}
	}
	if !same(restored.Logits(), orig.Logits()) {
		t.Fatalf("after %d more tokens, the restored sequence's logits differ from the original's", len(more))
	}
}

func same(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// TestRoundTrip: on a synthetic model and on stories260K, a loaded
// snapshot continues exactly as the saved sequence does.
func TestRoundTrip(t *testing.T) {
	q8 := synth.Tiny("qwen2")
	q8.Type = quant.Q8_0
	models := map[string]func(t *testing.T) *engine.Model{
		"qwen2-Q8_0": func(t *testing.T) *engine.Model { return model(t, q8) },
		"stories260K": func(t *testing.T) *engine.Model {
			return load(t, testdata.Stories260K(t))
		},
	}
	ctx := context.Background()
	for name, mk := range models {
		t.Run(name, func(t *testing.T) {
			m := mk(t)
			st := open(t, 0)
			opt := engine.SequenceOptions{Context: 96}
			vocab := m.Info().VocabSize
			orig := fed(t, m, opt, testutil.Tokens(50, vocab, 1))
			n, err := st.Save("conv-1", orig)
			if err != nil {
				t.Fatal(err)
			}
			if n != orig.SnapshotSize() {
				t.Errorf("Save says %d bytes, the snapshot has %d", n, orig.SnapshotSize())
			}
			e, ok := st.Stat("conv-1")
			if !ok || e.Bytes != n || e.Tokens != 50 || e.Identity != orig.Identity() || time.Since(e.Modified) > time.Minute {
				t.Fatalf("Stat %+v %v", e, ok)
			}
			got, err := st.Load(ctx, "conv-1", m, opt)
			if err != nil {
				t.Fatal(err)
			}
			if !same(got.Logits(), orig.Logits()) {
				t.Fatal("restored logits differ")
			}
			continuesAlike(t, orig, got, testutil.Tokens(9, vocab, 2))
			if files, bytes := st.Usage(); files != 1 || bytes != n {
				t.Errorf("usage %d files %d bytes", files, bytes)
			}
		})
	}
}

// TestModelSwap: a snapshot of model A loaded with model B is discarded
// and deleted; A's own snapshot still loads after B's replaces nothing.
func TestModelSwap(t *testing.T) {
	spec := synth.Tiny("llama")
	a := model(t, spec)
	spec.Seed = 5
	b := model(t, spec)
	st := open(t, 0)
	opt := engine.SequenceOptions{Context: 32}
	if _, err := st.Save("conv-a", fed(t, a, opt, testutil.Tokens(10, 320, 1))); err != nil {
		t.Fatal(err)
	}
	_, err := st.Load(context.Background(), "conv-a", b, opt)
	if !errors.Is(err, ErrDiscarded) || !errors.Is(err, engine.ErrSnapshotMismatch) {
		t.Fatalf("%v, want a discarded mismatch", err)
	}
	t.Log(err)
	if _, ok := st.Stat("conv-a"); ok {
		t.Error("the mismatching snapshot is still there")
	}
	if _, err := st.Load(context.Background(), "conv-a", a, opt); !errors.Is(err, ErrNotFound) {
		t.Errorf("after discard: %v, want ErrNotFound", err)
	}
}

// TestOptionsMismatch: another context or KV type is a mismatch too.
func TestOptionsMismatch(t *testing.T) {
	m := model(t, synth.Tiny("llama"))
	st := open(t, 0)
	opt := engine.SequenceOptions{Context: 32}
	for _, other := range []engine.SequenceOptions{{Context: 33}, {Context: 32, KVType: engine.KVQ8_0}} {
		if _, err := st.Save("k", fed(t, m, opt, testutil.Tokens(4, 320, 1))); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Load(context.Background(), "k", m, other); !errors.Is(err, ErrDiscarded) {
			t.Errorf("%+v: %v", other, err)
		}
	}
}

// TestDamaged: truncated and bit-flipped files are discarded (deleted),
// never loaded, never a panic.
func TestDamaged(t *testing.T) {
	m := model(t, synth.Tiny("llama"))
	st := open(t, 0)
	opt := engine.SequenceOptions{Context: 32}
	seq := fed(t, m, opt, testutil.Tokens(12, 320, 1))
	if _, err := st.Save("good", seq); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(filepath.Join(st.Dir(), "good.kv"))
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(4, 4))
	try := func(what string, data []byte) {
		t.Helper()
		p := filepath.Join(st.Dir(), "bad.kv")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := st.Load(context.Background(), "bad", m, opt)
		if s != nil || !errors.Is(err, ErrDiscarded) {
			t.Fatalf("%s: %v", what, err)
		}
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s: file not deleted", what)
		}
	}
	for _, n := range []int{0, 1, 15, 16, 50, len(good) / 3, len(good) / 2, len(good) - 5, len(good) - 1} {
		try("truncated", good[:n])
	}
	for range 40 {
		d := bytes.Clone(good)
		d[r.IntN(len(d))] ^= 1 << r.IntN(8)
		try("bit flip", d)
	}
	try("text", []byte("hello, this is not a snapshot"))
	if _, err := st.Load(context.Background(), "good", m, opt); err != nil {
		t.Fatal(err)
	}
}

// TestEviction: over budget, the least recently saved or loaded go first.
func TestEviction(t *testing.T) {
	m := model(t, synth.Tiny("llama"))
	opt := engine.SequenceOptions{Context: 32}
	seq := fed(t, m, opt, testutil.Tokens(20, 320, 1))
	size := seq.SnapshotSize()
	st := open(t, 3*size) // room for three
	old := time.Now().Add(-time.Hour)
	for i, k := range []string{"a", "b", "c"} {
		if _, err := st.Save(k, seq); err != nil {
			t.Fatal(err)
		}
		// Distinct, ordered times whatever the file system's resolution.
		at := old.Add(time.Duration(i) * time.Minute)
		os.Chtimes(filepath.Join(st.Dir(), k+ext), at, at)
	}
	if _, err := st.Load(context.Background(), "a", m, opt); err != nil { // a is now the newest
		t.Fatal(err)
	}
	if _, err := st.Save("d", seq); err != nil { // evicts b, the oldest
		t.Fatal(err)
	}
	has := func(k string) bool { _, ok := st.Stat(k); return ok }
	if has("b") || !has("a") || !has("c") || !has("d") {
		t.Fatalf("after d: a %v b %v c %v d %v", has("a"), has("b"), has("c"), has("d"))
	}
	st.SetBudget(size + size/2) // keeps only the newest: d (just saved) vs a (loaded an hour later than c)
	if files, bytes := st.Usage(); files != 1 || bytes != size || !has("d") {
		t.Fatalf("after SetBudget: %d files %d bytes, d %v", files, bytes, has("d"))
	}
	if _, err := st.Save("huge", fed(t, m, engine.SequenceOptions{Context: 64}, testutil.Tokens(60, 320, 2))); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a snapshot over the whole budget: %v", err)
	}
	if !has("d") || has("huge") {
		t.Error("ErrTooLarge changed the folder")
	}
	// Reopening with a smaller budget evicts at once.
	st2, err := Open(st.Dir(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if files, _ := st2.Usage(); files != 0 {
		t.Errorf("reopened with budget 1: %d files", files)
	}
}

func TestClearAndDelete(t *testing.T) {
	m := model(t, synth.Tiny("llama"))
	st := open(t, 0)
	seq := fed(t, m, engine.SequenceOptions{Context: 32}, testutil.Tokens(3, 320, 1))
	for _, k := range []string{"conv-1", "conv-2", "conv-3"} {
		if _, err := st.Save(k, seq); err != nil {
			t.Fatal(err)
		}
	}
	// Files that are not snapshots are left alone.
	other := filepath.Join(st.Dir(), "README")
	os.WriteFile(other, []byte("x"), 0o600)
	if err := st.Delete("conv-2"); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete("conv-2"); err != nil {
		t.Errorf("deleting a missing key: %v", err)
	}
	if files, _ := st.Usage(); files != 2 {
		t.Fatalf("%d files after Delete", files)
	}
	if keys, err := st.Keys(); err != nil || !slices.Equal(keys, []string{"conv-1", "conv-3"}) {
		t.Fatalf("Keys() = %q, %v; want conv-1 and conv-3 (README is no snapshot)", keys, err)
	}
	if err := st.Clear(); err != nil {
		t.Fatal(err)
	}
	if files, bytes := st.Usage(); files != 0 || bytes != 0 {
		t.Fatalf("after Clear: %d files, %d bytes", files, bytes)
	}
	if st.Budget() != DefaultBudget {
		t.Errorf("Open(dir, 0) gives a budget of %d", st.Budget())
	}
	st.SetBudget(-1)
	if st.Budget() != -1 {
		t.Errorf("no limit: budget %d", st.Budget())
	}
	if _, err := os.Stat(other); err != nil {
		t.Error("Clear removed a file that is not a snapshot")
	}
	// The folder itself removed by hand: Save makes it again.
	os.RemoveAll(st.Dir())
	if _, err := st.Save("conv-1", seq); err != nil {
		t.Fatal(err)
	}
}

func TestBadKeys(t *testing.T) {
	m := model(t, synth.Tiny("llama"))
	st := open(t, 0)
	seq, _ := m.NewSequence(engine.SequenceOptions{Context: 8})
	for _, k := range []string{"", ".hidden", "../escape", "a/b", `a\b`, strings.Repeat("x", 129), "space here", "ü"} {
		if _, err := st.Save(k, seq); !errors.Is(err, ErrBadKey) {
			t.Errorf("Save(%q): %v", k, err)
		}
		if _, err := st.Load(context.Background(), k, m, engine.SequenceOptions{}); !errors.Is(err, ErrBadKey) {
			t.Errorf("Load(%q): %v", k, err)
		}
	}
	if _, err := st.Load(context.Background(), "conv-9", m, engine.SequenceOptions{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing: %v", err)
	}
}

// TestTempFiles: Open removes a temporary file a killed writer left, but
// not one a live writer holds (locked), nor a fresh one.
func TestTempFiles(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-2 * time.Hour)
	dead := filepath.Join(dir, tmpPrefix+"conv-1-123")
	os.WriteFile(dead, []byte("half a snap"), 0o600)
	os.Chtimes(dead, old, old)
	fresh := filepath.Join(dir, tmpPrefix+"conv-2-456")
	os.WriteFile(fresh, []byte("being written"), 0o600)
	live := filepath.Join(dir, tmpPrefix+"conv-3-789")
	f, err := os.Create(live)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := lockFile(f); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(live, old, old)
	st, err := Open(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	if exists(dead) || !exists(fresh) {
		t.Errorf("dead temp file kept %v, fresh one removed %v", exists(dead), !exists(fresh))
	}
	if canLock && !exists(live) {
		t.Error("a live writer's temp file was removed")
	}
	if files, _ := st.Usage(); files != 0 {
		t.Errorf("temp files counted as snapshots: %d", files)
	}
}

// TestConcurrent: goroutines saving, loading and stating the same keys
// see whole snapshots only.
func TestConcurrent(t *testing.T) {
	m := model(t, synth.Tiny("llama"))
	st := open(t, 0)
	opt := engine.SequenceOptions{Context: 32}
	seqs := []*engine.Sequence{fed(t, m, opt, testutil.Tokens(5, 320, 1)), fed(t, m, opt, testutil.Tokens(9, 320, 2))}
	testutil.Concurrently(t, 4, 10, func(g, i int) error {
		if g%2 == 0 {
			_, err := st.Save("shared", seqs[(g+i)%2])
			return err
		}
		s, err := st.Load(context.Background(), "shared", m, opt)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if n := s.Len(); n != 5 && n != 9 {
			return errors.New("a sequence of neither snapshot")
		}
		st.Stat("shared")
		return nil
	})
}

func TestLoadCancelled(t *testing.T) {
	m := model(t, synth.Tiny("llama"))
	st := open(t, 0)
	opt := engine.SequenceOptions{Context: 32}
	if _, err := st.Save("k", fed(t, m, opt, testutil.Tokens(5, 320, 1))); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := st.Load(ctx, "k", m, opt); !errors.Is(err, context.Canceled) {
		t.Fatalf("%v", err)
	}
	if _, ok := st.Stat("k"); !ok {
		t.Fatal("a cancelled load deleted the snapshot")
	}
}

func TestDefaultDir(t *testing.T) {
	home := t.TempDir()
	t.Setenv(paths.EnvHome, home)
	if got, want := DefaultDir(), filepath.Join(home, "cache", "kv"); got != want {
		t.Errorf("DefaultDir %q, want %q", got, want)
	}
}
