package iocount

import (
	"bytes"
	"errors"
	"testing"
)

// short takes at most room bytes, then fails.
type short struct{ room int }

func (s *short) Write(p []byte) (int, error) {
	n := min(len(p), s.room)
	s.room -= n
	if n < len(p) {
		return n, errors.New("full")
	}
	return n, nil
}

func TestWriter(t *testing.T) {
	for _, c := range []struct {
		name   string
		w      Writer
		writes []string
		want   int64
	}{
		{"all taken", Writer{W: &bytes.Buffer{}}, []string{"ab", "", "cde"}, 5},
		{"cut short", Writer{W: &short{room: 3}}, []string{"ab", "cde"}, 3},
	} {
		for _, s := range c.writes {
			c.w.Write([]byte(s))
		}
		if c.w.N != c.want {
			t.Errorf("%s: counted %d bytes, want %d", c.name, c.w.N, c.want)
		}
	}
}
