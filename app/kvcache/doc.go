// Package kvcache keeps KV cache snapshots on disk, one file per key (the
// session manager uses "conv-<id>"), so that a conversation reopened after
// a restart or a model switch resumes without re-reading its history.
//
// Files live under DefaultDir (xdg.CacheHome/churon/kv, or
// $CHURON_HOME/cache/kv). A snapshot is written to a temporary file in the
// same folder, synced, and renamed over the old one, so a reader — in this
// process or another — sees the old file or the new one, whole, never a
// mix; a temporary file left by a killed process is removed by the next
// Open. The folder is kept under a disk budget by deleting the least
// recently used snapshots (by modification time; Load touches a file it
// restores).
//
// Load never trusts a file: the engine checks the model's identity, the
// context length, the KV type, the format version and a checksum over
// every byte. A snapshot that fails is deleted and the error wraps
// ErrDiscarded with the reason; the caller then prefills from the tokens.
//
//	st, err := kvcache.Open(kvcache.DefaultDir(), 4<<30)
//	...
//	if _, err := st.Save("conv-42", seq); err != nil { log.Print(err) }
//	seq, err := st.Load(ctx, "conv-42", model, engine.SequenceOptions{})
//	switch {
//	case errors.Is(err, kvcache.ErrNotFound):   // no snapshot: prefill
//	case errors.Is(err, kvcache.ErrDiscarded):  // logged, deleted: prefill
//	}
//
// A Store is safe for concurrent use by the goroutines of one process.
package kvcache
