// Package secret keeps known secrets (provider API keys, the access token)
// out of everything Caduceus writes and out of the agent's reach.
//
// A Redactor replaces them in text (String), in JSON documents (JSON) and
// in text streamed in pieces (Stream); its slog handler applies that to
// every log record. Providers already redact their own errors; this is the
// second line, for text nobody expected to hold a key, such as a tool's
// output.
//
// Env keeps them out of the process's environment, which any command the
// agent runs as the same user (or as root) could read in
// /proc/<pid>/environ: at start the binary hides every secret variable by
// re-executing itself without them and receiving their values over a pipe
// (Env.Hide, LoadEnv), and makes itself non-dumpable (NoDump). LooksSecret
// says which names are secrets.
package secret

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
)

// Mask replaces a secret.
const Mask = "[redacted]"

// minLen skips values too short to be secrets: replacing "a" would mangle
// every message.
const minLen = 8

// Redactor replaces known secrets. The zero value redacts nothing. Safe
// for concurrent use: secrets learnt while the server runs (a provider key
// added in the console) are added to the one redactor every log line and
// output already passes through.
type Redactor struct {
	mu      sync.RWMutex
	secrets []string // longest first, so a secret containing another is replaced whole
}

// NewRedactor redacts the given secrets; short and empty values are
// ignored.
func NewRedactor(secrets ...string) *Redactor {
	r := &Redactor{}
	r.Add(secrets...)
	return r
}

// Add redacts more secrets from now on; short and empty values are
// ignored. Secrets are never removed: a key replaced in the console may
// still sit in text written before.
func (r *Redactor) Add(secrets ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range secrets {
		if len(s) >= minLen && !slices.Contains(r.secrets, s) {
			r.secrets = append(r.secrets, s)
		}
	}
	slices.SortFunc(r.secrets, func(a, b string) int { return len(b) - len(a) })
}

func (r *Redactor) empty() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.secrets) == 0
}

// String returns s with every secret replaced by Mask.
func (r *Redactor) String(s string) string {
	if r == nil {
		return s
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, sec := range r.secrets {
		if strings.Contains(s, sec) {
			s = strings.ReplaceAll(s, sec, Mask)
		}
	}
	return s
}

// Handler wraps h so that messages and attribute values are redacted.
func (r *Redactor) Handler(h slog.Handler) slog.Handler {
	if r == nil {
		return h
	}
	return &handler{next: h, r: r}
}

type handler struct {
	next slog.Handler
	r    *Redactor
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.String(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = h.attr(a)
	}
	return &handler{next: h.next.WithAttrs(red), r: h.r}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{next: h.next.WithGroup(name), r: h.r}
}

// attr redacts an attribute's value, whatever its kind: errors and
// Stringers are rendered to text first, since that is what gets logged.
func (h *handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.r.String(v.String()))
	case slog.KindGroup:
		g := v.Group()
		red := make([]any, len(g))
		for i, x := range g {
			red[i] = h.attr(x)
		}
		return slog.Group(a.Key, red...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, h.r.String(x.Error()))
		case interface{ String() string }:
			return slog.String(a.Key, h.r.String(x.String()))
		case []byte:
			return slog.String(a.Key, h.r.String(string(x)))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
