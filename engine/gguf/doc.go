// Package gguf reads and writes GGUF files (versions 2 and 3, little-endian),
// the model format of llama.cpp.
//
// Reading validates the whole header before returning: every length and
// count is checked against the bytes left before anything is allocated, and
// every tensor is checked for a known type, a sane shape, an aligned offset
// and data inside the file that overlaps no other tensor. Malformed input
// yields a one-line *FormatError that names the problem and where it is
// (key, tensor, byte offset) and wraps a sentinel from errors.go; it never
// panics.
//
// Open maps the file read-only, so tensor data is never copied:
//
//	f, err := gguf.Open("model.gguf")
//	if err != nil {
//		return err // errors.Is(err, gguf.ErrTruncated): an incomplete download
//	}
//	defer f.Close()
//	arch := f.Architecture()                           // "llama"
//	n, _ := f.Uint(arch + ".block_count")
//	tokens, _ := f.Strings("tokenizer.ggml.tokens")
//	t, _ := f.Tensor("token_embd.weight")             // t.Shape = [n_embd, n_vocab]
//	data, err := f.TensorData(t)                       // t.Size bytes of t.Type blocks
//
// OpenReader reads only the header through an io.ReaderAt (for a remote file
// fetched by HTTP Range). Writer builds files, atomically on disk:
//
//	w := gguf.NewWriter()
//	w.SetKV("general.architecture", "llama")
//	w.AddTensor("output_norm.weight", quant.F32, []uint64{64}, data)
//	err := w.WriteFile("out.gguf")
//
// Limits, beyond the bytes actually present: keys and tensor names up to
// 65535 bytes (MaxKeyLen), string values up to 64 MiB (MaxStringLen), arrays
// nested up to 8 deep, tensors of 1 to 4 dimensions and at most 2^62
// elements, and a header (metadata plus tensor infos) under 1 GiB
// (MaxHeaderSize). Allocation is proportional to the input, never to a
// count the input declares.
//
// A File is immutable and safe for concurrent use; see File.
package gguf
