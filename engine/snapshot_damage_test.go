package engine

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/churon/churon/models/synth"
)

// TestSnapshotMismatch: another model, context, KV type or format
// version is refused with ErrSnapshotMismatch.
func TestSnapshotMismatch(t *testing.T) {
	ctx := context.Background()
	spec := synth.Tiny("llama")
	a := synthModel(t, spec)
	spec.Seed = 2 // same shape and header, other weights
	b := synthModel(t, spec)
	opt := SequenceOptions{Context: 64}
	s, _ := a.NewSequence(opt)
	if err := s.Feed(ctx, snapTokens(9, a.Info().VocabSize, 5)); err != nil {
		t.Fatal(err)
	}
	snap := snapshotBytes(t, s)
	badVersion := bytes.Clone(snap)
	binary.LittleEndian.PutUint32(badVersion[8:], SnapshotFormat+1)
	cases := []struct {
		name string
		m    *Model
		opt  SequenceOptions
		data []byte
	}{
		{"other model", b, opt, snap},
		{"other context", a, SequenceOptions{Context: 65}, snap},
		{"default context", a, SequenceOptions{}, snap},
		{"other KV type", a, SequenceOptions{Context: 64, KVType: KVF32}, snap},
		{"unknown KV type", a, SequenceOptions{Context: 64, KVType: 9}, snap},
		{"format version", a, opt, badVersion},
	}
	for _, c := range cases {
		_, err := c.m.ReadSnapshot(bytes.NewReader(c.data), c.opt)
		if !errors.Is(err, ErrSnapshotMismatch) || errors.Is(err, ErrSnapshotCorrupt) {
			t.Errorf("%s: %v, want ErrSnapshotMismatch", c.name, err)
		} else {
			t.Logf("%s: %v", c.name, err)
		}
	}
	if _, err := a.ReadSnapshot(bytes.NewReader(snap), opt); err != nil {
		t.Fatalf("the matching case fails: %v", err)
	}
}

// TestSnapshotCorrupt: in a snapshot of one segment (as WriteSnapshot
// writes), every truncation and random bit flips are refused as corrupt
// (a flip in the version field as a mismatch), never a panic, never a
// sequence: a torn first segment leaves no state to fall back on. Bytes
// after it are a torn second segment: dropped.
func TestSnapshotCorrupt(t *testing.T) {
	ctx := context.Background()
	m := synthModel(t, synth.Tiny("llama"))
	opt := SequenceOptions{Context: 32}
	s, _ := m.NewSequence(opt)
	if err := s.Feed(ctx, snapTokens(7, m.Info().VocabSize, 6)); err != nil {
		t.Fatal(err)
	}
	snap := snapshotBytes(t, s)
	refused := func(what string, data []byte) {
		t.Helper()
		seq, err := m.ReadSnapshot(bytes.NewReader(data), opt)
		if err == nil || seq != nil {
			t.Fatalf("%s: accepted", what)
		}
		if !errors.Is(err, ErrSnapshotCorrupt) && !errors.Is(err, ErrSnapshotMismatch) {
			t.Fatalf("%s: %v, want a corrupt or mismatch error", what, err)
		}
	}
	for n := range len(snap) {
		refused("truncated", snap[:n])
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		d := bytes.Clone(snap)
		for range 1 + r.IntN(3) {
			i := r.IntN(len(d))
			d[i] ^= 1 << r.IntN(8)
		}
		refused("bit flip", d)
	}
	head := s.layout().headSize()
	for _, extra := range []int{1, 5, head - 1} {
		got, ix, err := m.RestoreSnapshot(bytes.NewReader(append(bytes.Clone(snap), make([]byte, extra)...)), opt)
		if err != nil || ix.Tail != int64(extra) || ix.End != int64(len(snap)) || !bytes.Equal(snapshotBytes(t, got), snap) {
			t.Fatalf("%d trailing bytes: %v, index %+v", extra, err, ix)
		}
	}
	refused("a trailing segment head of zeros", append(bytes.Clone(snap), make([]byte, head)...))
	refused("empty", nil)
	refused("garbage", bytes.Repeat([]byte{0xAB}, 4096))
	if _, err := m.ReadSnapshot(bytes.NewReader(snap), opt); err != nil {
		t.Fatal(err)
	}
}

