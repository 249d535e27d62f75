// Package wire holds what the HTTP model providers share: a Server-Sent
// Events reader, retries with backoff and jitter, and the mapping of HTTP
// failures to provider errors with secrets redacted.
package wire

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// Event is one Server-Sent Event.
type Event struct {
	Name string // the "event:" field; empty for unnamed events
	Data []byte // the "data:" lines joined with "\n"
}

// maxEventBytes bounds one event so a broken server cannot make us buffer
// without end; real events are a few KiB.
const maxEventBytes = 16 << 20

// SSEReader reads events from a text/event-stream body.
type SSEReader struct {
	r       *bufio.Reader
	name    string
	data    bytes.Buffer
	has     bool
	started bool  // the first line was read (a BOM may precede it)
	err     error // sticky: after a failure no half-read event may surface
}

// NewSSEReader reads from r.
func NewSSEReader(r io.Reader) *SSEReader {
	return &SSEReader{r: bufio.NewReaderSize(r, 32<<10)}
}

// Next returns the next event. It returns io.EOF when the body ended
// cleanly and io.ErrUnexpectedEOF when it ended in the middle of a line. A
// last event whose lines are complete but which lacks the closing blank
// line is still delivered. Once Next has returned an error it returns the
// same error on every later call.
func (s *SSEReader) Next() (Event, error) {
	if s.err != nil {
		return Event{}, s.err
	}
	for {
		line, err := s.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) {
				if s.has || s.name != "" {
					// A final event without its blank line: servers that
					// close right after it mean it, so deliver it.
					return s.take(), nil
				}
				s.err = io.EOF
				return Event{}, io.EOF
			}
			s.err = err
			return Event{}, err
		}
		if !s.started {
			// The spec lets a stream open with a byte order mark; left in,
			// it would turn the first field name into garbage.
			s.started = true
			line = bytes.TrimPrefix(line, []byte("\uFEFF"))
		}
		if len(line) == 0 {
			if !s.has && s.name == "" {
				continue
			}
			return s.take(), nil
		}
		if line[0] == ':' {
			continue // comment / keep-alive
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			s.name = string(value)
		case "data":
			if s.has {
				s.data.WriteByte('\n')
			}
			s.data.Write(value)
			s.has = true
			if s.data.Len() > maxEventBytes {
				s.err = fmt.Errorf("sse: event larger than %d bytes", maxEventBytes)
				return Event{}, s.err
			}
		}
		// id and retry are meaningless for a single model response.
	}
}

func (s *SSEReader) take() Event {
	ev := Event{Name: s.name, Data: bytes.Clone(s.data.Bytes())}
	s.name, s.has = "", false
	s.data.Reset()
	return ev
}

// readLine returns one line without its terminator (\n or \r\n).
func (s *SSEReader) readLine() ([]byte, error) {
	var line []byte
	for {
		chunk, err := s.r.ReadSlice('\n')
		line = append(line, chunk...)
		if err == nil {
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(line) > maxEventBytes {
				return nil, fmt.Errorf("sse: line longer than %d bytes", maxEventBytes)
			}
			continue
		}
		if errors.Is(err, io.EOF) && len(line) > 0 {
			// The body ended mid-line: the event is incomplete.
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	return line, nil
}
