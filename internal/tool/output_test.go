package tool

import (
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func TestCapBuffer(t *testing.T) {
	tests := []struct {
		name      string
		limit     int
		writes    []string
		want      string
		truncated bool
	}{
		{name: "empty", limit: 10, want: ""},
		{name: "under", limit: 10, writes: []string{"abc", "de"}, want: "abcde"},
		{name: "exact", limit: 10, writes: []string{"0123456789"}, want: "0123456789"},
		{name: "over", limit: 10, writes: []string{"01234", "56789", "ABCDE"},
			want: "01234\n… [output truncated: 15 bytes total, showing first 5 and last 5]\nABCDE", truncated: true},
		{name: "many small writes", limit: 4, writes: strings.Split("abcdefghijklmnop", ""),
			want: "ab\n… [output truncated: 16 bytes total, showing first 2 and last 2]\nop", truncated: true},
		{name: "one big write", limit: 4, writes: []string{"abcdefghijklmnop"},
			want: "ab\n… [output truncated: 16 bytes total, showing first 2 and last 2]\nop", truncated: true},
		// é is two bytes; cuts at byte counts must not split it.
		{name: "utf8 boundaries", limit: 7, writes: []string{"aééééb"},
			want: "aé\n… [output truncated: 10 bytes total, showing first 3 and last 3]\néb", truncated: true},
		{name: "invalid utf8", limit: 10, writes: []string{"a\xffb"}, want: "a\uFFFDb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newCapBuffer(tt.limit)
			for _, w := range tt.writes {
				b.Write([]byte(w))
			}
			got, tr := b.String()
			if got != tt.want || tr != tt.truncated {
				t.Errorf("got %q (%v), want %q (%v)", got, tr, tt.want, tt.truncated)
			}
		})
	}
}

func TestProgressPump(t *testing.T) {
	var (
		mu    sync.Mutex
		order []string
		text  = map[string]string{}
	)
	p := newProgressPump(func(stream, s string) {
		mu.Lock()
		defer mu.Unlock()
		if !utf8.ValidString(s) {
			t.Errorf("invalid UTF-8 chunk %q", s)
		}
		order = append(order, stream)
		text[stream] += s
	})
	é := []byte("é")
	p.Write("stdout", []byte("a"))
	p.Write("stdout", é[:1]) // a rune split across writes
	p.Write("stdout", é[1:])
	p.Write("stderr", []byte("E"))
	p.Write("stdout", []byte("b"))
	p.Close()
	if text["stdout"] != "aéb" || text["stderr"] != "E" {
		t.Errorf("text %q", text)
	}
	if len(order) > 3 {
		t.Errorf("calls %q, want merged", order)
	}
}

func TestProgressPumpBudget(t *testing.T) {
	var got int
	p := newProgressPump(func(_, s string) { got += len(s) })
	chunk := []byte(strings.Repeat("x", 64<<10))
	for range 40 {
		p.Write("stdout", chunk)
	}
	p.Close()
	if got < progressBudget || got > progressBudget+200 {
		t.Errorf("streamed %d bytes, budget %d", got, progressBudget)
	}
}
