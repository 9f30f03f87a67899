// Package fit answers "will this model run on this machine?" before a
// person downloads gigabytes: it reads a GGUF header (of a local file, or
// of a remote one through HTTP Range requests, fetching only the header),
// estimates the memory the model needs at a chosen context length —
// weights, plus the KV cache, plus working buffers — and compares it with
// the machine's memory.
//
//	meta, stats, err := fit.Remote(ctx, url, fit.RemoteOptions{})
//	est := fit.Estimate(meta, 4096)
//	res := fit.Check(est, fit.SystemMemory())
//	fmt.Println(res) // "fits: needs 1.1 GiB of 12.3 GiB available"
package fit
