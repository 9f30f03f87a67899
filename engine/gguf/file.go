package gguf

import (
	"fmt"
	"io"
	"math"
	"os"
	"sync/atomic"
)

// File is a parsed GGUF file. Its exported fields and everything its
// methods return are read-only: a File is safe for concurrent use by many
// goroutines, except that Close must not run while tensor data (or a File
// method) is still in use.
type File struct {
	Version    uint32
	KV         []KV         // in file order
	Tensors    []TensorInfo // in file order
	Alignment  uint64
	DataOffset uint64 // absolute file offset of the data section

	data    []byte       // whole file (mapped or read); nil after OpenReader
	size    int64        // file size
	unmap   func() error // releases data; nil when nothing to release
	mapped  bool
	closed  atomic.Bool
	kvIndex map[string]int
	tIndex  map[string]int
}

// disableMmap forces Open onto the read-into-memory path (tests).
var disableMmap = false

// Open maps the file read-only and parses it. When mapping is unavailable
// (non-unix systems, or mmap fails) the file is read into memory instead.
// Everything is validated before Open returns; tensor data is then sliced
// from the mapping without copying. Close releases the mapping.
//
// If the file is truncated by another process while mapped, touching the
// missing pages faults (SIGBUS): model files are expected not to change
// under a running model.
func Open(path string) (*File, error) {
	fd, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("gguf: open %s: not a regular file", path)
	}
	size := st.Size()
	if size > math.MaxInt {
		return nil, fmt.Errorf("gguf: open %s: file of %d bytes is too large for this platform", path, size)
	}
	var (
		data   []byte
		unmap  func() error
		mapped bool
	)
	if size > 0 && !disableMmap {
		data, unmap, err = mapFile(fd, int(size))
		mapped = err == nil
	}
	if !mapped {
		data = make([]byte, size)
		if _, err := io.ReadFull(fd, data); err != nil {
			return nil, fmt.Errorf("gguf: read %s: %w", path, err)
		}
	}
	f, err := Parse(data)
	if err != nil {
		if unmap != nil {
			unmap()
		}
		return nil, fmt.Errorf("gguf: %s: %w", path, stripPrefix(err))
	}
	f.unmap, f.mapped = unmap, mapped
	return f, nil
}

// stripPrefix lets Open say "gguf: PATH: ..." once rather than twice; the
// error chain (errors.Is/As) is unchanged.
func stripPrefix(err error) error {
	if fe, ok := err.(*FormatError); ok {
		return prefixless{fe}
	}
	return err
}

type prefixless struct{ *FormatError }

func (p prefixless) Error() string { return p.FormatError.Error()[len("gguf: "):] }
func (p prefixless) Unwrap() error { return p.FormatError }

// Parse parses a whole GGUF file held in memory. The File keeps data and
// slices tensor data from it, so data must not be modified afterwards.
func Parse(data []byte) (*File, error) {
	d := &decoder{buf: data, size: int64(len(data))}
	f, err := d.parse()
	if err != nil {
		return nil, err
	}
	f.data = data
	return f, nil
}

// OpenReader parses the header (metadata and tensor infos) of a file of the
// given size read through r, without touching tensor data: TensorData then
// returns ErrNoData. Tensor extents are checked against size.
//
// Reads are sequential and non-overlapping, in chunks that grow from
// 64 KiB to 1 MiB, so it reads at most one chunk past the header (and never
// past size). This suits a ReaderAt backed by HTTP Range requests. Memory
// grows only with bytes actually received, so a source that overstates
// size cannot make it allocate more than it sends.
func OpenReader(r io.ReaderAt, size int64) (*File, error) {
	if size < 0 {
		return nil, fmt.Errorf("gguf: negative size %d", size)
	}
	d := &decoder{r: r, size: size, chunk: firstChunk, srcEnd: -1}
	return d.parse()
}

// Close releases the mapping. Slices from TensorData must not be used
// afterwards. Close is idempotent.
func (f *File) Close() error {
	if !f.closed.CompareAndSwap(false, true) {
		return nil
	}
	unmap := f.unmap
	f.unmap = nil
	f.data = nil
	if unmap != nil {
		if err := unmap(); err != nil {
			return fmt.Errorf("gguf: unmap: %w", err)
		}
	}
	return nil
}

// ParseOwned is Parse for data the File then owns: Close calls release
// (which frees data) once. On error the caller still owns data.
func ParseOwned(data []byte, release func() error) (*File, error) {
	f, err := Parse(data)
	if err != nil {
		return nil, err
	}
	f.unmap = release
	return f, nil
}

