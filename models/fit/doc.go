// Package fit answers "will this model run on this machine?" before a
// person downloads gigabytes: from what a GGUF header says (read by
// models/header, locally or over HTTP Range requests), it estimates the
// memory the model needs at a chosen context length —
// weights, plus the KV cache, plus working buffers — and compares it with
// the machine's memory.
//
//	meta, stats, err := header.Remote(ctx, url, header.RemoteOptions{})
//	est := fit.Estimate(meta, 4096)
//	res := fit.Check(est, fit.SystemMemory())
//	fmt.Println(res) // "fits: needs 1.1 GiB of 12.3 GiB available"
package fit
