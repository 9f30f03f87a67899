package kvcache

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/churon/churon/engine"
	"github.com/churon/churon/internal/testutil"
	"github.com/churon/churon/models/synth"
)

// canonical is the state of seq as one whole snapshot: equal bytes mean
// equal tokens, KV rows and logits.
func canonical(t testing.TB, seq *engine.Sequence) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := seq.WriteSnapshot(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func fileSize(t testing.TB, st *Store, key string) int64 {
	t.Helper()
	fi, err := os.Stat(filepath.Join(st.Dir(), key+ext))
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// mustLoad loads key and checks it holds exactly seq's state.
func mustLoad(t testing.TB, st *Store, key string, m *engine.Model, opt engine.SequenceOptions, seq *engine.Sequence) *engine.Sequence {
	t.Helper()
	got, err := st.Load(context.Background(), key, m, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(canonical(t, got), canonical(t, seq)) {
		t.Fatalf("%s: loaded %d tokens, not the saved state of %d", key, got.Len(), seq.Len())
	}
	return got
}

// saved is where the append tests start: a tiny model's sequence of n
// tokens in a context of 64, put under key "c" in a new store.
func saved(t testing.TB, n int) (*engine.Model, engine.SequenceOptions, *engine.Sequence, *Store) {
	t.Helper()
	m := model(t, synth.Tiny("llama"))
	opt := engine.SequenceOptions{Context: 64}
	seq := fed(t, m, opt, testutil.Tokens(n, 320, 1))
	st := open(t, 0)
	if _, err := st.Put("c", seq); err != nil {
		t.Fatal(err)
	}
	return m, opt, seq, st
}

// edit truncates seq to keep tokens (-1: all) and feeds n new ones.
func edit(t testing.TB, seq *engine.Sequence, keep, n int, seed uint64) {
	t.Helper()
	if keep >= 0 {
		if err := seq.Truncate(keep); err != nil {
			t.Fatal(err)
		}
	}
	if n > 0 {
		if err := seq.Feed(context.Background(), testutil.Tokens(n, 320, seed)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAppend: a conversation's saves append only what changed — a
// follow-up's new rows, an edit's tail, nothing when nothing changed —
// and after each the file loads to exactly the sequence's state, which
// continues as the original does.
func TestAppend(t *testing.T) {
	m := model(t, synth.Tiny("llama"))
	cfg := struct{ layers, rowBytes, vocab int }{2, 2 * 32, 320} // Tiny: 2 layers, KV width 32, F16
	opt := engine.SequenceOptions{Context: 128, Batch: 16}
	seq, _ := m.NewSequence(opt)
	st := open(t, 0)
	steps := []struct {
		name       string
		keep, feed int
		kind       WriteKind
		from       int // the segment's start, for Appended
	}{
		{"prompt", -1, 40, Created, 0},
		{"follow-up", -1, 8, Appended, 40},
		{"follow-up", -1, 5, Appended, 48},
		{"nothing new", -1, 0, Unchanged, 0},
		{"edit", 45, 6, Appended, 45},
		{"regenerate", 45, 6, Appended, 45},
		{"truncate only", 48, 0, Appended, 48},
		{"follow-up", -1, 12, Appended, 48},
		{"new start", 0, 20, Compacted, 0},
	}
	for i, s := range steps {
		edit(t, seq, s.keep, s.feed, uint64(10+i))
		before := int64(0)
		if i > 0 {
			before = fileSize(t, st, "c")
		}
		w, err := st.Put("c", seq)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		size := fileSize(t, st, "c")
		if w.Kind != s.kind || w.Size != size {
			t.Fatalf("%s: %+v (file %d bytes), want %v", s.name, w, size, s.kind)
		}
		switch s.kind {
		case Appended:
			// The format's own count: 28 bytes of segment head,
			// checksums and the count of recurrent states (none here) and
			// a first row per layer, the token ids, K and V rows per
			// layer, logits.
			n := seq.Len() - s.from
			want := int64(28 + 4*cfg.layers + 4*n + 2*cfg.layers*n*cfg.rowBytes + 4*cfg.vocab)
			if w.Bytes != want || size-before != want {
				t.Fatalf("%s: wrote %d bytes, the file grew by %d, want %d (the whole state is %d)",
					s.name, w.Bytes, size-before, want, seq.SnapshotSize())
			}
		case Unchanged:
			if w.Bytes != 0 || size != before {
				t.Fatalf("%s: %+v", s.name, w)
			}
		default:
			if w.Bytes != seq.SnapshotSize() || size != seq.SnapshotSize() {
				t.Fatalf("%s: %+v, the state's snapshot is %d", s.name, w, seq.SnapshotSize())
			}
		}
		t.Logf("%-13s %3d tokens: %-9v %6d bytes written, file %6d bytes", s.name, seq.Len(), w.Kind, w.Bytes, size)
		if e, ok := st.Stat("c"); !ok || e.Tokens != seq.Len() || e.Bytes != size || e.Identity != seq.Identity() {
			t.Fatalf("%s: Stat %+v", s.name, e)
		}
		// Loaded by this store and by another (another process).
		mustLoad(t, st, "c", m, opt, seq)
		other, err := Open(st.Dir(), 0)
		if err != nil {
			t.Fatal(err)
		}
		got := mustLoad(t, other, "c", m, opt, seq)
		if i == len(steps)-2 {
			// Fed on, the loaded sequence computes what the original does.
			orig, _ := m.ReadSnapshot(bytes.NewReader(canonical(t, seq)), opt)
			continuesAlike(t, orig, got, testutil.Tokens(7, 320, 99))
		}
	}
}

// TestCompaction: regenerating the end of an answer over and over appends
// a segment each time, until the file would pass twice the state's own
// snapshot: then it is written whole again, and loads the same.
func TestCompaction(t *testing.T) {
	m, opt, seq, st := saved(t, 30)
	compacted := 0
	for i := range 12 {
		edit(t, seq, 18, 12, uint64(20+i))
		w, err := st.Put("c", seq)
		if err != nil {
			t.Fatal(err)
		}
		size := fileSize(t, st, "c")
		if size > compactRatio*seq.SnapshotSize() {
			t.Fatalf("regeneration %d: file of %d bytes, the state's snapshot is %d", i, size, seq.SnapshotSize())
		}
		switch w.Kind {
		case Compacted:
			compacted++
			if size != seq.SnapshotSize() {
				t.Fatalf("compacted to %d bytes, want %d", size, seq.SnapshotSize())
			}
		case Appended:
		default:
			t.Fatalf("regeneration %d: %v", i, w.Kind)
		}
		got := mustLoad(t, st, "c", m, opt, seq)
		if w.Kind == Compacted {
			// Fed on, the loaded sequence computes what the original does.
			orig, _ := m.ReadSnapshot(bytes.NewReader(canonical(t, seq)), opt)
			continuesAlike(t, orig, got, testutil.Tokens(5, 320, 98))
		}
	}
	if compacted == 0 {
		t.Fatal("never compacted")
	}
	t.Logf("12 regenerations: %d compactions", compacted)
}

// TestTornTail: a follow-up's append cut at every byte (a process killed
// while writing it) loads as the state before it, exactly; the next Save
// cuts the torn bytes off and appends again, leaving the very file an
// uninterrupted save writes.
func TestTornTail(t *testing.T) {
	m, opt, seq, st := saved(t, 20)
	path := filepath.Join(st.Dir(), "c"+ext)
	first := canonical(t, seq)
	before, _ := m.ReadSnapshot(bytes.NewReader(first), opt)
	edit(t, seq, 17, 6, 2) // an edit: its rows overwrite the state's
	if w, err := st.Put("c", seq); err != nil || w.Kind != Appended {
		t.Fatalf("%+v %v", w, err)
	}
	full, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	base := len(first)
	for cut := base; cut < len(full); cut++ {
		if err := os.WriteFile(path, full[:cut], 0o600); err != nil {
			t.Fatal(err)
		}
		mustLoad(t, st, "c", m, opt, before)
		// The next Save repairs it; checked at some cuts (each syncs).
		if cut == base || cut == len(full)-1 || cut%97 == 0 {
			if e, ok := st.Stat("c"); !ok || e.Tokens != before.Len() {
				t.Fatalf("cut at %d: Stat %+v", cut, e)
			}
			w, err := st.Put("c", seq)
			if err != nil || w.Kind != Appended {
				t.Fatalf("cut at %d: %+v %v", cut, w, err)
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, full) {
				t.Fatalf("cut at %d: repaired into another file", cut)
			}
			mustLoad(t, st, "c", m, opt, seq)
		}
	}
}

// TestEarlierSegmentDamaged: a flipped bit in a segment that others follow
// cannot be a torn append: the file is discarded and deleted.
func TestEarlierSegmentDamaged(t *testing.T) {
	m, opt, seq, st := saved(t, 10)
	path := filepath.Join(st.Dir(), "c"+ext)
	firstEnd := int(fileSize(t, st, "c"))
	hdr := int(seq.SnapshotHeaderSize())
	edit(t, seq, -1, 4, 2)
	if _, err := st.Put("c", seq); err != nil {
		t.Fatal(err)
	}
	edit(t, seq, -1, 3, 3)
	if _, err := st.Put("c", seq); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(path)
	for _, i := range []int{hdr, hdr + 5, hdr + 13, hdr + 20, hdr + 60, firstEnd - 700, firstEnd - 5, firstEnd - 1, firstEnd + 2, firstEnd + 40} {
		d := bytes.Clone(good)
		d[i] ^= 0x10
		if err := os.WriteFile(path, d, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := st.Load(context.Background(), "c", m, opt)
		if s != nil || !errors.Is(err, ErrDiscarded) || !errors.Is(err, engine.ErrSnapshotCorrupt) {
			t.Fatalf("flip at %d: %v", i, err)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("flip at %d: not deleted", i)
		}
		// The next Save writes it whole.
		if w, err := st.Put("c", seq); err != nil || w.Kind != Created {
			t.Fatalf("after the discard: %+v %v", w, err)
		}
		if err := os.WriteFile(path, good, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOtherProcess: two stores over one folder (two processes) take turns
// on one conversation — a follow-up, an edit, a compaction — and each
// appends on what the file holds now, not on what it last saw.
func TestOtherProcess(t *testing.T) {
	m := model(t, synth.Tiny("llama"))
	opt := engine.SequenceOptions{Context: 96}
	a := open(t, 0)
	b, err := Open(a.Dir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	seqA := fed(t, m, opt, testutil.Tokens(20, 320, 1))
	if _, err := a.Put("c", seqA); err != nil {
		t.Fatal(err)
	}
	// b: loads it, answers an edited message (cut at 12), saves.
	seqB := mustLoad(t, b, "c", m, opt, seqA)
	edit(t, seqB, 12, 9, 2)
	if w, err := b.Put("c", seqB); err != nil || w.Kind != Appended {
		t.Fatalf("b: %+v %v", w, err)
	}
	// a: still on its own history, which b cut at 12: its follow-up
	// must cut there too, not append after position 20.
	edit(t, seqA, -1, 5, 3)
	w, err := a.Put("c", seqA)
	if err != nil || w.Kind != Appended || w.Bytes != seqA.SnapshotSegmentSize(12, nil) {
		t.Fatalf("a: %+v %v, want a segment from 12 of %d bytes", w, err, seqA.SnapshotSegmentSize(12, nil))
	}
	mustLoad(t, b, "c", m, opt, seqA)
	// b: a new start compacts (a rename); a appends to the new file.
	seqB = fed(t, m, opt, testutil.Tokens(15, 320, 4))
	if w, err := b.Put("c", seqB); err != nil || w.Kind != Compacted {
		t.Fatalf("b: %+v %v", w, err)
	}
	edit(t, seqB, -1, 4, 5)
	if w, err := a.Put("c", seqB); err != nil || w.Kind != Appended || w.Bytes != seqB.SnapshotSegmentSize(15, nil) {
		t.Fatalf("a after b's compaction: %+v %v", w, err)
	}
	mustLoad(t, a, "c", m, opt, seqB)
	mustLoad(t, b, "c", m, opt, seqB)
}

// TestConcurrentAppends: goroutines saving two histories that share a
// prefix (so saves append and cut) while others load: every load is
// exactly one of the two states.
func TestConcurrentAppends(t *testing.T) {
	m := model(t, synth.Tiny("llama"))
	opt := engine.SequenceOptions{Context: 48}
	base := testutil.Tokens(12, 320, 1)
	sa := fed(t, m, opt, append(append([]int32(nil), base...), testutil.Tokens(5, 320, 2)...))
	sb := fed(t, m, opt, append(append([]int32(nil), base[:8]...), testutil.Tokens(4, 320, 3)...))
	want := [][]byte{canonical(t, sa), canonical(t, sb)}
	st := open(t, 0)
	if _, err := st.Put("shared", sa); err != nil {
		t.Fatal(err)
	}
	testutil.Concurrently(t, 4, 12, func(g, i int) error {
		if g%2 == 0 {
			_, err := st.Put("shared", []*engine.Sequence{sa, sb}[(g/2+i)%2])
			return err
		}
		s, err := st.Load(context.Background(), "shared", m, opt)
		if err != nil {
			return err
		}
		var b bytes.Buffer
		if err := s.WriteSnapshot(&b); err != nil {
			return err
		}
		if !bytes.Equal(b.Bytes(), want[0]) && !bytes.Equal(b.Bytes(), want[1]) {
			return errors.New("loaded a state of neither history")
		}
		st.Stat("shared")
		return nil
	})
}

// TestAppendRings: with sliding-window layers whose rings have wrapped
// (gpt-oss's banded layers keep 576 rows), each save still appends — a
// follow-up its new rows, a regeneration within the rings its tail, an
// edit further back also the rows before its cut the file's rings lost —
// and after each the file loads to exactly the sequence's state, in this
// process and another, which goes on as the sequence does.
func TestAppendRings(t *testing.T) {
	spec := synth.Tiny("gpt-oss")
	spec.Context = 32768
	m := model(t, spec)
	opt := engine.SequenceOptions{Context: 2048, Batch: 128}
	seq, _ := m.NewSequence(opt)
	st := open(t, 0)
	for i, s := range []struct {
		name       string
		keep, feed int
		kind       WriteKind
	}{
		{"prompt", -1, 900, Created},
		{"edit past the rings", 300, 500, Appended},
		{"follow-up", -1, 40, Appended},
		{"regenerate", 820, 30, Appended},
		{"follow-up", -1, 600, Appended},
	} {
		edit(t, seq, s.keep, s.feed, uint64(40+i))
		w, err := st.Put("c", seq)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if w.Kind != s.kind {
			t.Fatalf("%s: %+v, want %v", s.name, w, s.kind)
		}
		t.Logf("%-20s %4d tokens: %-9v %7d bytes written, the state's snapshot is %7d", s.name, seq.Len(), w.Kind, w.Bytes, seq.SnapshotSize())
		mustLoad(t, st, "c", m, opt, seq)
		other, err := Open(st.Dir(), 0)
		if err != nil {
			t.Fatal(err)
		}
		got := mustLoad(t, other, "c", m, opt, seq)
		orig, _ := m.ReadSnapshot(bytes.NewReader(canonical(t, seq)), opt)
		continuesAlike(t, orig, got, testutil.Tokens(5, 320, 97))
	}
}
