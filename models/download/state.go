package download

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/churon/churon/internal/atomicfile"
)

// stateVersion changes when the state file's meaning changes; a file of
// another version is ignored (the download starts over).
const stateVersion = 1

// chunk is one byte range [Start, End] (inclusive) of the file, of which
// the first Written bytes are on disk. End is -1 when the size is unknown.
type chunk struct {
	Start   int64 `json:"start"`
	End     int64 `json:"end"`
	Written int64 `json:"written"`
}

func (c *chunk) remaining() int64 {
	if c.End < 0 {
		return -1
	}
	return c.End - c.Start + 1 - c.Written
}

// state is what DEST.part.json holds: enough to resume.
type state struct {
	Version int     `json:"version"`
	URL     string  `json:"url"`
	SHA256  string  `json:"sha256,omitempty"`
	Size    int64   `json:"size"` // -1 unknown
	ETag    string  `json:"etag,omitempty"`
	Ranges  bool    `json:"ranges"`
	Chunks  []chunk `json:"chunks"`
}

func (s *state) written() int64 {
	var n int64
	for _, c := range s.Chunks {
		n += c.Written
	}
	return n
}

func partPath(dest string) string  { return dest + ".part" }
func statePath(dest string) string { return dest + ".part.json" }

// loadState reads the state file of dest. It returns (nil, nil) when there
// is none, or when it does not describe this request or the part file
// disagrees with it: the download then starts over.
func loadState(dest string, req Request) (*state, error) {
	data, err := os.ReadFile(statePath(dest))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("download: read state: %w", err)
	}
	var s state
	if json.Unmarshal(data, &s) != nil || s.Version != stateVersion || s.URL != req.URL ||
		s.SHA256 != req.SHA256 || (req.Size > 0 && s.Size != req.Size) || !s.valid() {
		return nil, nil
	}
	st, err := os.Stat(partPath(dest))
	if err != nil || (s.Size >= 0 && s.Ranges && st.Size() != s.Size) || st.Size() < s.written() {
		return nil, nil
	}
	return &s, nil
}

// valid checks that the chunks tile [0, Size) in order.
func (s *state) valid() bool {
	if s.Size == 0 {
		return len(s.Chunks) == 0
	}
	if s.Size < 0 {
		return len(s.Chunks) == 1 && s.Chunks[0].Start == 0 && s.Chunks[0].End == -1 && s.Chunks[0].Written >= 0
	}
	next := int64(0)
	for _, c := range s.Chunks {
		if c.Start != next || c.End < c.Start-1 || c.Written < 0 || c.Written > c.End-c.Start+1 {
			return false
		}
		next = c.End + 1
	}
	return next == s.Size
}

// save writes the state atomically. The caller has synced the part file.
func (s *state) save(dest string) error {
	data, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("download: encode state: %w", err)
	}
	return writeFileAtomic(statePath(dest), data)
}

// writeFileAtomic replaces path with data, never leaving it half written.
func writeFileAtomic(path string, data []byte) error {
	if err := atomicfile.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("download: write %s: %w", path, err)
	}
	return nil
}

// plan splits a file of size bytes into n nearly equal chunks of at least
// minChunk bytes (one chunk when the size is unknown or ranges are not
// supported).
func plan(size int64, ranges bool, n int, minChunk int64) []chunk {
	if size < 0 {
		return []chunk{{Start: 0, End: -1}}
	}
	if size == 0 {
		return []chunk{}
	}
	if !ranges || n < 1 {
		n = 1
	}
	if minChunk < 1 {
		minChunk = 1
	}
	if max := size / minChunk; int64(n) > max {
		n = int(max)
	}
	if n < 1 {
		n = 1
	}
	out := make([]chunk, n)
	per := size / int64(n)
	for i := range out {
		out[i].Start = int64(i) * per
		out[i].End = out[i].Start + per - 1
	}
	out[n-1].End = size - 1
	return out
}
