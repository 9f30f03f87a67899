// Package kvcache keeps KV cache snapshots on disk, one file per key (the
// session manager uses "conv-<id>"), so that a conversation reopened after
// a restart or a model switch resumes without re-reading its history.
//
// Files live under DefaultDir (xdg.CacheHome/churon/kv, or
// $CHURON_HOME/cache/kv). A file is a header and segments (see the engine's
// snapshot format): a first snapshot is written to a temporary file in the
// same folder, synced, and renamed into place; a later Save of the same
// conversation appends a segment of only what changed since — the new
// tokens after a follow-up, the tail after an edit — and syncs it. For a
// real 8B model (128 KiB of F16 KV per token) a follow-up of 200 tokens
// after 4,000 writes 25 MiB instead of 512. A file that would grow past
// twice the state's own snapshot (many edits) is compacted: written whole
// again. A reader — in this process or another — sees the old state or
// the new one, never a mix: an append only adds bytes, and a torn one
// (a killed process) reads as the state before it and is cut off by the
// next Save. Appends take a file lock (flock), so that two processes never
// append to one file at once; where files cannot be locked, every Save
// writes the file whole. A temporary file left by a killed process is
// removed by the next Open. The folder is kept under a disk budget by
// deleting the least recently used snapshots (by modification time; Load
// touches a file it restores).
//
// Load never trusts a file: the engine checks the model's identity, the
// context length, the KV type, the format version and a checksum over
// every byte. A snapshot that fails is deleted and the error wraps
// ErrDiscarded with the reason; the caller then prefills from the tokens.
//
//	st, err := kvcache.Open(kvcache.DefaultDir(), 4<<30)
//	...
//	if _, err := st.Save("conv-42", seq); err != nil { log.Print(err) }
//	// or, to see what was written:
//	w, err := st.Put("conv-42", seq) // w.Kind: kvcache.Appended, w.Bytes: 1.2 MiB …
//	seq, err := st.Load(ctx, "conv-42", model, engine.SequenceOptions{})
//	switch {
//	case errors.Is(err, kvcache.ErrNotFound):   // no snapshot: prefill
//	case errors.Is(err, kvcache.ErrDiscarded):  // logged, deleted: prefill
//	}
//
// A Store is safe for concurrent use by the goroutines of one process.
package kvcache
