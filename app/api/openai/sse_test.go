package openai

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func readAll(t testing.TB, in string, max int) ([]Event, error) {
	r := NewSSEReader(strings.NewReader(in), max)
	var evs []Event
	for {
		ev, err := r.Next()
		if err != nil {
			if err == io.EOF {
				return evs, nil
			}
			return evs, err
		}
		evs = append(evs, ev)
	}
}

func TestSSEReader(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Event
		err  error
	}{
		{"one", "data: {}\n\n", []Event{{Data: "{}"}}, nil},
		{"no space", "data:{}\n\n", []Event{{Data: "{}"}}, nil},
		{"two spaces keep one", "data:  x\n\n", []Event{{Data: " x"}}, nil},
		{"crlf", "data: a\r\n\r\ndata: b\r\n\r\n", []Event{{Data: "a"}, {Data: "b"}}, nil},
		{"cr", "data: a\r\rdata: b\r\r\n", []Event{{Data: "a"}, {Data: "b"}}, nil},
		{"bom", "\xef\xbb\xbfdata: a\n\n", []Event{{Data: "a"}}, nil},
		{"multi-line data", "data: a\ndata: b\n\n", []Event{{Data: "a\nb"}}, nil},
		{"comments (llama-server's ping)", ":\n\n: keep-alive\n\ndata: a\n\n", []Event{{Data: "a"}}, nil},
		{"event type", "event: error\ndata: {\"message\":\"x\"}\n\n", []Event{{Type: "error", Data: `{"message":"x"}`}}, nil},
		{"id kept", "id: 7\ndata: a\n\ndata: b\n\n", []Event{{Data: "a", ID: "7"}, {Data: "b", ID: "7"}}, nil},
		{"retry and unknown ignored", "retry: 10\nfoo: bar\ndata: a\n\n", []Event{{Data: "a"}}, nil},
		{"no data: not dispatched", "event: ping\n\ndata: a\n\n", []Event{{Data: "a"}}, nil},
		{"empty data line", "data\n\n", []Event{{Data: ""}}, nil},
		{"blank lines between", "\n\n\ndata: a\n\n\n\n", []Event{{Data: "a"}}, nil},
		{"cut inside an event", "data: a\n\ndata: {\"choi", []Event{{Data: "a"}}, io.ErrUnexpectedEOF},
		{"cut after a data line", "data: a\n\ndata: b\n", []Event{{Data: "a"}}, io.ErrUnexpectedEOF},
		{"ends between events", "data: a\n\n", []Event{{Data: "a"}}, nil},
		{"empty", "", nil, nil},
		{"utf-8 kept", "data: 안녕\n\n", []Event{{Data: "안녕"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readAll(t, tt.in, 0)
			if !errors.Is(err, tt.err) && err != tt.err {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("events = %q, want %q", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("event %d = %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// TestSSEReaderByteAtATime: a stream read a byte at a time (a slow
// network) gives the same events.
func TestSSEReaderByteAtATime(t *testing.T) {
	in := "data: a\r\n\r\n: ping\n\ndata: b\ndata: c\n\ndata: [DONE]\n\n"
	want, err := readAll(t, in, 0)
	if err != nil {
		t.Fatal(err)
	}
	r := NewSSEReader(iotest.OneByteReader(strings.NewReader(in)), 0)
	for i := 0; ; i++ {
		ev, err := r.Next()
		if err == io.EOF {
			if i != len(want) {
				t.Fatalf("%d events, want %d", i, len(want))
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if ev != want[i] {
			t.Fatalf("event %d = %+v, want %+v", i, ev, want[i])
		}
	}
}

func TestSSEReaderBounds(t *testing.T) {
	long := "data: " + strings.Repeat("x", 200<<10) + "\n\n"
	if _, err := readAll(t, long, 100<<10); !errors.Is(err, ErrEventTooLong) {
		t.Fatalf("a 200 KiB line under a 100 KiB bound: %v, want ErrEventTooLong", err)
	}
	many := strings.Repeat("data: "+strings.Repeat("y", 1000)+"\n", 200) + "\n"
	if _, err := readAll(t, many, 100<<10); !errors.Is(err, ErrEventTooLong) {
		t.Fatalf("200 KB of data lines under a 100 KiB bound: %v, want ErrEventTooLong", err)
	}
	evs, err := readAll(t, long, 0)
	if err != nil || len(evs) != 1 || len(evs[0].Data) != 200<<10 {
		t.Fatalf("a 200 KiB line under the default bound: %d events, %v", len(evs), err)
	}
}

// FuzzSSEReader: any bytes give events or an error, never a panic or a
// hang; an event's data never holds a line end it did not have as a
// data line's join; and what a whole read gives, a byte-at-a-time read
// gives too.
func FuzzSSEReader(f *testing.F) {
	for _, s := range []string{
		"data: {}\n\n", "data: a\r\n\r\n", "\xef\xbb\xbfdata: a\r\r", ":\n\ndata: [DONE]\n\n",
		"event: error\ndata: x\n\n", "id: 1\nretry: 5\ndata\n\n", "data: a\ndata: b\n", "data: {\"choi",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		whole, errWhole := readAll(t, string(b), 1<<16)
		r := NewSSEReader(iotest.OneByteReader(strings.NewReader(string(b))), 1<<16)
		var bytewise []Event
		var errByte error
		for {
			ev, err := r.Next()
			if err != nil {
				if err != io.EOF {
					errByte = err
				}
				break
			}
			bytewise = append(bytewise, ev)
		}
		if (errWhole == nil) != (errByte == nil) {
			t.Fatalf("whole read: %v, byte-at-a-time: %v", errWhole, errByte)
		}
		if len(whole) != len(bytewise) {
			t.Fatalf("whole read %d events, byte-at-a-time %d", len(whole), len(bytewise))
		}
		for i := range whole {
			if whole[i] != bytewise[i] {
				t.Fatalf("event %d: %+v vs %+v", i, whole[i], bytewise[i])
			}
			if strings.ContainsRune(whole[i].Data, '\r') {
				t.Fatalf("event %d's data holds a CR: %q", i, whole[i].Data)
			}
		}
	})
}
