package testutil

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// recorder is a testing.TB that keeps what Error reports.
type recorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recorder) Helper() {}

func (r *recorder) Error(args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprint(args...))
}

func TestConcurrently(t *testing.T) {
	var calls atomic.Int64
	r := &recorder{TB: t}
	Concurrently(r, 4, 10, func(g, i int) error {
		calls.Add(1)
		if g == 1 && i%5 == 0 {
			return fmt.Errorf("g%d i%d", g, i)
		}
		return nil
	})
	slices.Sort(r.errs)
	if calls.Load() != 40 || !slices.Equal(r.errs, []string{"g1 i0", "g1 i5"}) {
		t.Errorf("%d calls, errors %q; want 40 calls and g1's two", calls.Load(), r.errs)
	}
}

func TestTokens(t *testing.T) {
	cases := []struct {
		n, vocab int
		seed     uint64
	}{{0, 10, 1}, {50, 2, 1}, {200, 320, 7}}
	for _, c := range cases {
		ids := Tokens(c.n, c.vocab, c.seed)
		if len(ids) != c.n || !slices.Equal(ids, Tokens(c.n, c.vocab, c.seed)) {
			t.Errorf("Tokens(%d, %d, %d): %d ids, or not the same twice", c.n, c.vocab, c.seed, len(ids))
		}
		for _, id := range ids {
			if id < 1 || int(id) >= c.vocab {
				t.Fatalf("Tokens(%d, %d, %d) gave %d", c.n, c.vocab, c.seed, id)
			}
		}
	}
	if slices.Equal(Tokens(20, 320, 1), Tokens(20, 320, 2)) {
		t.Error("two seeds, the same tokens")
	}
}

const childEnv = "CHURON_TESTUTIL_CHILD"

// TestStartChild: the child sees its variable and writes to the pipe; a
// child that hangs is killed at the limit.
func TestStartChild(t *testing.T) {
	switch os.Getenv(childEnv) {
	case "echo":
		fmt.Println("hello from the child")
		os.Exit(0)
	case "hang":
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	if testing.Short() {
		t.Skip("starts a child process")
	}
	cmd, out := StartChild(t, 0, "^TestStartChild$", childEnv+"=echo")
	b, err := io.ReadAll(out)
	if err != nil || strings.TrimSpace(string(b)) != "hello from the child" {
		t.Fatalf("read %q, %v", b, err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	cmd, out = StartChild(t, 200*time.Millisecond, "^TestStartChild$", childEnv+"=hang")
	io.Copy(io.Discard, out)
	if err := cmd.Wait(); err == nil || time.Since(start) > 30*time.Second {
		t.Fatalf("the hanging child was not killed at the limit: %v after %v", err, time.Since(start))
	}
}

// TestBuffer: writes from many goroutines at once all land, whole (run
// with -race, a buffer without its lock fails here).
func TestBuffer(t *testing.T) {
	var b Buffer
	Concurrently(t, 4, 50, func(g, i int) error {
		_, err := fmt.Fprintf(&b, "%d.%02d;", g, i)
		return err
	})
	got := strings.Split(strings.TrimSuffix(b.String(), ";"), ";")
	if len(got) != 200 {
		t.Fatalf("%d writes landed, want 200", len(got))
	}
	slices.Sort(got)
	if got[0] != "0.00" || got[199] != "3.49" || len(slices.Compact(got)) != 200 {
		t.Fatalf("writes mangled: first %q, last %q", got[0], got[199])
	}
}