// TestSnapshotReadError: an I/O error is neither corrupt nor mismatch,
// so a store does not delete a sound file over a failing disk.
func TestSnapshotReadError(t *testing.T) {
	m := synthModel(t, synth.Tiny("llama"))
	s, _ := m.NewSequence(SequenceOptions{Context: 32})
	snap := snapshotBytes(t, s)
	boom := errors.New("disk on fire")
	_, err := m.ReadSnapshot(&failingReader{data: snap[:100], err: boom}, SequenceOptions{Context: 32})
	if !errors.Is(err, boom) || errors.Is(err, ErrSnapshotCorrupt) || errors.Is(err, ErrSnapshotMismatch) {
		t.Fatalf("%v", err)
	}
}

type failingReader struct {
	data []byte
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

func FuzzReadSnapshot(f *testing.F) {
	ctx := context.Background()
	spec := synth.Tiny("llama")
	spec.Layers = 1
	path := synthFile(f, "m.gguf", spec)
	m, err := Load(ctx, path, LoadOptions{Threads: 1})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { m.Close() })
	opt := SequenceOptions{Context: 16}
	s, _ := m.NewSequence(opt)
	_ = s.Feed(ctx, []int32{1, 300, 17})
	var b bytes.Buffer
	if err := s.WriteSnapshot(&b); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
	f.Add(b.Bytes()[:40])
	e, _ := m.NewSequence(opt)
	var eb bytes.Buffer
	_ = e.WriteSnapshot(&eb)
	f.Add(eb.Bytes())
	// Several segments: a follow-up, an edit, and a torn one.
	_ = s.Feed(ctx, []int32{5, 6})
	_ = s.WriteSnapshotSegment(&b, 3, nil)
	_ = s.Truncate(2)
	_ = s.Feed(ctx, []int32{9})
	_ = s.WriteSnapshotSegment(&b, 2, nil)
	f.Add(b.Bytes())
	_ = s.WriteSnapshotSegment(&b, 1, nil)
	f.Add(b.Bytes()[:b.Len()-7])
	f.Fuzz(func(t *testing.T, data []byte) {
		seq, err := m.ReadSnapshot(bytes.NewReader(data), opt)
		if err != nil {
			if seq != nil {
				t.Fatal("a sequence with an error")
			}
			if _, ierr := ReadSnapshotInfo(bytes.NewReader(data)); ierr == nil && len(data) < 16 {
				t.Fatal("header read from too few bytes")
			}
			return
		}
		// Accepted: its whole segments end at End, the rest is a torn
		// tail; without the tail it reads as the same state, and a scan
		// finds what the reader found.
		got, ix, err := m.RestoreSnapshot(bytes.NewReader(data), opt)
		if err != nil || ix.End+ix.Tail != int64(len(data)) || !slices.Equal(ix.Tokens, got.Tokens()) {
			t.Fatalf("RestoreSnapshot: %v, index %+v", err, ix)
		}
		var out bytes.Buffer
		if err := seq.WriteSnapshot(&out); err != nil {
			t.Fatal(err)
		}
		again, ix2, err := m.RestoreSnapshot(bytes.NewReader(data[:ix.End]), opt)
		if err != nil || ix2.Tail != 0 || ix2.End != ix.End || ix2.Sum != ix.Sum {
			t.Fatalf("without its tail: %v, index %+v", err, ix2)
		}
		var out2 bytes.Buffer
		if err := again.WriteSnapshot(&out2); err != nil || !bytes.Equal(out2.Bytes(), out.Bytes()) {
			t.Fatal("without its tail, another state")
		}
		sc, err := ScanSnapshot(bytes.NewReader(data), int64(len(data)), ScanOptions{VerifyLast: true})
		if err != nil || sc.End != ix.End || sc.Segments != ix.Segments || sc.Sum != ix.Sum || !slices.Equal(sc.Tokens, ix.Tokens) {
			t.Fatalf("scan %+v, %v; reader %+v", sc, err, ix)
		}
		// One whole segment and nothing else is WriteSnapshot's own form.
		if ix.Segments == 1 && ix.Tail == 0 && !bytes.Equal(out.Bytes(), data) {
			t.Fatalf("accepted %d bytes that write back as %d other bytes", len(data), out.Len())
		}
	})
}

