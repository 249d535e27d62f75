package secret

import (
	"strings"
	"testing"
)

func TestStreamCatchesSecretsAcrossPieces(t *testing.T) {
	const key = "sk-live-0123456789"
	r := NewRedactor(key, "tok-abcdefgh")
	for _, c := range []struct {
		name   string
		pieces []string
		want   string // everything written, then flushed
		shown  []string
	}{
		{"whole", []string{"key=" + key + "\n"}, "key=[redacted]\n", []string{"key=[redacted]\n"}},
		{"cut in two", []string{"key=sk-live-01", "23456789\n"}, "key=[redacted]\n", []string{"key=", "[redacted]\n"}},
		{"cut in many", []string{"s", "k", "-live", "-0123456789", " done"}, "[redacted] done", []string{"", "", "", "[redacted]", " done"}},
		{"a false start is let go", []string{"sk-live-", "x\n"}, "sk-live-x\n", []string{"", "sk-live-x\n"}},
		{"held at the end", []string{"output sk-li"}, "output sk-li", []string{"output "}},
		{"two secrets", []string{"tok-abcd", "efgh " + key[:5], key[5:]}, "[redacted] [redacted]", []string{"", "[redacted] ", "[redacted]"}},
		{"nothing secret", []string{"hello ", "world\n"}, "hello world\n", []string{"hello ", "world\n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := r.Stream()
			var all strings.Builder
			for i, p := range c.pieces {
				got := s.Write(p)
				if got != c.shown[i] {
					t.Errorf("Write(%q) = %q, want %q", p, got, c.shown[i])
				}
				all.WriteString(got)
			}
			all.WriteString(s.Flush())
			if all.String() != c.want {
				t.Errorf("stream gave %q, want %q", all.String(), c.want)
			}
			if s.Flush() != "" {
				t.Error("a second Flush returned text")
			}
		})
	}
	var nilR *Redactor
	if got := nilR.Stream().Write("sk-live-0"); got != "sk-live-0" {
		t.Errorf("nil redactor's stream held text: %q", got)
	}
}
