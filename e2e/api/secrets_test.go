package api

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/config"
	"github.com/caduceus-dev/caduceus/internal/event"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

// withConfigFile writes the config file into the data dir before the
// server starts, where `caduceus serve` looks for it by default.
func withConfigFile(t *testing.T, f any) e2etest.ServerOpt {
	return func(c *config.Config) {
		b, err := json.Marshal(f)
		if err != nil {
			t.Fatal(err)
		}
		c.ConfigFile = filepath.Join(c.DataDir, "config.json")
		if err := os.WriteFile(c.ConfigFile, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// API keys from the environment and from the config file reach the
// providers and nothing else: not an API answer, the event stream, the log,
// a database row or any file in the data dir — not even when a server
// echoes a masked key in its 401.
func TestProviderKeysNeverLeak(t *testing.T) {
	t.Parallel()
	const (
		gatewayKey = "sk-file-GATEWAY-7c6b5a4f3e2d"
		proxyKey   = "sk-ant-file-PROXY-5e4d3c2b1a09"
	)
	secrets := []string{openaiTestKey, anthropicTestKey, gatewayKey, proxyKey}

	// openai (environment): refused with a 401 that echoes the key masked.
	oa := newOpenAIFake(t, openaiTestKey, "sk-the-key-the-server-wants-0000")
	// anthropic (environment): a whole tool turn.
	an := newAnthropicFake(t, anthropicTestKey, anthropicTestKey)
	an.stream(an.fixture("parallel_tools"))
	an.stream(an.fixture("text"))
	// gateway (config file): an OpenAI-compatible server, a whole tool turn.
	gw := newOpenAIFake(t, gatewayKey, gatewayKey)
	gw.name = "gateway"
	gw.stream(gw.fixture("tool_call"))
	gw.stream(gw.fixture("text"))
	// claude-proxy (config file): the Anthropic fake refuses its key.
	proxy := &llmFake{name: "claude-proxy", model: "claude-sonnet-4-5-20250929"}

	cfg := map[string]any{"providers": map[string]any{
		"gateway": map[string]any{"type": "openai", "base_url": gw.env["OPENAI_BASE_URL"], "api_key": gatewayKey,
			"models": []string{gw.model}},
		"claude-proxy": map[string]any{"type": "anthropic", "base_url": an.env["ANTHROPIC_BASE_URL"], "api_key": proxyKey},
	}}
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("the demo model answered"))),
		e2etest.WithEnv(mergeEnv(oa, an)), e2etest.WithWorkspace(newWorkspace(t)), withConfigFile(t, cfg))

	var seen strings.Builder // every answer body and event the server sent
	grab := func(method, path, body string) []byte {
		t.Helper()
		_, b := fetch(t, method, s.URL+path, body)
		seen.Write(b)
		seen.WriteByte('\n')
		return b
	}
	var sess e2etest.SessionJSON
	if err := json.Unmarshal(grab("POST", "/api/sessions", `{}`), &sess); err != nil || sess.ID == "" {
		t.Fatalf("create session: %v", err)
	}
	st := e2etest.OpenStream(t, s.URL+"/api/sessions/"+sess.ID+"/events", nil)

	// One session, one run per provider in turn: two refused, two whole
	// tool turns, each after the others' history.
	type want struct {
		fake   *llmFake
		status string
		code   string
	}
	runs := map[string]want{}
	var order []string
	for _, w := range []want{
		{oa, "failed", "provider_auth"},
		{an, "completed", ""},
		{gw, "completed", ""},
		{proxy, "failed", "provider_auth"},
	} {
		body, _ := json.Marshal(map[string]string{"content": "use " + w.fake.name, "model": w.fake.ref()})
		var r e2etest.RunJSON
		if err := json.Unmarshal(grab("POST", "/api/sessions/"+sess.ID+"/messages", string(body)), &r); err != nil || r.ID == "" {
			t.Fatalf("send to %s: %v", w.fake.name, err)
		}
		evs := st.Until(t, w.fake.name+" run.done", e2etest.IsDone(r.ID))
		for _, e := range evs {
			b, _ := json.Marshal(e)
			seen.Write(b)
		}
		done := e2etest.Payload[event.RunDonePayload](t, evs[len(evs)-1])
		code := ""
		if done.Error != nil {
			code = done.Error.Code
		}
		if done.Status != w.status || code != w.code {
			t.Fatalf("%s: run.done %+v (error %+v), want %s %s", w.fake.name, done, done.Error, w.status, w.code)
		}
		runs[r.ID] = w
		order = append(order, r.ID)
	}
	// The failed runs' messages are redacted but still useful.
	for _, id := range order {
		var r e2etest.RunJSON
		if err := json.Unmarshal(grab("GET", "/api/runs/"+id, ""), &r); err != nil {
			t.Fatal(err)
		}
		w := runs[id]
		if w.code != "provider_auth" {
			continue
		}
		if r.Error == nil || !strings.HasPrefix(r.Error.Message, w.fake.name+": ") || !strings.Contains(r.Error.Message, "Check the API key") {
			t.Fatalf("%s: run error %+v", w.fake.name, r.Error)
		}
		if w.fake == oa {
			// The server said "Incorrect API key provided: sk-****…5b4a".
			if !strings.Contains(r.Error.Message, "[redacted]") || strings.Contains(r.Error.Message, "***") ||
				strings.Contains(r.Error.Message, openaiTestKey[len(openaiTestKey)-4:]) {
				t.Fatalf("the 401's masked key is not redacted: %q", r.Error.Message)
			}
		}
	}
	for _, p := range []string{
		"/api/sessions", "/api/sessions/" + sess.ID, "/api/sessions/" + sess.ID + "/messages",
		"/api/sessions/" + sess.ID + "/runs", "/api/models", "/api/meta", "/api/health", "/api/rules",
		"/api/requests", "/api/requests?status=pending",
	} {
		grab("GET", p, "")
	}
	for _, id := range order {
		grab("GET", "/api/runs/"+id+"/events", "") // the raw SSE replay, to its end
	}

	// The keys did reach the providers, so the server had them to leak.
	for _, c := range []struct {
		f   *llmFake
		key string
	}{{oa, openaiTestKey}, {an, anthropicTestKey}, {gw, gatewayKey}, {an, proxyKey}} {
		if !slices.Contains(c.f.creds(), c.key) {
			t.Fatalf("%s never received the key %s…", c.f.name, c.key[:6])
		}
	}
	// Nor does any request body carry one.
	for _, f := range []*llmFake{oa, an, gw} {
		for _, b := range f.bodies() {
			if l := e2etest.SecretLeaks(string(b), secrets); len(l) > 0 {
				t.Errorf("a request body to %s holds %v", f.name, l)
			}
		}
	}

	s.Stop()
	out := seen.String()
	if !strings.Contains(out, "provider_auth") || !strings.Contains(out, "marker-gomod") || !strings.Contains(out, "[redacted]") {
		t.Fatal("the collected answers lack what the runs produced: the scan proves nothing")
	}
	if l := e2etest.SecretLeaks(out, secrets); len(l) > 0 {
		t.Errorf("API answers or events hold %v", l)
	}
	logs := s.Logs.String()
	if !strings.Contains(logs, "run finished") {
		t.Fatal("no log captured: the scan proves nothing")
	}
	if l := e2etest.SecretLeaks(logs, secrets); len(l) > 0 {
		t.Errorf("the server log holds %v", l)
	}

	// Every text of every row of every table.
	rowsSeen, dump := e2etest.ScanDB(t, filepath.Join(s.DataDir, "caduceus.db"), secrets)
	if rowsSeen == 0 || !strings.Contains(dump, "provider_auth") || !strings.Contains(dump, "marker-docs-readme") {
		t.Fatalf("the database scan saw %d rows without the runs' events: it proves nothing", rowsSeen)
	}

	// And the bytes of every file the server wrote (the config file holds
	// the keys on purpose).
	e2etest.ScanFiles(t, s.DataDir, secrets, filepath.Join(s.DataDir, "config.json"))
}
