// Package logring keeps the server's latest log lines in memory for the
// operator's console (GET /api/logs): a slog.Handler teed beside the one
// that writes stderr, bounded by a number of lines and a number of bytes,
// that readers page through and follow.
//
// It holds what reaches it: the app puts it behind the secret redactor,
// like every other log output, so no key reaches it either.
package logring

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
)

// Defaults of a Buffer.
const (
	DefaultLines = 5000
	DefaultBytes = 4 << 20
	// maxValue bounds one attribute's text: a line is for reading, and a
	// huge value would push everything else out of the buffer.
	maxValue = 4 << 10
)

// Entry is one log line.
type Entry struct {
	ID    int64             `json:"id"` // increasing; the follow cursor
	Time  time.Time         `json:"time"`
	Level string            `json:"level"` // DEBUG, INFO, WARN, ERROR
	Msg   string            `json:"msg"`
	Attrs map[string]string `json:"attrs,omitempty"` // group members as "group.key"
	level slog.Level
	size  int
}

// Buffer holds the latest lines. Make one with New; it is safe for
// concurrent use.
type Buffer struct {
	maxLines, maxBytes int
	min                slog.Leveler

	mu sync.Mutex
	// lines[head:] are kept, oldest first. Evicting advances head, and the
	// slice is compacted once half of it is dead: a full buffer does not
	// move every line on every new one.
	lines   []Entry
	head    int
	bytes   int
	next    int64
	changed chan struct{} // closed and replaced when a line is added
}

// New returns a buffer of at most maxLines lines and maxBytes bytes (zero
// or less: the defaults) keeping lines of level min and above.
func New(maxLines, maxBytes int, min slog.Leveler) *Buffer {
	if maxLines <= 0 {
		maxLines = DefaultLines
	}
	if maxBytes <= 0 {
		maxBytes = DefaultBytes
	}
	if min == nil {
		min = slog.LevelInfo
	}
	return &Buffer{maxLines: maxLines, maxBytes: maxBytes, min: min, next: 1, changed: make(chan struct{})}
}

// Handler returns the handler that adds lines to b.
func (b *Buffer) Handler() slog.Handler { return &handler{b: b} }

func (b *Buffer) add(e Entry) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e.ID = b.next
	b.next++
	b.lines = append(b.lines, e)
	b.bytes += e.size
	for len(b.lines)-b.head > b.maxLines || (b.bytes > b.maxBytes && len(b.lines)-b.head > 1) {
		b.bytes -= b.lines[b.head].size
		b.lines[b.head] = Entry{} // let its strings go
		b.head++
	}
	if b.head > 0 && b.head >= len(b.lines)/2 {
		n := copy(b.lines, b.lines[b.head:])
		clear(b.lines[n:])
		b.lines = b.lines[:n]
		b.head = 0
	}
	close(b.changed)
	b.changed = make(chan struct{})
}

// Query selects lines.
type Query struct {
	Min   slog.Level // lines of this level and above
	Text  string     // "": every line; else lines whose message or an attribute holds it, ignoring case
	After int64      // lines after this id
	Limit int        // the latest Limit lines that match; 0: all
}

// ParseLevel reads a level name (debug, info, warn, error; "" is debug).
func ParseLevel(s string) (slog.Level, error) {
	if s == "" {
		return slog.LevelDebug, nil
	}
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("unknown level %q: want debug, info, warn or error", s)
	}
	return l, nil
}

// Lines returns the lines q selects, oldest first, and the id of the
// latest line in the buffer (where a follower continues from).
func (b *Buffer) Lines(q Query) ([]Entry, int64) {
	text := strings.ToLower(q.Text)
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []Entry
	for i := len(b.lines) - 1; i >= b.head; i-- {
		e := b.lines[i]
		if e.ID <= q.After || (q.Limit > 0 && len(out) == q.Limit) {
			break
		}
		if e.level >= q.Min && (text == "" || e.matches(text)) {
			out = append(out, e)
		}
	}
	slices.Reverse(out)
	return out, b.next - 1
}

func (e Entry) matches(text string) bool {
	if strings.Contains(strings.ToLower(e.Msg), text) {
		return true
	}
	for k, v := range e.Attrs {
		if strings.Contains(strings.ToLower(k), text) || strings.Contains(strings.ToLower(v), text) {
			return true
		}
	}
	return false
}

// Wait blocks until a line after id after is added, d has passed or ctx is
// done.
func (b *Buffer) Wait(ctx context.Context, after int64, d time.Duration) {
	b.mu.Lock()
	news := b.next-1 > after
	ch := b.changed
	b.mu.Unlock()
	if news {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-ctx.Done():
	}
}

// handler is a Buffer's slog.Handler; attrs and group are what WithAttrs
// and WithGroup added.
type handler struct {
	b     *Buffer
	attrs []slog.Attr // keys already prefixed
	group string      // "" or "a.b."
}

func (h *handler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.b.min.Level() }

func (h *handler) Handle(_ context.Context, rec slog.Record) error {
	e := Entry{Time: rec.Time.UTC(), Level: rec.Level.String(), Msg: rec.Message, level: rec.Level}
	if len(h.attrs) > 0 || rec.NumAttrs() > 0 {
		e.Attrs = make(map[string]string, len(h.attrs)+rec.NumAttrs())
	}
	for _, a := range h.attrs {
		put(e.Attrs, "", a)
	}
	rec.Attrs(func(a slog.Attr) bool {
		put(e.Attrs, h.group, a)
		return true
	})
	e.size = len(e.Msg) + 64
	for k, v := range e.Attrs {
		e.size += len(k) + len(v)
	}
	h.b.add(e)
	return nil
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	out := &handler{b: h.b, group: h.group, attrs: slices.Clip(h.attrs)}
	for _, a := range as {
		m := map[string]string{}
		put(m, h.group, a)
		for k, v := range m {
			out.attrs = append(out.attrs, slog.String(k, v))
		}
	}
	return out
}

func (h *handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return &handler{b: h.b, attrs: h.attrs, group: h.group + name + "."}
}

// put flattens a into m under prefix.
func put(m map[string]string, prefix string, a slog.Attr) {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		p := prefix
		if a.Key != "" {
			p += a.Key + "."
		}
		for _, x := range v.Group() {
			put(m, p, x)
		}
		return
	}
	if a.Key == "" {
		return
	}
	var s string
	switch v.Kind() {
	case slog.KindString:
		s = v.String()
	case slog.KindTime:
		s = v.Time().UTC().Format(time.RFC3339Nano)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			s = x.Error()
		case fmt.Stringer:
			s = x.String()
		default:
			if j, err := json.Marshal(x); err == nil {
				s = string(j)
			} else {
				s = fmt.Sprint(x)
			}
		}
	default:
		s = v.String()
	}
	if len(s) > maxValue {
		s = strings.ToValidUTF8(s[:maxValue], "") + "…"
	}
	m[prefix+a.Key] = s
}
