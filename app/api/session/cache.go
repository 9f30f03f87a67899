package session

import "github.com/churon/churon/models/fit"

// CacheWhere says where a conversation's KV cache is.
type CacheWhere string

const (
	CacheNone CacheWhere = "none" // the next answer processes the whole conversation
	CacheRAM  CacheWhere = "ram"  // in memory: a follow-up costs only its own tokens
	CacheDisk CacheWhere = "disk" // a snapshot on disk, read back on the next answer
)

// CacheState is a conversation's KV cache: an event, sent when it changes
// (after an answer, a snapshot, an eviction, a model change), and the
// answer of Manager.CacheState.
type CacheState struct {
	Conv  int64
	Where CacheWhere
	// Tokens the cache holds where it is, and its size there (memory in
	// RAM, the file on disk).
	Tokens int
	Bytes  int64
	// DiskTokens are the tokens of the snapshot on disk (0: none), which
	// may lag behind the cache in RAM while a snapshot is written.
	DiskTokens int
}

// Budget bounds for the default RAM budget of idle KV caches.
const (
	minKVBudget = 256 << 20
	maxKVBudget = 8 << 30
)

// DefaultKVBudget is the memory idle conversations' KV caches may hold
// when no budget is set: a quarter of the memory available now, between
// 256 MiB and 8 GiB (1 GiB when the system does not say). A quarter
// leaves the model's weights and the running answer their room.
func DefaultKVBudget() int64 {
	mem, err := fit.SystemMemory()
	if err != nil || mem.Available <= 0 {
		return 1 << 30
	}
	return min(max(mem.Available/4, minKVBudget), maxKVBudget)
}

// DefaultKVDiskBudget is the disk budget of KV snapshots when the person
// sets none: the disk cache's own default.
const DefaultKVDiskBudget int64 = 4 << 30 // kvcache.DefaultBudget: a test in app/session keeps the two equal
