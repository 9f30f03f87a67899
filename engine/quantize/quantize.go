package quantize

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/churon/churon/engine/gguf"
	"github.com/churon/churon/engine/internal/iocount"
	"github.com/churon/churon/engine/quant"
	"github.com/churon/churon/internal/atomicfile"
)

// Options control File.
type Options struct {
	// Type is the file type to make, by name: see Types ("Q4_K_M").
	Type string
	// Threads quantizing rows in parallel; 0 means runtime.NumCPU(). The
	// output does not depend on it.
	Threads int
	// AllowRequantize lets a source whose weight matrices are already
	// quantized be dequantized and quantized again (with a warning in the
	// Report). Without it such a source is refused with ErrRequantize.
	AllowRequantize bool
	// Pure is llama-quantize's --pure: every weight matrix gets the file
	// type's base type, without the per-tensor recipe.
	Pure bool
	// Progress, when set, is called from File's goroutine after each chunk
	// with the bytes of source tensor data processed so far and in all.
	Progress func(done, total int64)
}

// Report describes a finished quantization.
type Report struct {
	Input, Output string
	Type          string // the file type made ("Q4_K_M")
	FileType      uint32 // its general.file_type
	Tensors       int
	Converted     int // tensors quantized (or converted between float types)
	Copied        int // tensors written unchanged
	Fallbacks     int // weight matrices given a fallback type (see Choice.Wanted)
	InBytes       int64
	OutBytes      int64
	Parameters    int64
	// InBitsPerWeight and BitsPerWeight are the tensor data's bits per
	// parameter before and after.
	InBitsPerWeight float64
	BitsPerWeight   float64
	TypeCounts      map[string]int // output tensors per type
	Warnings        []string
	Threads         int
	Duration        time.Duration
}

// chunkElems bounds the elements converted between two writes,
// cancellation checks and progress reports: 4M elements keep a chunk
// around a tenth of a second per thread and its buffer a few MiB. Tests
// lower it to split small tensors.
var chunkElems = 1 << 22

// copyChunk is the piece size for tensors written unchanged.
const copyChunk = 8 << 20

// wrapOutput lets tests put a failing writer (a full disk) under the
// output.
var wrapOutput func(io.Writer) io.Writer

// File quantizes the GGUF model at path in to the file type opt.Type and
// writes it to out, as llama.cpp's llama-quantize does without an importance
// matrix: the same per-tensor types (Plan), the same bytes for every block
// (engine/quant's reference quantizers), the same metadata (every key
// copied, general.quantization_version and general.file_type set, split
// keys dropped) and the same tensor order.
//
// The source is mapped and read one tensor at a time; the output is
// written as it is made to a temporary file next to out, synced, then
// renamed over out, so a cancelled, failed or killed run never leaves a
// partial out (a killed process may leave the ".out.tmp-*" file). File
// checks ctx between chunks of rows and returns ctx's error when it is
// cancelled.
func File(ctx context.Context, in, out string, opt Options) (rep Report, err error) {
	start := time.Now()
	ft, err := ParseType(opt.Type)
	if err != nil {
		return rep, err
	}
	threads := opt.Threads
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	rep = Report{Input: in, Output: out, Type: ft.Name, FileType: ft.ID, Threads: threads, TypeCounts: map[string]int{}}
	if err := ctx.Err(); err != nil {
		return rep, fmt.Errorf("quantize: %w", err)
	}
	if err := checkPaths(in, out); err != nil {
		return rep, err
	}
	src, err := gguf.Open(in)
	if err != nil {
		return rep, fmt.Errorf("quantize: %w", err)
	}
	defer src.Close()
	rep.InBytes = src.Size()

	ts := make([]Tensor, len(src.Tensors))
	for i, ti := range src.Tensors {
		ts[i] = Tensor{Name: ti.Name, Shape: ti.Shape, Type: ti.Type}
	}
	choices, err := Plan(ft, ModelOf(src), ts, opt.Pure)
	if err != nil {
		return rep, err
	}
	if rep.Warnings, err = checkConversions(src, choices, opt.AllowRequantize); err != nil {
		return rep, err
	}

	order := Order(ts)
	hdr, offsets, dataSize, err := header(src, ft, order, choices)
	if err != nil {
		return rep, err
	}
	var inData, outData, matrices int64
	fallbacks := map[string]int{}
	for i, ti := range src.Tensors {
		c := choices[i]
		n := int64(ti.Elements())
		rep.Parameters += n
		inData += int64(ti.Size)
		size, _ := c.Type.RowSize(int(ti.Shape[0]))
		outData += int64(size) * (n / int64(ti.Shape[0]))
		rep.TypeCounts[c.Type.String()]++
		if c.Convert {
			rep.Converted++
		} else {
			rep.Copied++
		}
		if quantizable(ti.Name, ti.Shape) {
			matrices++
		}
		if c.Wanted != c.Type {
			rep.Fallbacks++
			fallbacks[c.Wanted.String()+"→"+c.Type.String()]++
		}
	}
	rep.Tensors = len(src.Tensors)
	if rep.Parameters > 0 {
		rep.InBitsPerWeight = 8 * float64(inData) / float64(rep.Parameters)
		rep.BitsPerWeight = 8 * float64(outData) / float64(rep.Parameters)
	}
	if rep.Fallbacks > 0 {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf(
			"%d of %d weight matrices have rows that are not whole blocks of the recipe's type and use llama.cpp's fallback: %s",
			rep.Fallbacks, matrices, countList(fallbacks)))
	}

	w := &writer{ctx: ctx, src: src, choices: choices, threads: threads, total: inData, progress: opt.Progress}
	size := int64(len(hdr)) + dataSize
	if err := writeAtomic(out, size, func(f io.Writer) error {
		return w.write(f, hdr, order, offsets)
	}); err != nil {
		return rep, err
	}
	rep.OutBytes = size
	rep.Duration = time.Since(start)
	return rep, nil
}

