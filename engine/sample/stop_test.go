package sample

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestStopMatcher(t *testing.T) {
	an := "안" // EC 95 88
	tests := []struct {
		name      string
		stops     []string
		pieces    []string
		emits     []string // one per piece
		stopped   bool
		flush     string
		stoppedAt int // index of the piece that completes the stop
	}{
		{
			name:   "no stops passes text through",
			pieces: []string{"Hello", ", ", "world"},
			emits:  []string{"Hello", ", ", "world"},
		},
		{
			name:      "stop inside one piece",
			stops:     []string{"</s>"},
			pieces:    []string{"abc</s>def"},
			emits:     []string{"abc"},
			stopped:   true,
			stoppedAt: 0,
		},
		{
			name:      "stop spanning three pieces",
			stops:     []string{"</s>"},
			pieces:    []string{"Hi <", "/s", ">tail"},
			emits:     []string{"Hi ", "", ""},
			stopped:   true,
			stoppedAt: 2,
		},
		{
			name:   "false alarm releases the held text",
			stops:  []string{"</s>"},
			pieces: []string{"a<", "/b", "c"},
			emits:  []string{"a", "</b", "c"},
		},
		{
			name:   "held prefix restarts inside itself",
			stops:  []string{"aab"},
			pieces: []string{"xa", "a", "a", "b"},
			emits:  []string{"x", "", "a", ""},
			// "xaaab" contains "aab" starting after the first a.
			stopped:   true,
			stoppedAt: 3,
		},
		{
			name:      "shorter of overlapping stops ends first",
			stops:     []string{"abc", "ab"},
			pieces:    []string{"xa", "bc"},
			emits:     []string{"x", ""},
			stopped:   true,
			stoppedAt: 1,
		},
		{
			name:   "longer stop held while it can still match",
			stops:  []string{"ab", "abc"},
			pieces: []string{"xa", "c"},
			emits:  []string{"x", "ac"},
		},
		{
			name:   "prefix of the longer stop only",
			stops:  []string{"abc"},
			pieces: []string{"xab", "d"},
			emits:  []string{"x", "abd"},
		},
		{
			name:      "earliest of two stops wins",
			stops:     []string{"world", "lo w"},
			pieces:    []string{"hello world"},
			emits:     []string{"hel"},
			stopped:   true,
			stoppedAt: 0,
		},
		{
			name:      "Korean stop across pieces",
			stops:     []string{"사용자:"},
			pieces:    []string{"안녕하세요 사", "용자: 더"},
			emits:     []string{"안녕하세요 ", ""},
			stopped:   true,
			stoppedAt: 1,
		},
		{
			name:      "Korean stop split inside a rune",
			stops:     []string{"그만"},
			pieces:    []string{"좋아요 \xea\xb7", "\xb8\xeb", "\xa7\x8c 해"},
			emits:     []string{"좋아요 ", "", ""},
			stopped:   true,
			stoppedAt: 2,
		},
		{
			name:   "incomplete rune held back without stops",
			pieces: []string{an[:2], an[2:] + "녕"},
			emits:  []string{"", "안녕"},
		},
		{
			name:   "incomplete rune after held stop prefix",
			stops:  []string{"<|end|>"},
			pieces: []string{"x<|e", "x" + an[:1], an[1:]},
			emits:  []string{"x", "<|ex", an},
		},
		{
			name:   "flush returns the held-back prefix",
			stops:  []string{"###"},
			pieces: []string{"hello #", "#"},
			emits:  []string{"hello ", ""},
			flush:  "##",
		},
		{
			name:   "flush returns an incomplete rune as it is",
			pieces: []string{"ok" + an[:2]},
			emits:  []string{"ok"},
			flush:  an[:2],
		},
		{
			name:   "empty stop strings are ignored",
			stops:  []string{"", "zz"},
			pieces: []string{"abc"},
			emits:  []string{"abc"},
		},
		{
			name:   "invalid bytes are not held forever",
			pieces: []string{"a\x95\x88", "b\xff"},
			emits:  []string{"a\x95\x88", "b\xff"},
		},
		{
			name:      "feeding after the stop yields nothing",
			stops:     []string{"."},
			pieces:    []string{"one. two", "three"},
			emits:     []string{"one", ""},
			stopped:   true,
			stoppedAt: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewStopMatcher(tt.stops)
			stopped := false
			for i, piece := range tt.pieces {
				emit, st := m.Feed(piece)
				if emit != tt.emits[i] {
					t.Fatalf("Feed(%q) #%d emitted %q, want %q", piece, i, emit, tt.emits[i])
				}
				if st && !stopped && i != tt.stoppedAt {
					t.Fatalf("stopped at piece %d, want %d", i, tt.stoppedAt)
				}
				if stopped && !st {
					t.Fatalf("piece %d: stopped went back to false", i)
				}
				stopped = st
			}
			if stopped != tt.stopped {
				t.Fatalf("stopped = %v, want %v", stopped, tt.stopped)
			}
			if got := m.Flush(); got != tt.flush {
				t.Fatalf("Flush() = %q, want %q", got, tt.flush)
			}
			if got := m.Flush(); got != "" {
				t.Fatalf("second Flush() = %q, want empty", got)
			}
		})
	}
}

