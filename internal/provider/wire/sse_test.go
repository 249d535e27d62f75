package wire

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

// readAll drains r, returning the events and the error that ended it.
func readAll(t *testing.T, r *SSEReader) ([]Event, error) {
	t.Helper()
	var evs []Event
	for i := 0; ; i++ {
		ev, err := r.Next()
		if err != nil {
			return evs, err
		}
		if i > 1000 {
			t.Fatal("reader does not terminate")
		}
		evs = append(evs, ev)
	}
}

func ev(name, data string) Event { return Event{Name: name, Data: []byte(data)} }

func TestSSEReader(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []Event
		wantErr error
	}{
		{"empty body", "", nil, io.EOF},
		{"one event", "data: hello\n\n", []Event{ev("", "hello")}, io.EOF},
		{"two events", "data: a\n\ndata: b\n\n", []Event{ev("", "a"), ev("", "b")}, io.EOF},
		{"multi-line data joined with newline", "data: a\ndata: b\ndata: c\n\n", []Event{ev("", "a\nb\nc")}, io.EOF},
		{"named event", "event: message_start\ndata: {\"type\":\"message_start\"}\n\n", []Event{ev("message_start", `{"type":"message_start"}`)}, io.EOF},
		{"name does not leak into the next event", "event: a\ndata: 1\n\ndata: 2\n\n", []Event{ev("a", "1"), ev("", "2")}, io.EOF},
		{"CRLF line endings", "event: x\r\ndata: y\r\n\r\n", []Event{ev("x", "y")}, io.EOF},
		{"no space after colon", "data:x\n\n", []Event{ev("", "x")}, io.EOF},
		{"only one leading space is stripped", "data:  x \n\n", []Event{ev("", " x ")}, io.EOF},
		{"colons inside the value", "data: {\"a\":\"b:c\"}\n\n", []Event{ev("", `{"a":"b:c"}`)}, io.EOF},
		{"comments and keep-alives are skipped", ": ping\n\n: OPENROUTER PROCESSING\n\ndata: y\n\n", []Event{ev("", "y")}, io.EOF},
		{"comment inside an event", "data: a\n: note\ndata: b\n\n", []Event{ev("", "a\nb")}, io.EOF},
		{"id, retry and unknown fields are ignored", "id: 7\nretry: 100\nfoo: bar\ndata: z\n\n", []Event{ev("", "z")}, io.EOF},
		{"extra blank lines between events", "\n\n\ndata: a\n\n\n\ndata: b\n\n\n", []Event{ev("", "a"), ev("", "b")}, io.EOF},
		{"empty data is an event", "data:\n\n", []Event{ev("", "")}, io.EOF},
		{"field name without colon", "data\n\n", []Event{ev("", "")}, io.EOF},
		{"event with a name only", "event: ping\n\n", []Event{ev("ping", "")}, io.EOF},
		{"last event without its blank line is delivered", "data: a\n\ndata: last\n", []Event{ev("", "a"), ev("", "last")}, io.EOF},
		{"body cut mid-line", "data: a\n\ndata: {\"par", []Event{ev("", "a")}, io.ErrUnexpectedEOF},
		{"body cut mid-line inside a multi-line event", "data: a\ndata: b", nil, io.ErrUnexpectedEOF},
		{"byte order mark at the start", "\uFEFFdata: x\n\n", []Event{ev("", "x")}, io.EOF},
		{"byte order mark only stripped at the start", "data: a\n\n\uFEFFdata: b\n\n", []Event{ev("", "a")}, io.EOF},
		{"unicode survives", "data: héllo 👋 日本\n\n", []Event{ev("", "héllo 👋 日本")}, io.EOF},
		{"done marker", "data: {\"x\":1}\n\ndata: [DONE]\n\n", []Event{ev("", `{"x":1}`), ev("", "[DONE]")}, io.EOF},
	}
	readers := map[string]func(string) io.Reader{
		"whole":    func(s string) io.Reader { return strings.NewReader(s) },
		"one byte": func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
		"half":     func(s string) io.Reader { return iotest.HalfReader(strings.NewReader(s)) },
	}
	for _, tt := range tests {
		for rn, mk := range readers {
			t.Run(tt.name+"/"+rn, func(t *testing.T) {
				got, err := readAll(t, NewSSEReader(mk(tt.in)))
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("error %v, want %v", err, tt.wantErr)
				}
				if len(got) != len(tt.want) {
					t.Fatalf("got %d events %q, want %q", len(got), got, tt.want)
				}
				for i := range got {
					if got[i].Name != tt.want[i].Name || string(got[i].Data) != string(tt.want[i].Data) {
						t.Fatalf("event %d = {%q %q}, want {%q %q}", i, got[i].Name, got[i].Data, tt.want[i].Name, tt.want[i].Data)
					}
				}
			})
		}
	}
}

func TestSSEReaderErrorsAreSticky(t *testing.T) {
	// A cut inside a multi-line event must not let the half event out on
	// a later call.
	r := NewSSEReader(strings.NewReader("data: a\ndata: b"))
	for i := range 3 {
		ev, err := r.Next()
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("call %d: event %q err %v, want ErrUnexpectedEOF", i, ev.Data, err)
		}
	}
	r = NewSSEReader(strings.NewReader("data: a\n\n"))
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := r.Next(); err != io.EOF {
			t.Fatalf("err %v, want io.EOF", err)
		}
	}
}

func TestSSEReaderPassesReadErrors(t *testing.T) {
	boom := errors.New("connection reset by peer")
	r := NewSSEReader(io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom)))
	got, err := readAll(t, r)
	if !errors.Is(err, boom) || len(got) != 1 || string(got[0].Data) != "a" {
		t.Fatalf("events %q err %v, want [a] and the read error", got, err)
	}
}

func TestSSEReaderLongLines(t *testing.T) {
	// Longer than the reader's buffer: the line arrives in pieces.
	long := strings.Repeat("x", 200<<10)
	got, err := readAll(t, NewSSEReader(strings.NewReader("data: "+long+"\n\ndata: after\n\n")))
	if err != io.EOF || len(got) != 2 || string(got[0].Data) != long || string(got[1].Data) != "after" {
		t.Fatalf("got %d events, err %v", len(got), err)
	}
}

// repeat is an endless reader of one byte.
type repeat byte

func (r repeat) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}

func TestSSEReaderBoundsEventSize(t *testing.T) {
	tests := []struct {
		name string
		body io.Reader
	}{
		{"one endless line", io.MultiReader(strings.NewReader("data: "), repeat('a'))},
		{"endless data lines", io.MultiReader(strings.NewReader("data: "), io.LimitReader(repeat('a'), 1<<20), strings.NewReader("\n"),
			&lines{line: "data: " + strings.Repeat("b", 1<<20) + "\n"})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewSSEReader(tt.body).Next()
			if err == nil || !strings.Contains(err.Error(), "bytes") {
				t.Fatalf("err %v, want a size error", err)
			}
		})
	}
}

// lines repeats one line forever.
type lines struct {
	line string
	off  int
}

func (l *lines) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c := copy(p[n:], l.line[l.off:])
		n += c
		l.off = (l.off + c) % len(l.line)
	}
	return n, nil
}

func TestSSEReaderDataIsACopy(t *testing.T) {
	r := NewSSEReader(strings.NewReader("data: first\n\ndata: second\n\n"))
	a, _ := r.Next()
	b, _ := r.Next()
	if !reflect.DeepEqual([]string{string(a.Data), string(b.Data)}, []string{"first", "second"}) {
		t.Fatalf("events share a buffer: %q %q", a.Data, b.Data)
	}
}
