package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/churon/churon/engine/quant"
	"github.com/churon/churon/internal/testdata"
)

// raw assembles GGUF bytes by hand, so tests can write what the Writer
// refuses to.
type raw struct{ b []byte }

func gguf(version uint32, nt, nkv uint64) *raw {
	r := &raw{b: []byte("GGUF")}
	return r.u32(version).u64(nt).u64(nkv)
}

func (r *raw) u32(v uint32) *raw    { r.b = binary.LittleEndian.AppendUint32(r.b, v); return r }
func (r *raw) u64(v uint64) *raw    { r.b = binary.LittleEndian.AppendUint64(r.b, v); return r }
func (r *raw) bytes(b ...byte) *raw { r.b = append(r.b, b...); return r }
func (r *raw) str(s string) *raw    { return r.u64(uint64(len(s))).bytes([]byte(s)...) }

// kv writes a key with a uint32 value.
func (r *raw) kv(key string, v uint32) *raw { return r.str(key).u32(uint32(TypeUint32)).u32(v) }

// tensor writes a tensor info.
func (r *raw) tensor(name string, typ quant.Type, off uint64, shape ...uint64) *raw {
	r.str(name).u32(uint32(len(shape)))
	for _, n := range shape {
		r.u64(n)
	}
	return r.u32(uint32(typ)).u64(off)
}

// pad pads to 32 bytes and appends n bytes of data.
func (r *raw) data(n int) *raw {
	for len(r.b)%32 != 0 {
		r.b = append(r.b, 0)
	}
	r.b = append(r.b, make([]byte, n)...)
	return r
}

