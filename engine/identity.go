package engine

import (
	"encoding/hex"
	"fmt"
	"sync"
)

// Identity pins the exact weights a KV cache was computed with, and the
// cache's shape. Two identities are equal (==) exactly when a snapshot
// made under one can be restored under the other.
type Identity struct {
	FileSize int64
	// Hash is SHA-256 over the GGUF header (version, metadata, tensor
	// infos, alignment) and sampled chunks of the tensor data; see
	// Model.Identity.
	Hash         [32]byte
	Architecture string
	Context      int    // the sequence's KV capacity (0 from Model.Identity)
	KVType       KVType // the sequence's KV storage (KVF16 from Model.Identity)
	Format       uint32 // SnapshotFormat
}

// String is a short form for logs.
func (id Identity) String() string {
	return fmt.Sprintf("%s %d bytes sha256:%s… ctx=%d kv=%v format=%d",
		id.Architecture, id.FileSize, hex.EncodeToString(id.Hash[:6]), id.Context, id.KVType, id.Format)
}

// identityCache holds a model's Identity once its hash is computed.
type identityCache struct {
	mu   sync.Mutex
	done bool
	id   Identity
}

// Identity identifies the model file exactly: its size and a SHA-256 over
// the whole GGUF header (metadata and tensor infos, encoded as the file
// encodes them) plus the first and last MiB of the tensor data and 64 KiB
// at 64 evenly spaced offsets. Context and KVType are left zero; see
// Sequence.Identity.
//
// It is not a hash of the whole file because that reads every byte: a
// 5 GB model would take seconds of I/O (minutes from a cold disk) just to
// decide whether a KV snapshot may be used, more than the prefill it
// saves. The sample costs about 6 MiB of reads and a few milliseconds.
// What it can miss is an edit of a few weights between the samples of a
// file with the very same header and size: model files are not edited in
// place like that (requantizing or fine-tuning changes the header's
// metadata or the data everywhere), and the price of a miss is a slightly
// wrong cache, not a crash.
//
// The hash is taken from the loaded model (its parsed header and its
// mapped or read weights), never from the path again, so it describes
// the weights in use even if the file is replaced on disk. It is computed
// on the first call and cached; safe for concurrent use.
func (m *Model) Identity() Identity {
	c := &m.ident
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return c.id
	}
	id := Identity{Architecture: m.net.Config().Arch, Format: SnapshotFormat}
	if f := m.file; f != nil {
		id.FileSize = f.Size()
		if h, err := modelHash(f); err == nil {
			id.Hash, c.done = h, true
		}
	}
	// Without weights (a closed model) the hash stays zero, which
	// ReadSnapshot never accepts, and the next call tries again.
	c.id = id
	return id
}

// Identity is the model's identity with the sequence's context length
// and KV cache type: what its snapshot's header records.
func (s *Sequence) Identity() Identity {
	id := s.m.Identity()
	id.Context = s.ctxLen
	id.KVType = kvTypeOf(s.kvType)
	return id
}
