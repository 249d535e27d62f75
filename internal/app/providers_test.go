package app_test

// Providers and settings (issue 16, h16-providers) across processes
// sharing a PostgreSQL database.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/app"
	"github.com/caduceus-dev/caduceus/internal/config"
	"github.com/caduceus-dev/caduceus/internal/provider/openai/openaitest"
	"github.com/caduceus-dev/caduceus/internal/secretbox"
)

func TestPostgresProvidersAndSecretKey(t *testing.T) {
	t.Parallel()
	url := pg.Database(t)
	envOf := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	key1 := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32))
	key2 := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{2}, 32))
	cfgWith := func(key string, runner string) config.Config {
		c := testConfig(t)
		c.Database, c.Runner, c.Lease = url, runner, 5*time.Second
		c.Getenv = envOf(map[string]string{"CADUCEUS_SECRET_KEY": key})
		return c
	}

	// Without a key a PostgreSQL server stores no API key, and says why;
	// a keyless provider (a local server) is fine.
	bare := serve(t, cfgWith("", config.RunnerNone))
	st, _, b := request(t, "POST", bare.URL()+"/api/providers", `{"name":"hosted","kind":"openai","api_key":"sk-pg-test-key-000000000000-aaaa"}`)
	if st != 503 || !strings.Contains(string(b), "secret_key_unavailable") || !strings.Contains(string(b), "CADUCEUS_SECRET_KEY") {
		t.Fatalf("a key without a secret key: %d %s", st, b)
	}
	if st, _, b := request(t, "POST", bare.URL()+"/api/providers", `{"name":"lan","kind":"openai","base_url":"http://127.0.0.1:1/v1","models":["m1"]}`); st != 201 {
		t.Fatalf("a keyless provider: %d %s", st, b)
	}

	web := serve(t, cfgWith(key1, config.RunnerNone))
	other := serve(t, cfgWith(key1, config.RunnerNone))
	if st, _, b := request(t, "POST", web.URL()+"/api/providers", `{"name":"hosted","kind":"openai","base_url":"http://127.0.0.1:1/v1","models":["gpt-x"],"api_key":"sk-pg-test-key-000000000000-aaaa"}`); st != 201 {
		t.Fatalf("add provider: %d %s", st, b)
	}
	// The other web node sees it within its poll (settings.PollEvery).
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, _, b := get(t, other.URL()+"/api/models")
		if strings.Contains(string(b), `"hosted/gpt-x"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("another process does not list the new provider: %s", b)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if _, _, b := get(t, other.URL()+"/api/providers"); strings.Contains(string(b), "sk-pg-test-key") || !strings.Contains(string(b), "sk-…aaaa") {
		t.Fatalf("providers on the other node: %s", b)
	}

	// A server with no key refuses to start: the database holds sealed
	// keys it could not open.
	_, err := app.New(context.Background(), cfgWith("", config.RunnerNone), slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "CADUCEUS_SECRET_KEY") {
		t.Fatalf("start without the key: %v", err)
	}
	// One with another key starts, and shows why the provider is left out.
	wrong := serve(t, cfgWith(key2, config.RunnerNone))
	_, _, b = get(t, wrong.URL()+"/api/providers")
	if !strings.Contains(string(b), "another key") {
		t.Fatalf("providers with the wrong key: %s", b)
	}
	if _, _, b := get(t, wrong.URL()+"/api/models"); strings.Contains(string(b), `"hosted/gpt-x"`) {
		t.Fatalf("a provider whose key does not open is offered: %s", b)
	}
}

// A provider added on SQLite survives a restart: the key file made on
// first use opens its key again, and the provider works at once.
func TestProvidersSurviveRestart(t *testing.T) {
	t.Parallel()
	fake := openaitest.NewServer()
	t.Cleanup(fake.Close)
	const key = "sk-restart-test-key-0000000000-b00b"
	fake.RequireKey(key)
	fake.SetModels("m-one", "m-two")
	cfg := testConfig(t)
	ctx, cancel := context.WithCancel(context.Background())
	first, err := app.New(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- first.Run(ctx) }()
	if _, _, b := get(t, first.URL()+"/api/meta"); !strings.Contains(string(b), `"demo_model":true`) {
		t.Fatalf("meta before any provider: %s", b)
	}
	st, _, b := request(t, "POST", first.URL()+"/api/providers", `{"name":"box","kind":"openai","base_url":"`+fake.BaseURL()+`","api_key":"`+key+`"}`)
	var p struct{ ID string }
	if err := json.Unmarshal(b, &p); st != 201 || err != nil {
		t.Fatalf("add: %d %s", st, b)
	}
	if _, _, b := get(t, first.URL()+"/api/meta"); !strings.Contains(string(b), `"demo_model":false`) || !strings.Contains(string(b), `"default_model":"box`) {
		t.Fatalf("meta once a provider is added: %s", b)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(cfg.DataDir, secretbox.KeyFileName)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v", err)
	}

	again := serve(t, cfg)
	st, _, b = request(t, "POST", again.URL()+"/api/providers/"+p.ID+"/test", "")
	if st != 200 || !strings.Contains(string(b), `"m-two"`) {
		t.Fatalf("test after a restart: %d %s", st, b)
	}
	if _, _, b := get(t, again.URL()+"/api/models"); !strings.Contains(string(b), `"box/m-one"`) {
		t.Fatalf("models after a restart: %s", b)
	}
}
