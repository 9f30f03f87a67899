package session

import (
	"errors"
	"os"
	"syscall"

	api "github.com/churon/churon/app/api/session"
	"github.com/churon/churon/engine/arch"
	"github.com/churon/churon/engine/backend"
	"github.com/churon/churon/engine/gguf"
)

// loadError types the engine's load failures (api.LoadError) for the
// front ends, which see no engine type; other errors pass unchanged. The
// engine's errors carry the particulars (gguf.IncompleteError the sizes,
// arch.UnknownArchitectureError the name and what is supported).
func loadError(path string, err error) error {
	le := &api.LoadError{Path: path, Err: err}
	var short *gguf.IncompleteError
	var unknown *arch.UnknownArchitectureError
	switch {
	case errors.As(err, &short):
		le.Kind, le.Have, le.Want = api.LoadIncomplete, short.Size, short.Want
	case errors.Is(err, gguf.ErrTruncated):
		le.Kind = api.LoadIncomplete
		if st, serr := os.Stat(path); serr == nil {
			le.Have = st.Size() // what it should hold: not even the header says
		}
	case errors.Is(err, gguf.ErrNotGGUF), errors.Is(err, gguf.ErrUnsupportedVersion):
		le.Kind = api.LoadNotModel
	case errors.As(err, &unknown):
		le.Kind, le.Arch, le.Supported = api.LoadUnsupported, unknown.Name, unknown.Supported
	case errors.Is(err, syscall.ENOMEM), errors.Is(err, backend.ErrOutOfMemory):
		le.Kind = api.LoadOutOfMemory
	default:
		return err
	}
	return le
}