// checkPaths refuses to write over the input, which is mapped while the
// output is written.
func checkPaths(in, out string) error {
	si, err := os.Stat(in)
	if err != nil {
		return fmt.Errorf("quantize: %w", err)
	}
	if so, err := os.Stat(out); err == nil && os.SameFile(si, so) {
		return fmt.Errorf("quantize: output %s is the input file", out)
	}
	return nil
}

// checkConversions refuses requantization unless allowed, and conversions
// engine/quant cannot do, before anything is written.
func checkConversions(src *gguf.File, choices []Choice, allow bool) ([]string, error) {
	requant := map[string]int{}
	for i, ti := range src.Tensors {
		c := choices[i]
		if !c.Convert {
			continue
		}
		if err := quant.Dequantize(ti.Type, make([]byte, ti.Type.TypeSize()), make([]float32, ti.Type.BlockSize())); err != nil {
			return nil, fmt.Errorf("quantize: tensor %q: cannot convert from %v: %w", ti.Name, ti.Type, err)
		}
		if err := quant.Quantize(c.Type, make([]float32, c.Type.BlockSize()), make([]byte, c.Type.TypeSize())); err != nil {
			return nil, fmt.Errorf("quantize: tensor %q: cannot convert to %v: %w", ti.Name, c.Type, err)
		}
		if ti.Type != quant.F32 && ti.Type != quant.F16 && ti.Type != quant.BF16 {
			requant[ti.Type.String()]++
		}
	}
	if len(requant) == 0 {
		return nil, nil
	}
	list := countList(requant)
	if !allow {
		return nil, fmt.Errorf("quantize: %w (%s weight matrices); quantizing it again loses more than quantizing the F32/F16/BF16 original: allow it with --allow-requantize",
			ErrRequantize, list)
	}
	return []string{fmt.Sprintf("requantizing: %s weight matrices are dequantized and quantized again, which loses more than quantizing the F32/F16/BF16 original", list)}, nil
}