// ringSnapshot is a snapshot of a sequence whose rings have wrapped
// (gpt-oss's banded layers), with its model and options.
func ringSnapshot(t *testing.T) (*Model, SequenceOptions, *Sequence, []byte) {
	m := synthModel(t, ringSpecs(t)["gpt-oss-MXFP4_MOE"])
	opt := SequenceOptions{Context: ringCtx}
	s, _ := m.NewSequence(opt)
	if err := s.Feed(context.Background(), snapTokens(650, m.Info().VocabSize, 8)); err != nil {
		t.Fatal(err)
	}
	return m, opt, s, snapshotBytes(t, s)
}

// resum recomputes the checksums of a one-segment snapshot of format 3
// after a test edited it: the header's, and the segment's three.
func resum(b []byte, layers, n, vocab, rows int) []byte {
	le := binary.LittleEndian
	hend := snapPrefix + int(le.Uint32(b[12:]))
	le.PutUint32(b[hend:], crc32.Checksum(b[:hend], castagnoli))
	seg := hend + 4
	head := snapSegHead + 4*layers + 4
	le.PutUint32(b[seg+head-4:], crc32.Checksum(b[seg:seg+head-4], castagnoli))
	toks := seg + head + 4*n
	le.PutUint32(b[toks:], crc32.Checksum(b[seg:toks], castagnoli))
	le.PutUint32(b[len(b)-4:], crc32.Checksum(b[seg:len(b)-4], castagnoli))
	return b
}

