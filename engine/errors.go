package engine

import "errors"

// The engine's sentinel errors. The calls wrap them with the details
// (which sequence, how many tokens, what in a snapshot is wrong), so
// callers test for them with errors.Is.
var (
	// ErrClosed is returned when a closed model or sequence is used: a
	// sequence of a closed model, or one whose own Close ran, and any
	// call on a model after Close.
	ErrClosed = errors.New("engine: closed")

	// ErrContextFull is wrapped when tokens do not fit in a sequence's
	// context: by Feed, FeedBatch and DecodeBatch before anything is
	// computed, and so by Generate and GenerateBatch for a prompt that
	// does not fit (their result's Finish is then FinishContext).
	ErrContextFull = errors.New("engine: context is full")

	// ErrBatch is wrapped by the batch calls (DecodeBatch, FeedBatch,
	// GenerateBatch) for arguments that cannot form a batch: sequences of
	// another model, one sequence twice, mismatched lengths.
	ErrBatch = errors.New("engine: bad batch")

	// ErrSnapshotMismatch is wrapped by ReadSnapshot and RestoreSnapshot
	// for a sound snapshot made for something else: another model file,
	// context length, KV cache type or format version (ScanSnapshot and
	// ReadSnapshotInfo, which have no model, for the format version). A
	// caller that keeps snapshots deletes the file and prefills from the
	// tokens.
	ErrSnapshotMismatch = errors.New("engine: snapshot does not match")

	// ErrSnapshotCorrupt is wrapped by ReadSnapshot, RestoreSnapshot,
	// ScanSnapshot and ReadSnapshotInfo for data that is not a snapshot,
	// is truncated before its first whole segment, fails a checksum
	// (except in a torn final segment), or holds values that cannot be
	// right. A caller deletes the file, as for ErrSnapshotMismatch.
	ErrSnapshotCorrupt = errors.New("engine: snapshot is corrupt")
)
