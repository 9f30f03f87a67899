package ctxio

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReader(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r := Reader(ctx, strings.NewReader("hello, 세계"))
	buf := make([]byte, 5)
	if n, err := r.Read(buf); err != nil || string(buf[:n]) != "hello" {
		t.Fatalf("before cancel: %q, %v", buf[:n], err)
	}
	cancel()
	if n, err := r.Read(buf); n != 0 || !errors.Is(err, context.Canceled) {
		t.Fatalf("after cancel: %d bytes, %v", n, err)
	}
	if _, err := io.ReadAll(r); !errors.Is(err, context.Canceled) {
		t.Fatalf("ReadAll after cancel: %v", err)
	}
}
