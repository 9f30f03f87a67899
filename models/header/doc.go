// Package header reads what the memory fit check needs (fit.Meta) from a
// GGUF file's header: of a local file, or of a remote one through HTTP
// Range requests that fetch only the header, not the weights.
//
//	meta, stats, err := header.Remote(ctx, url, header.RemoteOptions{})
//	res := fit.Check(fit.EstimateMemory(meta, 4096), mem)
//
// It is apart from package fit because it needs the engine's GGUF
// reader: fit itself, and what front ends import of it, stays free of
// the engine.
package header
