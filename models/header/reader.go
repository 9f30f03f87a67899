package header

import (
	"context"
	"net/http"

	"github.com/churon/churon/models/fit"
)

// Reader reads headers for a service that must not import the engine
// itself (app/models takes one): Local and Remote, shaped as an interface.
type Reader struct{}

// Local reads a local file's header (see Local).
func (Reader) Local(path string) (fit.Meta, error) { return Local(path) }

// Remote reads a remote file's header through Range requests, asking
// authorize (if set) to sign them, and says how many bytes that took.
func (Reader) Remote(ctx context.Context, url string, authorize func(*http.Request)) (fit.Meta, int64, error) {
	m, st, err := Remote(ctx, url, RemoteOptions{Authorize: authorize})
	return m, st.BytesFetched, err
}
