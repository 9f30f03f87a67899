package openai

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Event is one server-sent event: its type (the "event" field, "" for
// the default, "message") and its data (the "data" lines joined by
// newlines).
type Event struct {
	Type string
	Data string
	ID   string
}

// DefaultMaxEvent bounds one event's bytes (a line or the data of an
// event); past it the reader fails with ErrEventTooLong rather than grow
// without end on a server that never ends a line.
const DefaultMaxEvent = 8 << 20

// ErrEventTooLong: an event or a line of one exceeds the reader's bound.
var ErrEventTooLong = errors.New("openai: server-sent event too long")

// SSEReader reads server-sent events as the HTML standard defines them
// (lines ended by LF, CRLF or CR; a leading BOM dropped; ":" comments;
// "field: value" with one optional space; an event dispatched at a blank
// line; id and retry kept or ignored), because the servers Churon talks
// to differ exactly there: llama-server ends lines with LF, some proxies
// with CRLF, vLLM and Ollama send keep-alive comments, and a stream may
// stop at any byte.
type SSEReader struct {
	r     *bufio.Reader
	max   int
	first bool
	lines [][]byte // lines read but not yet parsed (a chunk held several)
	id    string
}

// NewSSEReader reads events from r; max bounds an event (0:
// DefaultMaxEvent).
func NewSSEReader(r io.Reader, max int) *SSEReader {
	if max <= 0 {
		max = DefaultMaxEvent
	}
	return &SSEReader{r: bufio.NewReaderSize(r, 64<<10), max: max, first: true}
}

// Next returns the next event. At the end of the stream it returns
// io.EOF when the stream ended between events, io.ErrUnexpectedEOF when
// it ended inside one (a data line with no blank line after it: the
// event is incomplete and is not returned), or the reader's error.
func (s *SSEReader) Next() (Event, error) {
	var data bytes.Buffer
	var typ string
	pending := false // a field of the event was read
	for {
		line, err := s.line()
		if err != nil {
			if errors.Is(err, io.EOF) && pending {
				return Event{}, io.ErrUnexpectedEOF
			}
			return Event{}, err
		}
		if len(line) == 0 { // dispatch
			if !pending {
				continue
			}
			if data.Len() == 0 {
				// An event with no data is not dispatched (the standard's
				// rule); its type is forgotten.
				typ, pending = "", false
				continue
			}
			d := data.Bytes()
			d = d[:len(d)-1] // the last data line's newline
			return Event{Type: typ, Data: string(d), ID: s.id}, nil
		}
		if line[0] == ':' {
			continue // a comment: keep-alive
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			if data.Len()+len(value)+1 > s.max {
				return Event{}, fmt.Errorf("%w (more than %d bytes)", ErrEventTooLong, s.max)
			}
			data.Write(value)
			data.WriteByte('\n')
			pending = true
		case "event":
			typ, pending = string(value), true
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				s.id = string(value)
			}
			pending = true
		default: // "retry" and unknown fields are ignored
		}
	}
}

// line returns the next line without its end; io.EOF once none is left
// (a last line without an end is returned first).
func (s *SSEReader) line() ([]byte, error) {
	for len(s.lines) == 0 {
		chunk, err := s.readLine()
		if len(chunk) == 0 && err != nil {
			return nil, err
		}
		if s.first {
			s.first = false
			chunk = bytes.TrimPrefix(chunk, []byte("\xef\xbb\xbf"))
		}
		// chunk ends with "\n" (or is the stream's last bytes): a CR
		// inside it ends a line too, and "\r\n" is one end.
		chunk = bytes.TrimSuffix(chunk, []byte("\n"))
		chunk = bytes.TrimSuffix(chunk, []byte("\r"))
		s.lines = append(s.lines, bytes.Split(chunk, []byte("\r"))...)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
	}
	l := s.lines[0]
	s.lines = s.lines[1:]
	return l, nil
}

// readLine reads up to and including the next LF, at most max bytes.
func (s *SSEReader) readLine() ([]byte, error) {
	var long []byte
	for {
		b, err := s.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(long)+len(b) > s.max {
				return nil, fmt.Errorf("%w (a line of more than %d bytes)", ErrEventTooLong, s.max)
			}
			long = append(long, b...)
			continue
		}
		if long != nil {
			long = append(long, b...)
			if len(long) > s.max {
				return nil, fmt.Errorf("%w (a line of more than %d bytes)", ErrEventTooLong, s.max)
			}
			return long, err
		}
		if len(b) > s.max {
			return nil, fmt.Errorf("%w (a line of more than %d bytes)", ErrEventTooLong, s.max)
		}
		return append([]byte(nil), b...), err
	}
}
