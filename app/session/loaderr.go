package session

import (
	"errors"
	"math"
	"os"
	"syscall"

	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/engine/arch"
	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/gguf"
)

// loadError types the engine's load failures (api.LoadError) for the
// front ends, which see no engine type; other errors pass unchanged.
func loadError(path string, err error) error {
	le := &api.LoadError{Path: path, Err: err}
	switch {
	case errors.Is(err, gguf.ErrTruncated):
		le.Kind = api.LoadIncomplete
		le.Have, le.Want = fileSizes(path)
	case errors.Is(err, gguf.ErrNotGGUF), errors.Is(err, gguf.ErrUnsupportedVersion):
		le.Kind = api.LoadNotModel
	case errors.Is(err, arch.ErrUnknownArchitecture):
		le.Kind = api.LoadUnsupported
		le.Arch = architecture(path)
		le.Supported = arch.Names()
	case errors.Is(err, syscall.ENOMEM), errors.Is(err, backend.ErrOutOfMemory):
		le.Kind = api.LoadOutOfMemory
	default:
		return err
	}
	return le
}

// fileSizes is a truncated file's size and the size its header says it
// has (0 when the header cannot say): the header is read as if the file
// were whole, so that its tensors' extents can be summed.
func fileSizes(path string) (have, want int64) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil {
		have = st.Size()
	}
	g, err := gguf.OpenReader(f, math.MaxInt64/2)
	if err != nil {
		return have, 0
	}
	end := uint64(0)
	for _, t := range g.Tensors {
		end = max(end, t.Offset+t.Size)
	}
	if len(g.Tensors) > 0 {
		want = int64(g.DataOffset + end)
	}
	return have, want
}

// architecture is the file's general.architecture, "" when unreadable.
func architecture(path string) string {
	g, err := gguf.Open(path)
	if err != nil {
		return ""
	}
	defer g.Close()
	return g.Architecture()
}
