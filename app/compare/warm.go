package compare

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/churon/churon/internal/ggufname"
)

// warm reads a model's file (every part of a split one) once, so that it
// is in the page cache when it is loaded. Without it a model's load time
// and first token measured whether its file happened to be cached — the
// one just downloaded, quantized or chatted with was, the others were not
// — rather than the model. A truly cold start for every model cannot be
// had: the system gives no portable way to drop a file from its cache,
// and none at all for a file the chat still maps. So every model starts
// warm, and the figures say so.
func warm(ctx context.Context, path string) error {
	parts := []string{path}
	if prefix, part, total, ok := ggufname.Split(path); ok && part == 1 {
		for k := 2; k <= total; k++ {
			parts = append(parts, ggufname.PartName(prefix, k, total))
		}
	}
	buf := make([]byte, 4<<20)
	for _, p := range parts {
		if err := readAll(ctx, p, buf); err != nil {
			return fmt.Errorf("compare: %w", err)
		}
	}
	return nil
}

func readAll(ctx context.Context, path string, buf []byte) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		_, err := f.Read(buf)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
