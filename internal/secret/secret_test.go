package secret

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestRedactorString(t *testing.T) {
	r := NewRedactor("sk-abcdef123456", "", "short", "sk-abcdef123456-longer")
	for in, want := range map[string]string{
		"key sk-abcdef123456 used":        "key [redacted] used",
		"key sk-abcdef123456-longer used": "key [redacted] used",
		"short stays":                     "short stays",
		"nothing":                         "nothing",
	} {
		if got := r.String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
	var nilR *Redactor
	if nilR.String("x") != "x" {
		t.Error("nil redactor changed text")
	}
}

type stringer struct{ s string }

func (s stringer) String() string { return s.s }

func TestHandlerRedactsEverything(t *testing.T) {
	const key = "sk-live-0123456789"
	var buf bytes.Buffer
	r := NewRedactor(key)
	log := slog.New(r.Handler(slog.NewJSONHandler(&buf, nil)))
	log = log.With("preset", "k="+key)
	log.Info("msg "+key, "s", key, "err", fmt.Errorf("wrapped: %w", errors.New(key)),
		"str", stringer{key}, "bytes", []byte(key), slog.Group("g", "inner", key), "n", 3)
	log.WithGroup("grp").Warn("x", "v", key)
	out := buf.String()
	if strings.Contains(out, key) {
		t.Fatalf("log leaks the key: %s", out)
	}
	if c := strings.Count(out, Mask); c != 9 {
		t.Errorf("%d masks in %s", c, out)
	}
	if !strings.Contains(out, `"n":3`) {
		t.Errorf("non-string attributes changed: %s", out)
	}
}

func TestRedactorAdd(t *testing.T) {
	var buf bytes.Buffer
	r := NewRedactor()
	log := slog.New(r.Handler(slog.NewTextHandler(&buf, nil)))
	r.Add("sk-added-later-0123456789", "short")
	log.Info("calling with sk-added-later-0123456789")
	if strings.Contains(buf.String(), "sk-added-later") {
		t.Fatalf("a secret added after the handler was made reached the log: %s", buf.String())
	}
	if got := r.String("short"); got != "short" {
		t.Fatalf("a short value was redacted: %q", got)
	}
	if got := string(r.JSON([]byte(`{"k":"sk-added-later-0123456789"}`))); strings.Contains(got, "sk-added") {
		t.Fatalf("JSON = %s", got)
	}
}
