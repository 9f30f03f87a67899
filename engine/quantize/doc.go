// Package quantize makes smaller GGUF models from larger ones, the way
// llama.cpp's llama-quantize does without an importance matrix: the same
// per-tensor type recipes for the _S/_M/_L file types (Plan), the same
// block bytes (engine/quant's reference quantizers), the same metadata and
// tensor order, so that a file quantized here from llama.cpp's source is
// byte-identical to llama.cpp's own output.
//
// File streams: the source is mapped and read one tensor at a time, rows
// are quantized in parallel in chunks, and the output is written to a
// temporary file that is renamed into place only when complete.
//
//	rep, err := quantize.File(ctx, "model-f16.gguf", "model-q4_k_m.gguf", quantize.Options{
//		Type:     "Q4_K_M",
//		Progress: func(done, total int64) { fmt.Printf("\r%3d%%", 100*done/total) },
//	})
//	if err != nil {
//		return err
//	}
//	fmt.Printf("%.2f bits per weight, %v\n", rep.BitsPerWeight, rep.Duration)
//
// Plan and Order are exported for tools that make files of a file type
// directly (models/synth) and must pick the same types.
package quantize
