package app_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/app"
	"github.com/caduceus-dev/caduceus/internal/config"
	"github.com/caduceus-dev/caduceus/internal/store/sqlite"
)

const token = "test-token-0123456789abcdef0123456789abcdef"

// testConfig is a web tier with its own runner on fresh directories.
func testConfig(t *testing.T) config.Config {
	return config.Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), Workspace: t.TempDir(),
		Lease: 2 * time.Second, Version: "test", ApprovalMode: "manual"}
}

// serve starts the app and stops it when the test ends, failing the test
// if it stops with an error.
func serve(t *testing.T, cfg config.Config) *app.App {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return a
}

func get(t *testing.T, url string, header ...string) (int, http.Header, []byte) {
	t.Helper()
	return request(t, "GET", url, "", header...)
}

func request(t *testing.T, method, url, body string, header ...string) (int, http.Header, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, b
}

func code(b []byte) string {
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.Unmarshal(b, &e)
	return e.Error.Code
}

// The assembled server: API behind the guard, the workbench at /, the
// runner mode reported by health, and the guard's refusals.
func TestServeAssembly(t *testing.T) {
	t.Parallel()
	plain := serve(t, testConfig(t))
	cfg := testConfig(t)
	cfg.Token = token
	guarded := serve(t, cfg)
	cfg = testConfig(t)
	cfg.Runner = config.RunnerNone
	webOnly := serve(t, cfg)

	tests := []struct {
		name, method, url, body string
		header                  []string
		status                  int
		code                    string
		contains                string
	}{
		{name: "health", method: "GET", url: plain.URL() + "/api/health", status: 200, contains: `"runner_mode":"inprocess"`},
		{name: "health, web tier alone", method: "GET", url: webOnly.URL() + "/api/health", status: 200, contains: `"runner_mode":"none"`},
		{name: "meta", method: "GET", url: plain.URL() + "/api/meta", status: 200, contains: `"version":"test"`},
		{name: "workbench page", method: "GET", url: plain.URL() + "/", status: 200, contains: "<html"},
		{name: "workbench deep link", method: "GET", url: plain.URL() + "/s/ses_00000000000000000000000000", status: 200, contains: "<html"},
		{name: "unknown API route", method: "GET", url: plain.URL() + "/api/nope", status: 404, code: "not_found"},
		{name: "foreign Host", method: "GET", url: plain.URL() + "/api/sessions", header: []string{"Host", "evil.example:80"}, status: 403, code: "forbidden_host"},
		{name: "cross-origin write", method: "POST", url: plain.URL() + "/api/sessions", body: "{}", header: []string{"Origin", "http://evil.example"}, status: 403, code: "forbidden_origin"},
		{name: "token missing", method: "GET", url: guarded.URL() + "/api/sessions", status: 401, code: "unauthorized"},
		{name: "token wrong", method: "GET", url: guarded.URL() + "/api/sessions", header: []string{"Authorization", "Bearer nope"}, status: 401, code: "unauthorized"},
		{name: "token given", method: "GET", url: guarded.URL() + "/api/sessions", header: []string{"Authorization", "Bearer " + token}, status: 200, contains: `"sessions":[]`},
		{name: "health needs no token", method: "GET", url: guarded.URL() + "/api/health", status: 200},
		{name: "page needs no token", method: "GET", url: guarded.URL() + "/", status: 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st, _, b := request(t, tc.method, tc.url, tc.body, tc.header...)
			if st != tc.status || code(b) != tc.code || !strings.Contains(string(b), tc.contains) {
				t.Fatalf("%d %q, want %d %q containing %q; body %.300s", st, code(b), tc.status, tc.code, tc.contains, b)
			}
		})
	}
}