// Mapped reports whether the file is memory-mapped (rather than read into
// memory or opened header-only).
func (f *File) Mapped() bool { return f.mapped }

// Size returns the file size in bytes.
func (f *File) Size() int64 { return f.size }

// HeaderSize returns the bytes that hold the metadata and tensor infos
// (including the padding before the data): what a client must fetch to
// read the header of a remote file. It equals DataOffset.
func (f *File) HeaderSize() uint64 { return f.DataOffset }

// Lookup returns the value of a metadata key.
func (f *File) Lookup(key string) (Value, bool) {
	i, ok := f.kvIndex[key]
	if !ok {
		return Value{}, false
	}
	return f.KV[i].Value, true
}

// String returns a string value.
func (f *File) String(key string) (string, bool) {
	v, _ := f.Lookup(key)
	s, ok := v.V.(string)
	return s, ok
}

// Uint returns a non-negative integer value of any integer type.
func (f *File) Uint(key string) (uint64, bool) {
	v, _ := f.Lookup(key)
	return asUint(v.V)
}

// Int returns an integer value of any integer type that fits an int64.
func (f *File) Int(key string) (int64, bool) {
	v, _ := f.Lookup(key)
	return asInt(v.V)
}

// Float returns a float or integer value as float64.
func (f *File) Float(key string) (float64, bool) {
	v, _ := f.Lookup(key)
	return asFloat(v.V)
}

// Bool returns a bool value.
func (f *File) Bool(key string) (bool, bool) {
	v, _ := f.Lookup(key)
	b, ok := v.V.(bool)
	return b, ok
}

// Strings returns a string array. The slice is shared with the File: do
// not modify it.
func (f *File) Strings(key string) ([]string, bool) {
	a, ok := f.array(key)
	if !ok {
		return nil, false
	}
	s, ok := a.Values.([]string)
	return s, ok
}

// Float32s returns a numeric array (float or integer) converted to float32.
// A float32 array is returned as stored (shared: do not modify it).
func (f *File) Float32s(key string) ([]float32, bool) {
	return convertArray(f, key, func(v any) (float32, bool) {
		x, ok := asFloat(v)
		return float32(x), ok
	})
}

// Int32s returns an integer array converted to int32, and false if it is
// not an integer array or a value does not fit. An int32 array is returned
// as stored (shared: do not modify it).
func (f *File) Int32s(key string) ([]int32, bool) {
	return convertArray(f, key, func(v any) (int32, bool) {
		x, ok := asInt(v)
		return int32(x), ok && x >= math.MinInt32 && x <= math.MaxInt32
	})
}

// convertArray returns the array at key as a []T: as stored if it is
// one, else converted element by element (false if an element does not
// convert).
func convertArray[T any](f *File, key string, convert func(any) (T, bool)) ([]T, bool) {
	a, ok := f.array(key)
	if !ok {
		return nil, false
	}
	if v, ok := a.Values.([]T); ok {
		return v, true
	}
	out := make([]T, a.Len())
	for i := range out {
		e, _ := a.index(i)
		x, ok := convert(e.V)
		if !ok {
			return nil, false
		}
		out[i] = x
	}
	return out, true
}

func (f *File) array(key string) (Array, bool) {
	v, _ := f.Lookup(key)
	a, ok := v.V.(Array)
	return a, ok
}

// Tensor returns the tensor with the given name.
func (f *File) Tensor(name string) (*TensorInfo, bool) {
	i, ok := f.tIndex[name]
	if !ok {
		return nil, false
	}
	return &f.Tensors[i], true
}

// TensorData returns the tensor's bytes, sliced from the mapping without
// copying. The slice is read-only (writing to a mapped file's slice faults)
// and valid until Close.
func (f *File) TensorData(t *TensorInfo) ([]byte, error) {
	if f.closed.Load() {
		return nil, ErrClosed
	}
	if f.data == nil {
		return nil, ErrNoData
	}
	if t == nil {
		return nil, fmt.Errorf("gguf: TensorData: nil tensor")
	}
	// t may be a caller's copy: check it again rather than trust it.
	n := uint64(len(f.data))
	start := f.DataOffset + t.Offset
	if start < f.DataOffset || start > n || t.Size > n-start {
		return nil, fmt.Errorf("gguf: tensor %q: data [%d, +%d) is outside the %d-byte file", t.Name, t.Offset, t.Size, n)
	}
	end := start + t.Size
	return f.data[start:end:end], nil
}

// Architecture returns general.architecture, or "".
func (f *File) Architecture() string {
	s, _ := f.String("general.architecture")
	return s
}