// countList formats counts as "A ×3, B ×1", largest first.
func countList(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s ×%d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

// header encodes the output's metadata and tensor infos, padded to the
// alignment, and returns each tensor's data offset (indexed like
// src.Tensors) and the size of the data section.
//
// The metadata goes through gguf.Writer, which encodes it exactly as
// llama.cpp does; written without tensors, its output is the header up
// to the tensor infos, with a tensor count of 0 that is patched here.
func header(src *gguf.File, ft FileType, order []int, choices []Choice) ([]byte, []uint64, int64, error) {
	w := gguf.NewWriter()
	for _, kv := range src.KV {
		switch kv.Key {
		case "general.quantization_version", "general.file_type", "split.no", "split.count", "split.tensors.count":
			// llama.cpp sets the first two again (at the end) and drops
			// the split keys: the output is one file.
			continue
		}
		if err := w.SetKV(kv.Key, kv.Value); err != nil {
			return nil, nil, 0, fmt.Errorf("quantize: %w", err)
		}
	}
	if err := w.SetKV("general.quantization_version", uint32(2)); err != nil {
		return nil, nil, 0, fmt.Errorf("quantize: %w", err)
	}
	if err := w.SetKV("general.file_type", ft.ID); err != nil {
		return nil, nil, 0, fmt.Errorf("quantize: %w", err)
	}
	var buf bytes.Buffer
	if _, err := w.WriteTo(&buf); err != nil {
		return nil, nil, 0, fmt.Errorf("quantize: %w", err)
	}
	hdr := buf.Bytes()
	if len(hdr) < 24 || string(hdr[:4]) != "GGUF" || binary.LittleEndian.Uint64(hdr[8:]) != 0 {
		return nil, nil, 0, fmt.Errorf("quantize: unexpected metadata encoding")
	}
	binary.LittleEndian.PutUint64(hdr[8:], uint64(len(order)))

	align := src.Alignment
	if align == 0 {
		align = gguf.DefaultAlignment
	}
	le := binary.LittleEndian
	offsets := make([]uint64, len(src.Tensors))
	var off uint64
	for _, i := range order {
		ti := &src.Tensors[i]
		t := choices[i].Type
		rowSize, ok := t.RowSize(int(ti.Shape[0]))
		if !ok {
			return nil, nil, 0, fmt.Errorf("quantize: tensor %q: rows of %d are not whole %v blocks", ti.Name, ti.Shape[0], t)
		}
		size := uint64(rowSize) * (ti.Elements() / ti.Shape[0])
		offsets[i] = off
		hdr = le.AppendUint64(hdr, uint64(len(ti.Name)))
		hdr = append(hdr, ti.Name...)
		hdr = le.AppendUint32(hdr, uint32(len(ti.Shape)))
		for _, d := range ti.Shape {
			hdr = le.AppendUint64(hdr, d)
		}
		hdr = le.AppendUint32(hdr, uint32(t))
		hdr = le.AppendUint64(hdr, off)
		off = alignUp(off+size, align)
	}
	if len(order) > 0 {
		hdr = append(hdr, make([]byte, alignUp(uint64(len(hdr)), align)-uint64(len(hdr)))...)
	}
	return hdr, offsets, int64(off), nil
}

func alignUp(n, a uint64) uint64 { return (n + a - 1) / a * a }

// writeAtomic writes a file of the expected size through fill
// (internal/atomicfile: a temporary file renamed over path when complete).
// On any failure path is untouched and the temporary file is removed; a
// full disk is reported as ErrDiskFull with the size needed.
func writeAtomic(path string, expect int64, fill func(io.Writer) error) error {
	var fillErr error // fill's own errors are already worded; atomicfile's are not
	err := atomicfile.Write(path, 0o644, func(w io.Writer) error {
		if wrapOutput != nil {
			w = wrapOutput(w)
		}
		cw := &iocount.Writer{W: w}
		fillErr = fill(cw)
		if fillErr == nil && cw.N != expect {
			fillErr = fmt.Errorf("quantize: wrote %d bytes, expected %d", cw.N, expect)
		}
		return fillErr
	})
	switch {
	case err == nil:
		return nil
	case isDiskFull(err) && !errors.Is(err, ErrDiskFull):
		return fmt.Errorf("quantize: %w for %s (it needs %.1f MiB): %w", ErrDiskFull, path, float64(expect)/(1<<20), err)
	case err == fillErr:
		return err
	default:
		return fmt.Errorf("quantize: %s: %w", path, err)
	}
}

// writer streams the tensors of the output.
type writer struct {
	ctx      context.Context
	src      *gguf.File
	choices  []Choice
	threads  int
	total    int64
	done     int64
	progress func(done, total int64)
	buf      []byte
}

func (w *writer) step(n int64) error {
	w.done += n
	if w.progress != nil {
		w.progress(w.done, w.total)
	}
	if err := w.ctx.Err(); err != nil {
		return fmt.Errorf("quantize: %w", err)
	}
	return nil
}

func (w *writer) write(out io.Writer, hdr []byte, order []int, offsets []uint64) error {
	if _, err := out.Write(hdr); err != nil {
		return fmt.Errorf("quantize: write header: %w", err)
	}
	if w.progress != nil {
		w.progress(0, w.total)
	}
	var pos uint64
	zeros := make([]byte, 256)
	for _, i := range order {
		ti := &w.src.Tensors[i]
		// Padding after the previous tensor.
		for pad := offsets[i] - pos; pad > 0; {
			k := min(pad, uint64(len(zeros)))
			if _, err := out.Write(zeros[:k]); err != nil {
				return fmt.Errorf("quantize: write padding: %w", err)
			}
			pad -= k
		}
		data, err := w.src.TensorData(ti)
		if err != nil {
			return fmt.Errorf("quantize: %w", err)
		}
		var n uint64
		if w.choices[i].Convert {
			n, err = w.convert(out, ti, w.choices[i].Type, data)
		} else {
			n, err = w.copy(out, data)
		}
		if err != nil {
			return err
		}
		pos = offsets[i] + n
	}
	// llama.cpp pads after the last tensor too.
	if len(order) > 0 {
		align := w.src.Alignment
		if align == 0 {
			align = gguf.DefaultAlignment
		}
		for pad := alignUp(pos, align) - pos; pad > 0; {
			k := min(pad, uint64(len(zeros)))
			if _, err := out.Write(zeros[:k]); err != nil {
				return fmt.Errorf("quantize: write padding: %w", err)
			}
			pad -= k
		}
	}
	return nil
}

func (w *writer) copy(out io.Writer, data []byte) (uint64, error) {
	for off := 0; off < len(data); off += copyChunk {
		end := min(len(data), off+copyChunk)
		if _, err := out.Write(data[off:end]); err != nil {
			return 0, fmt.Errorf("quantize: write: %w", err)
		}
		if err := w.step(int64(end - off)); err != nil {
			return 0, err
		}
	}
	return uint64(len(data)), nil
}

// convert turns the rows of one tensor into type to, a chunk of rows at a
// time, the rows of a chunk split among the threads.
func (w *writer) convert(out io.Writer, ti *gguf.TensorInfo, to quant.Type, data []byte) (uint64, error) {
	cols := int(ti.Shape[0])
	rows := int(ti.Elements() / ti.Shape[0])
	inRow, ok1 := ti.Type.RowSize(cols)
	outRow, ok2 := to.RowSize(cols)
	if !ok1 || !ok2 || inRow*rows != len(data) {
		return 0, fmt.Errorf("quantize: tensor %q: %v rows of %d do not fit its %d bytes", ti.Name, ti.Type, cols, len(data))
	}
	chunk := max(w.threads, chunkElems/cols)
	if need := min(chunk, rows) * outRow; cap(w.buf) < need {
		w.buf = make([]byte, need)
	}
	scratch := make([][]float32, w.threads)
	for i := range scratch {
		scratch[i] = make([]float32, cols)
	}
	for lo := 0; lo < rows; lo += chunk {
		hi := min(rows, lo+chunk)
		dst := w.buf[:(hi-lo)*outRow]
		src := data[lo*inRow : hi*inRow]
		if err := w.rows(ti.Type, to, cols, lo, src, dst, scratch); err != nil {
			return 0, fmt.Errorf("quantize: tensor %q: %w", ti.Name, err)
		}
		if _, err := out.Write(dst); err != nil {
			return 0, fmt.Errorf("quantize: write: %w", err)
		}
		if err := w.step(int64(len(src))); err != nil {
			return 0, err
		}
	}
	return uint64(rows * outRow), nil
}

// rows converts whole rows from src (rows first, first+1, ... of the
// tensor) into dst with up to w.threads goroutines, each on a contiguous
// run of rows.
func (w *writer) rows(from, to quant.Type, cols, first int, src, dst []byte, scratch [][]float32) error {
	inRow, _ := from.RowSize(cols)
	outRow, _ := to.RowSize(cols)
	n := len(src) / inRow
	work := func(x []float32, lo, hi int) error {
		for r := lo; r < hi; r++ {
			if err := quant.Dequantize(from, src[r*inRow:(r+1)*inRow], x); err != nil {
				return err
			}
			for _, v := range x {
				if v-v != 0 {
					return fmt.Errorf("row %d: %w (%v)", first+r, ErrNonFinite, v)
				}
			}
			if err := quant.Quantize(to, x, dst[r*outRow:(r+1)*outRow]); err != nil {
				return err
			}
		}
		return nil
	}
	k := min(w.threads, n)
	if k <= 1 {
		return work(scratch[0], 0, n)
	}
	per := (n + k - 1) / k
	errs := make([]error, k)
	var wg sync.WaitGroup
	for j := 0; j < k; j++ {
		lo, hi := j*per, min(n, (j+1)*per)
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[j] = work(scratch[j], lo, hi)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