// A message sent to an assembled server is answered by its in-process
// runner with the demo model.
func TestServeRunsMessages(t *testing.T) {
	t.Parallel()
	a := serve(t, testConfig(t))
	st, _, b := request(t, "POST", a.URL()+"/api/sessions", "{}")
	var s struct{ ID string }
	if err := json.Unmarshal(b, &s); st != 201 || err != nil {
		t.Fatalf("create session: %d %s", st, b)
	}
	st, _, b = request(t, "POST", a.URL()+"/api/sessions/"+s.ID+"/messages", `{"content":"hello"}`)
	var r struct{ ID, Status string }
	if err := json.Unmarshal(b, &r); st != 202 || err != nil {
		t.Fatalf("send: %d %s", st, b)
	}
	deadline := time.Now().Add(15 * time.Second)
	for r.Status != "completed" {
		if time.Now().After(deadline) {
			t.Fatalf("run is %s after 15s", r.Status)
		}
		time.Sleep(10 * time.Millisecond)
		_, _, b = get(t, a.URL()+"/api/runs/"+r.ID)
		_ = json.Unmarshal(b, &r)
	}
	if a.RunnerID() == "" || !strings.HasPrefix(a.RunnerID(), "rnr_") {
		t.Fatalf("runner id %q", a.RunnerID())
	}
}

// A runner process has no web tier, and is registered when New returns,
// so a web tier on the same data sees it at once.
func TestRunnerOnly(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	web := cfg
	web.Runner = config.RunnerNone
	w := serve(t, web)
	cfg.Runner = config.RunnerOnly
	cfg.Addr = ""
	r := serve(t, cfg)
	if r.URL() != "" || r.RunnerID() == "" {
		t.Fatalf("runner process: URL %q, runner id %q", r.URL(), r.RunnerID())
	}
	_, _, b := get(t, w.URL()+"/api/health")
	if !strings.Contains(string(b), r.RunnerID()) {
		t.Fatalf("health of the web tier does not list runner %s: %s", r.RunnerID(), b)
	}
}

// New refuses a configuration it cannot serve, with an error that says
// why, and leaves nothing running.
func TestNewErrors(t *testing.T) {
	t.Parallel()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	badScript := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(badScript, []byte(`{"scenarios": [{"turns": [{"steps": [{"kind": "nope"}]}]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	badConfig := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(badConfig, []byte(`{"providers": 3}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		change func(*config.Config)
		want   string
	}{
		{"off loopback without a token", func(c *config.Config) { c.Addr = "0.0.0.0:0" }, "caduceus user add"},
		{"address in use", func(c *config.Config) { c.Addr = busy.Addr().String() }, "listen"},
		{"missing demo script", func(c *config.Config) { c.DemoScript = filepath.Join(t.TempDir(), "none.json") }, "none.json"},
		{"invalid demo script", func(c *config.Config) { c.DemoScript = badScript }, "nope"},
		{"invalid config file", func(c *config.Config) { c.ConfigFile = badConfig }, "config"},
		{"database unreachable", func(c *config.Config) {
			c.Database = "postgres://caduceus:hunter2@127.0.0.1:1/x?connect_timeout=2"
		}, "connect"},
		{"database URL that does not parse", func(c *config.Config) { c.Database = "postgres://caduceus:hunter2@[::1/x" }, "database URL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t)
			tc.change(&cfg)
			a, err := app.New(context.Background(), cfg, slog.New(slog.DiscardHandler))
			if err == nil {
				t.Fatalf("New succeeded (URL %q)", a.URL())
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not mention %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Fatalf("error %q shows the database password", err)
			}
		})
	}
}

// A missing data directory is created, with the store in it.
func TestDataDir(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	cfg.DataDir = filepath.Join(t.TempDir(), "a", "b")
	serve(t, cfg)
	fi, err := os.Stat(filepath.Join(cfg.DataDir, "caduceus.db"))
	if err != nil || fi.Size() == 0 {
		t.Fatalf("store file: %v", err)
	}
	db, err := sqlite.Open(context.Background(), filepath.Join(cfg.DataDir, "caduceus.db"))
	if err != nil {
		t.Fatalf("the store does not open: %v", err)
	}
	db.Close()
}