func TestMalformed(t *testing.T) {
	garbage := make([]byte, 1000)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range garbage {
		garbage[i] = byte(rng.Uint32())
	}
	deep := gguf(3, 0, 1).str("deep")
	deep.u32(uint32(TypeArray))
	for i := 0; i < MaxArrayDepth; i++ {
		deep.u32(uint32(TypeArray)).u64(1)
	}
	deep.u32(uint32(TypeUint8)).u64(0)

	for _, c := range []struct {
		name string
		data []byte
		want error
		msg  string // the message must contain this
	}{
		{"empty", nil, ErrNotGGUF, "empty"},
		{"garbage", garbage, ErrNotGGUF, "magic"},
		{"bad magic", append([]byte("GGUG"), gguf(3, 0, 0).b[4:]...), ErrNotGGUF, `"GGUG"`},
		{"short bad magic", []byte("GX"), ErrNotGGUF, "magic"},
		{"short magic", []byte("GGU"), ErrTruncated, "magic"},
		{"legacy ggjt", []byte("tjgg\x01\x00\x00\x00"), ErrNotGGUF, "legacy"},
		{"version 1", gguf(1, 0, 0).b, ErrUnsupportedVersion, "version 1"},
		{"version 4", gguf(4, 0, 0).b, ErrUnsupportedVersion, "version 4"},
		{"version 0", gguf(0, 0, 0).b, ErrUnsupportedVersion, "version 0"},
		{"big-endian", gguf(3<<24, 0, 0).b, ErrBigEndian, "big-endian"},
		{"big-endian is unsupported version", gguf(2<<24, 0, 0).b, ErrUnsupportedVersion, "big-endian"},
		{"no counts", []byte("GGUF\x03\x00\x00\x00\x00"), ErrTruncated, "truncated"},
		{"huge tensor count", gguf(3, math.MaxUint64, 0).b, ErrTruncated, "tensor count"},
		{"huge kv count", gguf(3, 0, 1<<60).b, ErrTruncated, "metadata count"},
		{"counts together too many", gguf(3, 1, 2).kv("a", 1).b, ErrTruncated, "cannot fit"},
		{"huge key length", gguf(3, 0, 1).u64(1 << 40).bytes(make([]byte, 14)...).b, ErrLimit, "key length"},
		{"key past end", gguf(3, 0, 1).u64(100).bytes(make([]byte, 14)...).b, ErrTruncated, "key length 100"},
		{"empty key", gguf(3, 0, 1).str("").u32(0).bytes(1, 0, 0, 0, 0, 0).b, ErrInvalid, "empty key"},
		{"duplicate key", gguf(3, 0, 2).kv("a.b", 1).kv("a.b", 2).b, ErrInvalid, `key "a.b"`},
		{"unknown value type", gguf(3, 0, 1).str("k").u32(13).u32(0).bytes(0, 0).b, ErrUnknownType, `key "k"`},
		{"value type 2^31", gguf(3, 0, 1).str("k").u32(1 << 31).u32(0).b, ErrUnknownType, "value type"},
		{"huge string", gguf(3, 0, 1).str("k").u32(uint32(TypeString)).u64(1 << 40).u32(0).b, ErrLimit, "string length"},
		{"string past end", gguf(3, 0, 1).str("k").u32(uint32(TypeString)).u64(5).bytes('a', 'b').b, ErrTruncated, "string length 5"},
		{"scalar past end", gguf(3, 0, 1).str("k").u32(uint32(TypeUint64)).u32(0).b, ErrTruncated, `key "k"`},
		{"huge array", gguf(3, 0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(TypeUint8)).u64(1 << 62).u32(0).b, ErrTruncated, "array of 4611686018427387904 uint8"},
		{"array count overflow", gguf(3, 0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(TypeUint64)).u64(1<<61 + 1).u64(0).b, ErrTruncated, "array of"},
		{"huge string array", gguf(3, 0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(TypeString)).u64(math.MaxUint64).b, ErrTruncated, "string"},
		{"string array element past end", gguf(3, 0, 1).str("tok").u32(uint32(TypeArray)).u32(uint32(TypeString)).u64(2).str("a").u64(50).b, ErrTruncated, `key "tok"[1]`},
		{"error in nested array", gguf(3, 0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(TypeArray)).u64(2).
			u32(uint32(TypeInt8)).u64(1).bytes(1).
			u32(uint32(TypeArray)).u64(3).u32(uint32(TypeBool)).u64(0).u32(uint32(TypeBool)).u64(0).u32(77).u64(0).b,
			ErrUnknownType, `key "k"[1][2] at byte 98: array element type 77`},
		{"huge nested array", gguf(3, 0, 1).str("k").u32(uint32(TypeArray)).u32(uint32(TypeArray)).u64(1 << 50).b, ErrTruncated, "array of"},
		{"unknown array type", gguf(3, 0, 1).str("k").u32(uint32(TypeArray)).u32(99).u64(0).b, ErrUnknownType, "element type 99"},
		{"array too deep", deep.b, ErrLimit, "nested"},
		{"alignment type", gguf(3, 0, 1).str("general.alignment").u32(uint32(TypeUint64)).u64(32).b, ErrInvalid, "uint32"},
		{"alignment zero", gguf(3, 0, 1).kv("general.alignment", 0).b, ErrInvalid, "power of two"},
		{"alignment 48", gguf(3, 0, 1).kv("general.alignment", 48).b, ErrInvalid, "alignment 48"},
		{"0 dims", gguf(3, 1, 0).tensor("t", quant.F32, 0).data(4).b, ErrInvalid, `tensor "t"`},
		{"5 dims", gguf(3, 1, 0).tensor("t", quant.F32, 0, 1, 1, 1, 1, 1).data(4).b, ErrInvalid, "5 dimensions"},
		{"zero dim", gguf(3, 1, 0).tensor("t", quant.F32, 0, 4, 0).data(16).b, ErrInvalid, "dimension 1 is 0"},
		{"dims overflow", gguf(3, 1, 0).tensor("t", quant.F32, 0, 1<<32, 1<<32).data(16).b, ErrInvalid, "2^62"},
		{"more than 2^62 elements", gguf(3, 1, 0).tensor("t", quant.I8, 0, 1<<31, 1<<31, 2).data(16).b, ErrInvalid, "2^62"},
		{"size overflow", gguf(3, 1, 0).tensor("t", quant.F64, 0, 1<<31, 1<<31).data(16).b, ErrInvalid, "overflows"},
		{"unknown tensor type", gguf(3, 1, 0).tensor("blk.0.w", quant.Type(4), 0, 32).data(32).b, ErrUnknownType, `tensor "blk.0.w" at byte 51: tensor type 4`},
		{"ragged row", gguf(3, 1, 0).tensor("q", quant.Q4_0, 0, 48).data(64).b, ErrInvalid, "row length 48"},
		{"misaligned offset", gguf(3, 2, 0).tensor("a", quant.F32, 0, 4).tensor("b", quant.F32, 16, 4).data(64).b, ErrInvalid, "offset 16"},
		{"tensor outside file", gguf(3, 1, 0).tensor("t", quant.F32, 1<<40, 4).data(16).b, ErrTruncated, `tensor "t"`},
		{"tensor end outside file", gguf(3, 1, 0).tensor("t", quant.F32, 0, 8).data(31).b, ErrTruncated, "runs past"},
		{"offset+size overflow", gguf(3, 1, 0).tensor("t", quant.F32, math.MaxUint64-31, 16).data(64).b, ErrTruncated, "runs past"},
		{"no data section", gguf(3, 1, 0).tensor("t", quant.F32, 0, 1).b, ErrTruncated, "runs past"},
		{"duplicate tensor", gguf(3, 2, 0).tensor("t", quant.F32, 0, 4).tensor("t", quant.F32, 32, 4).data(64).b, ErrInvalid, "duplicate tensor"},
		{"overlapping tensors", gguf(3, 2, 0).tensor("a", quant.F32, 0, 16).tensor("b", quant.F32, 32, 4).data(96).b, ErrInvalid, `overlaps tensor "a"`},
		{"same offset", gguf(3, 2, 0).tensor("a", quant.F32, 32, 4).tensor("b", quant.F32, 32, 4).data(96).b, ErrInvalid, "overlaps"},
		{"empty tensor name", gguf(3, 1, 0).tensor("", quant.F32, 0, 4).data(16).b, ErrInvalid, "empty tensor name"},
		{"huge tensor name", gguf(3, 1, 0).u64(1 << 20).bytes(make([]byte, 40)...).b, ErrLimit, "tensor name length"},
		{"tensor info truncated", gguf(3, 1, 0).str("t").u32(2).u64(4).u64(4).u32(0).bytes(1, 2).b, ErrTruncated, `tensor "t"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := Parse(c.data)
			if err == nil {
				t.Fatalf("parsed: %d KVs, %d tensors", len(f.KV), len(f.Tensors))
			}
			checkErr(t, err, c.want, c.msg)
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Errorf("%v is not a *FormatError", err)
			}
			// The header-only path must fail the same way.
			_, err2 := OpenReader(bytes.NewReader(c.data), int64(len(c.data)))
			if err2 == nil || err2.Error() != err.Error() {
				t.Errorf("OpenReader: %v, Parse: %v", err2, err)
			}
		})
	}
}

func checkErr(t *testing.T, err, want error, msg string) {
	t.Helper()
	s := err.Error()
	if !errors.Is(err, want) {
		t.Errorf("error %q is not %v", s, want)
	}
	if strings.ContainsAny(s, "\n\r") {
		t.Errorf("error is not one line: %q", s)
	}
	if !strings.HasPrefix(s, "gguf: ") {
		t.Errorf("error %q lacks the gguf: prefix", s)
	}
	if !strings.Contains(s, msg) {
		t.Errorf("error %q does not mention %q", s, msg)
	}
}

// TestWellFormedEdges checks things that look odd but are legal.
func TestWellFormedEdges(t *testing.T) {
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"empty file body", gguf(3, 0, 0).b},
		{"version 2", gguf(2, 0, 0).b},
		{"big alignment", gguf(3, 1, 1).kv("general.alignment", 1<<31).tensor("t", quant.F32, 0, 1).b},
		{"alignment 1", gguf(3, 2, 1).kv("general.alignment", 1).tensor("a", quant.I8, 0, 3).tensor("b", quant.I8, 3, 1).bytes(0, 0, 0, 0).b},
		{"tensors out of order", gguf(3, 2, 0).tensor("a", quant.F32, 32, 4).tensor("b", quant.F32, 0, 4).data(64).b},
		{"bool 2", gguf(3, 0, 1).str("b").u32(uint32(TypeBool)).bytes(2).b},
		{"tensor name with newline", gguf(3, 1, 0).tensor("a\nb", quant.F32, 0, 1).data(4).b},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := c.data
			if c.name == "big alignment" {
				// The data section starts at 2^31: too big to build, so
				// check only that the header reads and the tensor is
				// reported outside the file.
				_, err := Parse(data)
				checkErr(t, err, ErrTruncated, "runs past")
				return
			}
			f, err := Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			checkInvariants(t, f)
		})
	}
	f, _ := Parse(gguf(3, 0, 1).str("b").u32(uint32(TypeBool)).bytes(2).b)
	if b, ok := f.Bool("b"); !b || !ok {
		t.Errorf("bool byte 2 reads as %v %v", b, ok)
	}
	f, _ = Parse(gguf(3, 1, 0).tensor("a\nb", quant.F32, 0, 1).b)
	if f != nil {
		t.Error("tensor without data parsed")
	}
	_, err := Parse(gguf(3, 1, 0).tensor("a\nb", quant.F32, 0, 9).data(4).b)
	checkErr(t, err, ErrTruncated, `"a\nb"`)
}

// TestTruncatedReal cuts a real file at many lengths: each prefix must fail
// with ErrTruncated, through both Parse and OpenReader.
func TestTruncatedReal(t *testing.T) {
	full, err := os.ReadFile(filepath.Join(testdata.Dir(t), "models", "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse(full)
	if err != nil {
		t.Fatal(err)
	}
	hdr := int(f.HeaderSize())
	var cuts []int
	for n := 1; n < 64; n++ {
		cuts = append(cuts, n)
	}
	for n := 64; n < hdr+64; n += 7 {
		cuts = append(cuts, n)
	}
	for n := hdr; n < len(full); n += len(full) / 50 {
		cuts = append(cuts, n)
	}
	cuts = append(cuts, len(full)-1)
	for _, n := range cuts {
		_, err := Parse(full[:n])
		if err == nil {
			t.Fatalf("prefix of %d bytes parsed", n)
		}
		if !errors.Is(err, ErrTruncated) || strings.Contains(err.Error(), "\n") {
			t.Fatalf("prefix of %d bytes: %q is not a one-line ErrTruncated", n, err)
		}
		// Past the header only tensor data is missing: the error says how
		// much of the file is there, for "incomplete (412 MiB of 470 MiB)".
		var ie *IncompleteError
		if n >= hdr && (!errors.As(err, &ie) || ie.Size != int64(n) || ie.Want != int64(len(full))) {
			t.Fatalf("prefix of %d bytes: %v; want an IncompleteError of %d of %d bytes", n, err, n, len(full))
		}
		if n < hdr {
			_, err2 := OpenReader(bytes.NewReader(full[:n]), int64(n))
			if err2 == nil || err2.Error() != err.Error() {
				t.Fatalf("prefix of %d bytes: OpenReader %v, Parse %v", n, err2, err)
			}
		}
	}
	if _, err := Parse(full[:0]); !errors.Is(err, ErrNotGGUF) {
		t.Errorf("empty prefix: %v", err)
	}
}

// recReader records the reads made through it and fails past the data it
// holds, like a server that overstates a file's size.
type recReader struct {
	data    []byte
	maxEnd  int64
	reads   int
	lastEnd int64
	seqErr  bool
	failErr error
}

func (r *recReader) ReadAt(p []byte, off int64) (int, error) {
	r.reads++
	if off != r.lastEnd {
		r.seqErr = true
	}
	r.lastEnd = off + int64(len(p))
	r.maxEnd = max(r.maxEnd, off+int64(len(p)))
	if r.failErr != nil {
		return 0, r.failErr
	}
	if off >= int64(len(r.data)) {
		return 0, io.EOF
	}
	n := copy(p, r.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func TestOpenReaderReadsLittle(t *testing.T) {
	dir := testdata.Dir(t)
	for _, name := range []string{"quantzoo/zoo-F32.gguf", "vocab/ggml-vocab-qwen3.gguf"} {
		full, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		rr := &recReader{data: full}
		f, err := OpenReader(rr, int64(len(full)))
		if err != nil {
			t.Fatal(err)
		}
		if rr.seqErr {
			t.Errorf("%s: reads were not sequential", name)
		}
		if rr.maxEnd > int64(f.HeaderSize())+maxChunk {
			t.Errorf("%s: read up to byte %d for a %d-byte header", name, rr.maxEnd, f.HeaderSize())
		}
		t.Logf("%s: header %d bytes, %d reads up to byte %d", name, f.HeaderSize(), rr.reads, rr.maxEnd)
		if len(f.Tensors) > 0 {
			if _, err := f.TensorData(&f.Tensors[0]); !errors.Is(err, ErrNoData) {
				t.Errorf("TensorData after OpenReader: %v", err)
			}
		}
	}
}

// TestOpenReaderOverstatedSize: a source that claims a huge size but sends
// little must not make the reader allocate for the claim.
func TestOpenReaderOverstatedSize(t *testing.T) {
	hdr := gguf(3, 0, 2).str("a").u32(uint32(TypeArray)).u32(uint32(TypeUint8)).u64(1 << 29).b
	strs := gguf(3, 0, 1).str("s").u32(uint32(TypeArray)).u32(uint32(TypeString)).u64(1 << 26).b
	for _, data := range [][]byte{hdr, strs} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := OpenReader(&recReader{data: data}, 1<<40)
		runtime.ReadMemStats(&after)
		checkErr(t, err, ErrTruncated, "before the stated size")
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
			t.Errorf("allocated %d bytes for a %d-byte source", grew, len(data))
		}
	}
	// A claim beyond MaxHeaderSize is refused outright.
	big := gguf(3, 0, 1).str("a").u32(uint32(TypeArray)).u32(uint32(TypeUint8)).u64(MaxHeaderSize).b
	_, err := OpenReader(&recReader{data: big}, 1<<40)
	checkErr(t, err, ErrLimit, "MaxHeaderSize")
}

func TestOpenReaderIOError(t *testing.T) {
	boom := errors.New("connection reset")
	_, err := OpenReader(&recReader{failErr: boom}, 1000)
	if !errors.Is(err, boom) {
		t.Errorf("read error not wrapped: %v", err)
	}
	if _, err := OpenReader(&recReader{}, -1); err == nil {
		t.Error("negative size accepted")
	}
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(filepath.Join(dir, "missing.gguf")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := Open(dir); err == nil {
		t.Error("opened a directory")
	}
	empty := filepath.Join(dir, "empty.gguf")
	os.WriteFile(empty, nil, 0o644)
	if _, err := Open(empty); !errors.Is(err, ErrNotGGUF) {
		t.Errorf("empty file: %v", err)
	}
	bad := filepath.Join(dir, "bad.gguf")
	os.WriteFile(bad, gguf(1, 0, 0).b, 0o644)
	_, err := Open(bad)
	checkErr(t, err, ErrUnsupportedVersion, bad+": header at byte 4: GGUF version 1")
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Offset != 4 {
		t.Errorf("FormatError not reachable through Open's error: %#v", err)
	}
}

func TestClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.gguf")
	w := NewWriter()
	w.AddTensor("t", quant.F32, []uint64{4}, make([]byte, 16))
	w.SetKV("s", "text")
	w.SetKV("b", []uint8{1, 2, 3})
	w.SetKV("ss", []string{"a", "bc"})
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "linux" && !f.Mapped() {
		t.Error("not mapped on linux")
	}
	ti, _ := f.Tensor("t")
	if _, err := f.TensorData(ti); err != nil {
		t.Fatal(err)
	}
	bogus := *ti
	bogus.Offset = 1 << 20
	if _, err := f.TensorData(&bogus); err == nil {
		t.Error("TensorData accepted a tensor outside the file")
	}
	bogus.Offset, bogus.Size = 0, math.MaxUint64
	if _, err := f.TensorData(&bogus); err == nil {
		t.Error("TensorData accepted a huge size")
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := f.TensorData(ti); !errors.Is(err, ErrClosed) {
		t.Errorf("TensorData after Close: %v", err)
	}
	// Metadata is copied out of the mapping: it outlives Close.
	s, _ := f.String("s")
	ss, _ := f.Strings("ss")
	v, _ := f.Lookup("b")
	if s != "text" || strings.Join(ss, ",") != "a,bc" || !bytes.Equal(v.V.(Array).Values.([]uint8), []byte{1, 2, 3}) {
		t.Errorf("metadata after Close: %q %q %v", s, ss, v)
	}
}
