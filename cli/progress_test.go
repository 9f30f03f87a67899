package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/churon/churon/models/download"
)

// TestPlainProgressIsShort feeds the printer the snapshots a download
// shows every 200 ms when its output is not a terminal: not one line per
// tick, but for a finished download its start, each
// quarter and its end; a stalled one that fails, nothing (its error
// follows).
func TestPlainProgressIsShort(t *testing.T) {
	const size = 1000
	running := func(done int64) snapshot {
		return snapshot{label: "m.gguf", size: size, done: done, status: download.Running, eta: -1}
	}
	var stalled, steady []snapshot
	for range 30 {
		stalled = append(stalled, snapshot{label: "m.gguf", size: -1, status: download.Running, eta: -1})
	}
	for done := int64(0); done <= size; done += 10 {
		steady = append(steady, running(done))
	}
	cases := []struct {
		name  string
		ticks []snapshot
		last  snapshot
		want  []string
	}{
		{"stalled, then failed", stalled, snapshot{label: "m.gguf", size: -1, status: download.Failed},
			nil},
		{"0 to 100 %", steady, snapshot{label: "m.gguf", size: size, done: size, status: download.Completed},
			[]string{"m.gguf   0% 0 B/1000 B", "m.gguf  25% 250 B/1000 B", "m.gguf  50% 500 B/1000 B",
				"m.gguf  75% 750 B/1000 B", "m.gguf 100% 1000 B/1000 B done"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			p := &pullProgress{w: &buf, label: "m.gguf"}
			for _, s := range c.ticks {
				p.show(s, false)
			}
			p.show(c.last, true)
			want := strings.Join(c.want, "\n")
			if want != "" {
				want += "\n"
			}
			if buf.String() != want {
				t.Errorf("printed:\n%s\nwant:\n%s", buf.String(), want)
			}
		})
	}
}

func TestRetryLine(t *testing.T) {
	cases := []struct {
		tty  bool
		want string
	}{
		{false, "m.gguf: retrying in 4 s (attempt 2 of 8): the server answered 503 Service Unavailable\n"},
		// On a terminal the bar is cleared first, so the line does not
		// end in what is left of it.
		{true, "\r\x1b[Km.gguf: retrying in 4 s (attempt 2 of 8): the server answered 503 Service Unavailable\n"},
	}
	for _, c := range cases {
		var buf bytes.Buffer
		p := &pullProgress{w: &buf, tty: c.tty, label: "m.gguf", barUp: c.tty}
		p.retry(download.Retry{Attempt: 2, Max: 8, Wait: 3600 * time.Millisecond, Err: &download.HTTPError{Status: 503}})
		if buf.String() != c.want {
			t.Errorf("tty %v: %q; want %q", c.tty, buf.String(), c.want)
		}
	}
}
