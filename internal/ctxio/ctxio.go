// Package ctxio makes long reads stop when their context is cancelled:
// hashing a multi-gigabyte model or restoring a large KV snapshot must
// not outlive the person's "Cancel".
package ctxio

import (
	"context"
	"io"
)

// Reader returns a reader that reads from r until ctx is done, then
// fails every read with ctx's error.
func Reader(ctx context.Context, r io.Reader) io.Reader { return reader{ctx, r} }

type reader struct {
	ctx context.Context
	r   io.Reader
}

func (c reader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
