package app

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/config"
)

// syncBuffer is written by the server's goroutines and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// --log-format json: every line the process writes is a JSON object, and
// the redactor New puts in front of the handler still removes provider
// keys and the token, in messages and in attributes alike.
func TestJSONLogsParseAndHoldNoSecret(t *testing.T) {
	const (
		key = "sk-json-log-test-0123456789abcdefghij"
		tok = "json-log-token-0123456789abcdef0123456789"
	)
	var buf syncBuffer
	env := map[string]string{"OPENAI_API_KEY": key}
	cfg := config.Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), Workspace: t.TempDir(), Lease: 2 * time.Second,
		Version: "test", ApprovalMode: "manual", Token: tok, Getenv: func(k string) string { return env[k] },
		Telemetry: config.Telemetry{LogFormat: config.LogJSON}}
	ctx, cancel := context.WithCancel(context.Background())
	a, err := New(ctx, cfg, NewLogger(&buf, cfg.LogFormat, slog.LevelDebug))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	waitRunner(t, a.URL())
	// What an unexpected error text could carry.
	a.log.Error("provider said no", "err", errors.New("invalid key "+key), "header", "Bearer "+tok)
	a.log.Info("token " + tok + " in a message")
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	var msgs []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("a log line is not JSON: %q: %v", sc.Text(), err)
		}
		if line["time"] == nil || line["level"] == nil || line["msg"] == nil {
			t.Fatalf("a log line lacks time, level or msg: %q", sc.Text())
		}
		msgs = append(msgs, line["msg"].(string))
	}
	// Ours, at least; the server's own lines (the runner stopping, ...)
	// are checked too when a loaded machine let them come before the
	// stop.
	if len(msgs) < 2 {
		t.Fatalf("too few lines to prove anything: %q", msgs)
	}
	for _, s := range []string{key, tok, key[8:20], tok[8:20]} {
		if strings.Contains(out, s) {
			t.Fatalf("the log holds a secret (%q…):\n%s", s[:6], out)
		}
	}
	if strings.Count(out, "[redacted]") < 3 {
		t.Fatalf("the secrets were not replaced:\n%s", out)
	}
}

// waitRunner waits until the server's runner is registered, so the run
// ends in a full, logged shutdown.
func waitRunner(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var h struct {
			Runners []json.RawMessage `json:"runners"`
		}
		resp, err := http.Get(url + "/api/health")
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&h)
			resp.Body.Close()
			if err == nil && len(h.Runners) > 0 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s has no runner: %v", url, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
