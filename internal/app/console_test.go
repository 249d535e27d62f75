package app

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/config"
)

// The console's log view holds what the server logged, through the same
// redactor as stderr: a provider key or the token in an error's text or
// an attribute never reaches GET /api/logs.
func TestLogsViewHoldsNoSecret(t *testing.T) {
	const (
		key = "sk-console-log-test-0123456789abcdefghij"
		tok = "console-log-token-0123456789abcdef0123456789"
	)
	env := map[string]string{"OPENAI_API_KEY": key}
	cfg := config.Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), Workspace: t.TempDir(), Lease: 2 * time.Second,
		Version: "test", ApprovalMode: "manual", Token: tok, Getenv: func(k string) string { return env[k] }}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := New(ctx, cfg, NewLogger(io.Discard, cfg.LogFormat, slog.LevelDebug))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	a.log.Error("provider said no to console-marker", "err", errors.New("invalid key "+key), "header", "Bearer "+tok)
	a.log.With("auth", tok).Warn("console-marker " + key)

	req, _ := http.NewRequest("GET", a.URL()+"/api/logs?q=console-marker", nil)
	req.Header.Set("Authorization", "Bearer "+tok)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/logs: %d %s", res.StatusCode, body)
	}
	out := string(body)
	if strings.Count(out, `"id":`) != 2 {
		t.Fatalf("want the two lines logged, got %s", out)
	}
	for _, s := range []string{key, tok, key[8:20], tok[8:20]} {
		if strings.Contains(out, s) {
			t.Fatalf("the log view holds a secret (%q…): %s", s[:6], out)
		}
	}
	if strings.Count(out, "[redacted]") < 4 {
		t.Fatalf("the secrets were not replaced: %s", out)
	}
}
