package sample

import (
	"strings"
	"unicode/utf8"
)

// StopMatcher finds user stop strings in streamed text. It is fed decoded
// text pieces and returns the text that is safe to emit now, holding back
// any suffix that could be the start of a stop string, and whether a stop
// string was completed (the stop string itself is not emitted, nor is
// anything after it).
//
// It never emits part of a UTF-8 rune: a piece that ends inside a
// multi-byte sequence (byte-level BPE tokens often do) has its incomplete
// tail held back until the rest arrives. Matching is on bytes, which is
// exact for valid UTF-8 because no rune's encoding occurs inside another's.
//
// When one stop string is a prefix of another ("ab", "abc"), the shorter
// one stops generation as soon as it is complete: waiting to see whether
// the longer one follows could hold text back forever.
//
// A StopMatcher is not safe for concurrent use.
type StopMatcher struct {
	stops   []string
	pending string
	stopped bool
}

// NewStopMatcher returns a matcher for stops. Empty strings are ignored
// (they would stop before the first token). With no stops it still holds
// back incomplete runes.
func NewStopMatcher(stops []string) *StopMatcher {
	m := &StopMatcher{}
	for _, s := range stops {
		if s != "" {
			m.stops = append(m.stops, s)
		}
	}
	return m
}

// Feed adds a piece of decoded text. It returns the text that can be
// shown now and whether a stop string has been completed; once it has,
// Feed returns "", true until Reset.
func (m *StopMatcher) Feed(piece string) (emit string, stopped bool) {
	if m.stopped {
		return "", true
	}
	text := m.pending + piece
	if i := m.firstStop(text); i >= 0 {
		m.pending = ""
		m.stopped = true
		return text[:i], true
	}
	cut := runeSafeCut(text, len(text)-m.holdBack(text))
	m.pending = text[cut:]
	return text[:cut], false
}

// Flush returns the held-back text at the end of generation (nothing after
// a stop). An incomplete rune at the very end is returned as it is: the
// caller decides how to show broken UTF-8.
func (m *StopMatcher) Flush() string {
	p := m.pending
	m.pending = ""
	return p
}

// Reset readies the matcher for a new generation with the same stops.
func (m *StopMatcher) Reset() {
	m.pending = ""
	m.stopped = false
}

// firstStop returns where the earliest stop string in text begins, or -1.
func (m *StopMatcher) firstStop(text string) int {
	first := -1
	for _, s := range m.stops {
		if i := strings.Index(text, s); i >= 0 && (first < 0 || i < first) {
			first = i
		}
	}
	return first
}

// holdBack returns the length of the longest suffix of text that is a
// proper prefix of some stop string.
func (m *StopMatcher) holdBack(text string) int {
	hold := 0
	for _, s := range m.stops {
		for n := min(len(text), len(s)-1); n > hold; n-- {
			if strings.HasSuffix(text, s[:n]) {
				hold = n
				break
			}
		}
	}
	return hold
}

// runeSafeCut moves cut back to the start of the last rune of text[:cut]
// when that rune is not complete in text[:cut]: either cut splits it or
// text ends before it does. Invalid bytes count as complete, so they are
// emitted rather than held forever.
func runeSafeCut(text string, cut int) int {
	for j := cut - 1; j >= 0 && j >= cut-utf8.UTFMax; j-- {
		if utf8.RuneStart(text[j]) {
			if !utf8.FullRuneInString(text[j:cut]) {
				return j
			}
			break
		}
	}
	return cut
}