func TestStopMatcherReset(t *testing.T) {
	m := NewStopMatcher([]string{"END"})
	if emit, st := m.Feed("aEND"); emit != "a" || !st {
		t.Fatalf("Feed = %q, %v", emit, st)
	}
	m.Reset()
	if emit, st := m.Feed("bE"); emit != "b" || st {
		t.Fatalf("after Reset Feed = %q, %v", emit, st)
	}
	m.Reset()
	if got := m.Flush(); got != "" {
		t.Fatalf("Reset kept held text %q", got)
	}
}

// Every way of cutting the text into three pieces, at any byte (so also
// inside runes), must emit the same text: everything before the first stop
// (or all of it, with Flush), only whole runes in each emit, and never a
// byte of a stop string.
func TestStopMatcherAllSplits(t *testing.T) {
	cases := []struct {
		text  string
		stops []string
	}{
		{"사용자: 안녕하세요! 어시스턴트: 반갑습니다 사용자: 또", []string{"사용자: 또", "어시스턴트:"}},
		{"가나다라마바사 그만해 아자차", []string{"그만", "그만해"}},
		{"abcabcabd<|im_end|>tail", []string{"abd<|im", "<|im_end|>", "abcabd"}},
		{"no stop here: 한국어 텍스트 🙂 끝", []string{"끝내", "🙃"}},
		{"émoji 🙂 and 한글 mixed", nil},
	}
	for _, tc := range cases {
		want, wantStop := tc.text, false
		first := -1
		for _, s := range tc.stops {
			if i := strings.Index(tc.text, s); i >= 0 && (first < 0 || i < first) {
				first = i
			}
		}
		if first >= 0 {
			want, wantStop = tc.text[:first], true
		}
		n := len(tc.text)
		for i := 0; i <= n; i++ {
			for j := i; j <= n; j++ {
				m := NewStopMatcher(tc.stops)
				var out strings.Builder
				stopped := false
				for _, piece := range []string{tc.text[:i], tc.text[i:j], tc.text[j:]} {
					emit, st := m.Feed(piece)
					if !utf8.ValidString(emit) {
						t.Fatalf("%q split at %d,%d: emitted invalid UTF-8 %q", tc.text, i, j, emit)
					}
					out.WriteString(emit)
					stopped = st
				}
				if !stopped {
					out.WriteString(m.Flush())
				}
				if out.String() != want || stopped != wantStop {
					t.Fatalf("%q split at %d,%d: got %q (stopped %v), want %q (stopped %v)",
						tc.text, i, j, out.String(), stopped, want, wantStop)
				}
			}
		}
	}
}

// Text that cannot begin a stop string is emitted at once, not held.
func TestStopMatcherHoldsOnlyPrefixes(t *testing.T) {
	m := NewStopMatcher([]string{"<|im_end|>", "\n\nUser:"})
	var got []string
	for _, p := range []string{"The", " answer", " is", " <", "b>", "\n", "\nU", "ser", "name"} {
		emit, _ := m.Feed(p)
		got = append(got, emit)
	}
	want := []string{"The", " answer", " is", " ", "<b>", "", "", "", "\n\nUsername"}
	if !slices.Equal(got, want) {
		t.Fatalf("emits = %q, want %q", got, want)
	}
}