// TestSnapshotRingsDamaged: a snapshot with rings, truncated, flipped, or
// edited with its checksums made right again so that a layer's rows start
// where they cannot, or its rings differ from the engine's, is refused —
// as corrupt, or for other rings as a mismatch — never restored.
func TestSnapshotRingsDamaged(t *testing.T) {
	m, opt, s, snap := ringSnapshot(t)
	refused := func(what string, data []byte, want error) {
		t.Helper()
		seq, err := m.ReadSnapshot(bytes.NewReader(data), opt)
		if err == nil || seq != nil {
			t.Fatalf("%s: accepted", what)
		}
		if !errors.Is(err, want) && !(want == nil && (errors.Is(err, ErrSnapshotCorrupt) || errors.Is(err, ErrSnapshotMismatch))) {
			t.Fatalf("%s: %v, want %v", what, err, want)
		}
	}
	for n := 0; n < len(snap); n += 1 + n/64 {
		refused("truncated", snap[:n], nil)
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 400 {
		d := bytes.Clone(snap)
		i := r.IntN(len(d))
		d[i] ^= 1 << r.IntN(8)
		refused("bit flip", d, nil)
	}
	le := binary.LittleEndian
	cfg := m.net.Config()
	hend := snapPrefix + int(le.Uint32(snap[12:]))
	rings := hend - 4*cfg.Layers - 4 // the ring table and the states' bytes end the header
	firsts := hend + 4 + 12          // a segment's first rows follow tag, start and n
	n, vocab := s.Len(), cfg.Vocab
	ring := int(le.Uint32(snap[rings:])) // layer 0 is banded
	if ring == 0 || le.Uint32(snap[rings+4:]) != 0 {
		t.Fatalf("rings %v", snap[rings:hend])
	}
	edit := func(off int, v uint32) []byte {
		d := bytes.Clone(snap)
		le.PutUint32(d[off:], v)
		return resum(d, cfg.Layers, n, vocab, ring)
	}
	if _, err := m.ReadSnapshot(bytes.NewReader(edit(firsts, le.Uint32(snap[firsts:]))), opt); err != nil {
		t.Fatalf("resum breaks a sound file: %v", err)
	}
	refused("a ring's rows from past the end", edit(firsts, uint32(n+1)), ErrSnapshotCorrupt)
	refused("more rows than a ring holds", edit(firsts, uint32(n-ring-1)), ErrSnapshotCorrupt)
	refused("a full layer's rows from past the start", edit(firsts+4, 1), ErrSnapshotCorrupt)
	refused("another ring", edit(rings, uint32(ring+64)), ErrSnapshotMismatch)
	refused("a ring for a full layer", edit(rings+4, uint32(ring)), ErrSnapshotMismatch)
	refused("a ring as long as the context", edit(rings, uint32(ringCtx)), ErrSnapshotCorrupt)
}

// toFormat2 rewrites a snapshot of format 4 of a model without recurrent
// layers whose segments all have every layer's rows from their start (a
// sequence without rings) as the format 2 engine wrote it: no ring
// table, no first rows, no states.
func toFormat2(t *testing.T, b []byte, layers int) []byte {
	t.Helper()
	le := binary.LittleEndian
	hlen := int(le.Uint32(b[12:]))
	out := bytes.Clone(b[:snapPrefix+hlen-4*layers-4])
	le.PutUint32(out[8:], snapFormat2)
	le.PutUint32(out[12:], uint32(hlen-4*layers-4))
	out = le.AppendUint32(out, crc32.Checksum(out, castagnoli))
	info, err := ReadSnapshotInfo(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	rs, _ := info.rowSize()
	for off := snapPrefix + hlen + 4; off < len(b); {
		start, n := int(le.Uint32(b[off+4:])), int(le.Uint32(b[off+8:]))
		for l := range layers {
			if int(le.Uint32(b[off+12+4*l:])) != start {
				t.Fatalf("layer %d's rows do not start at the segment's start", l)
			}
		}
		head := snapSegHead + 4*layers + 4
		if k := le.Uint32(b[off+head-8:]); k != 0 {
			t.Fatalf("a segment with %d recurrent states", k)
		}
		size := head + 4*n + 4 + 2*layers*n*rs + 4*info.Vocab + 4
		seg := bytes.Clone(b[off : off+12])
		seg = le.AppendUint32(seg, crc32.Checksum(seg, castagnoli))
		seg = append(seg, b[off+head:off+head+4*n]...)
		seg = le.AppendUint32(seg, crc32.Checksum(seg, castagnoli))
		seg = append(seg, b[off+head+4*n+4:off+size-4]...)
		seg = le.AppendUint32(seg, crc32.Checksum(seg, castagnoli))
		out = append(out, seg...)
		off += size
	}
	return out
}

// TestSnapshotFormat2: a snapshot of the format before rings still
// restores — into rings too, which keep its last rows — and continues
// exactly as a cold prefill; a scan reads it, as format 2.
func TestSnapshotFormat2(t *testing.T) {
	ctx := context.Background()
	for name, c := range map[string]struct {
		spec synth.Spec
		ctx  int
		n    int
	}{
		"llama":          {synth.Tiny("llama"), 64, 30},
		"gpt-oss, rings": {ringSpecs(t)["gpt-oss-MXFP4_MOE"], ringCtx, 700},
	} {
		t.Run(name, func(t *testing.T) {
			m := synthModel(t, c.spec)
			opt := SequenceOptions{Context: c.ctx}
			toks := snapTokens(c.n, m.Info().VocabSize, 9)
			// The old engine kept every row: a sequence without rings.
			old, _ := m.NewSequence(opt)
			fullCache(t, old)
			if err := old.Feed(ctx, toks); err != nil {
				t.Fatal(err)
			}
			v2 := toFormat2(t, snapshotBytes(t, old), c.spec.Layers)
			got, err := m.ReadSnapshot(bytes.NewReader(v2), opt)
			if err != nil {
				t.Fatal(err)
			}
			ix, err := ScanSnapshot(bytes.NewReader(v2), int64(len(v2)), ScanOptions{VerifyLast: true})
			if err != nil || ix.Format != snapFormat2 || !slices.Equal(ix.Tokens, toks) {
				t.Fatalf("scan: %+v, %v", ix, err)
			}
			cold, _ := m.NewSequence(opt)
			if err := cold.Feed(ctx, toks); err != nil {
				t.Fatal(err)
			}
			// Restored, it holds what a cold prefill holds.
			if !bytes.Equal(snapshotBytes(t, got), snapshotBytes(t, cold)) {
				t.Fatal("restored another state than a cold prefill's")
			}
			more := snapTokens(5, m.Info().VocabSize, 10)
			for _, s := range []*Sequence{got, cold} {
				if err := s.Feed(ctx, more); err != nil {
					t.Fatal(err)
				}
			}
			sameFloats(t, "continued", got.Logits(), cold.Logits())
		})
	}
}
