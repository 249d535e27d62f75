package api_test

// Providers and settings (issue 16, h16-providers).

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/api"
	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/httpguard"
	"github.com/caduceus-dev/caduceus/internal/identity"
	"github.com/caduceus-dev/caduceus/internal/models"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
	"github.com/caduceus-dev/caduceus/internal/provider/openai"
	"github.com/caduceus-dev/caduceus/internal/provider/openai/openaitest"
	"github.com/caduceus-dev/caduceus/internal/secret"
	"github.com/caduceus-dev/caduceus/internal/secretbox"
	"github.com/caduceus-dev/caduceus/internal/settings"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

const (
	providerKey  = "sk-api-test-key-abcdefghijklmnop-4f2a"
	headerSecret = "hdr-secret-value-zyxwvutsrqp-123"
)

// providersEnv serves the API with a settings service over the store open
// makes, the server's log written to logs.
func providersEnv(t *testing.T, open storetest.Open, logs *bytes.Buffer) *env {
	t.Helper()
	st, _ := open(t)
	fac := map[string]models.Factory{models.TypeOpenAI: func(name string, c models.ProviderConfig, key string) (models.Client, error) {
		return openai.New(openai.Config{Name: name, BaseURL: c.BaseURL, APIKey: key})
	}}
	reg := models.New(models.File{}, func(k string) string {
		if k == "OPENAI_API_KEY" {
			return "sk-env-openai-key-0000000000009999"
		}
		return ""
	}, fac, demo.New(demo.Default()))
	red := secret.NewRedactor(reg.Secrets()...)
	log := slog.New(red.Handler(slog.NewJSONHandler(logs, nil)))
	keyPath := t.TempDir() + "/" + secretbox.KeyFileName
	svc := settings.New(settings.Config{Store: st, Registry: reg, Redactor: red, Factories: fac, Log: log,
		Keys: func(create bool) (*secretbox.Box, error) {
			if create {
				return secretbox.LoadOrCreateFile(keyPath)
			}
			return secretbox.LoadFile(keyPath)
		},
		Fixed:    map[string]settings.Fixed{settings.KeyMaxRetries: {Value: 4, Source: "flag"}},
		Defaults: settings.Effective{ApprovalMode: "smart", MaxRetries: 2}})
	if err := svc.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	ident := identity.New(st, identity.Config{Loopback: true, Log: log})
	a := api.New(st, control.NewService(st, nil, t.TempDir(), control.RetryPolicy{}), nil, api.Info{Version: "test"},
		api.Options{Identity: ident, Settings: svc, Models: reg, Redactor: red}, log)
	guard, err := httpguard.New(httpguard.Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/api/", a.Handler())
	srv := httptest.NewServer(guard.Wrap(mux))
	t.Cleanup(srv.Close)
	return &env{t: t, ctx: context.Background(), st: st, srv: srv}
}

func TestProvidersAPI(t *testing.T) {
	storetest.Each(t, pg, func(t *testing.T, open storetest.Open) {
		var logs bytes.Buffer
		e := providersEnv(t, open, &logs)
		fake := openaitest.NewServer()
		t.Cleanup(fake.Close)
		fake.RequireKey(providerKey)
		fake.SetModels("llama3.2", "qwen3:8b")

		var bodies []string
		keep := func(r resp) resp { bodies = append(bodies, string(r.body)); return r }

		created := keep(e.req("POST", "/api/providers", `{"name":"local","kind":"openai","base_url":"`+fake.BaseURL()+`","api_key":"`+providerKey+`","headers":{"X-Proxy-Auth":"`+headerSecret+`"}}`))
		created.want(t, http.StatusCreated, "")
		var p settings.ProviderView
		created.decode(t, &p)
		if p.APIKey != "sk-…4f2a" || !p.HasKey || p.Source != "database" || !strings.HasPrefix(p.ID, "prv") || len(p.Headers) != 1 || p.Headers[0] != "X-Proxy-Auth" {
			t.Fatalf("created = %s", created.body)
		}

		test := keep(e.req("POST", "/api/providers/"+p.ID+"/test", ""))
		test.want(t, http.StatusOK, "")
		var tr struct {
			Models []string `json:"models"`
		}
		test.decode(t, &tr)
		if strings.Join(tr.Models, ",") != "llama3.2,qwen3:8b" {
			t.Fatalf("test = %s", test.body)
		}

		list := keep(e.req("GET", "/api/providers", ""))
		list.want(t, http.StatusOK, "")
		var l struct {
			Providers []settings.ProviderView `json:"providers"`
		}
		list.decode(t, &l)
		if len(l.Providers) != 2 || l.Providers[0].Source != "env" || !l.Providers[0].ReadOnly || l.Providers[0].APIKey != "sk-…9999" {
			t.Fatalf("list = %s", list.body)
		}
		keep(e.req("GET", "/api/providers/"+p.ID, "")).want(t, http.StatusOK, "")
		keep(e.req("GET", "/api/models", "")).want(t, http.StatusOK, "")
		keep(e.req("PATCH", "/api/providers/"+p.ID, `{"default_model":"qwen3:8b"}`)).want(t, http.StatusOK, "")
		keep(e.req("GET", "/api/settings", "")).want(t, http.StatusOK, "")
		keep(e.req("PATCH", "/api/settings", `{"default_model":"local/qwen3:8b","approval_mode":"manual"}`)).want(t, http.StatusOK, "")

		// Bad input: a stable code, nothing changed.
		before, _ := e.st.ListProviders(e.ctx)
		for _, c := range []errCase{
			{name: "no name", method: "POST", path: "/api/providers", body: `{"kind":"openai"}`, status: 400, code: settings.CodeInvalidInput},
			{name: "unknown field", method: "POST", path: "/api/providers", body: `{"name":"x","kind":"openai","apikey":"k"}`, status: 400, code: control.CodeInvalidInput},
			{name: "bad kind", method: "POST", path: "/api/providers", body: `{"name":"x","kind":"gemini"}`, status: 400, code: settings.CodeInvalidInput},
			{name: "bad url", method: "POST", path: "/api/providers", body: `{"name":"x","kind":"openai","base_url":"localhost:8080"}`, status: 400, code: settings.CodeInvalidInput},
			{name: "taken", method: "POST", path: "/api/providers", body: `{"name":"Local","kind":"openai"}`, status: 409, code: settings.CodeNameTaken},
			{name: "env's name", method: "POST", path: "/api/providers", body: `{"name":"openai","kind":"openai"}`, status: 409, code: settings.CodeNameTaken},
			{name: "patch unknown", method: "PATCH", path: "/api/providers/prv_nope", body: `{}`, status: 404, code: settings.CodeNotFound},
			{name: "patch bad id", method: "PATCH", path: "/api/providers/openai", body: `{}`, status: 404, code: settings.CodeNotFound},
			{name: "patch bad key", method: "PATCH", path: "/api/providers/" + p.ID, body: `{"api_key":"a b"}`, status: 400, code: settings.CodeInvalidInput},
			{name: "settings unknown", method: "PATCH", path: "/api/settings", body: `{"theme":"dark"}`, status: 400, code: settings.CodeUnknownSetting},
			{name: "settings fixed", method: "PATCH", path: "/api/settings", body: `{"max_retries":1}`, status: 409, code: settings.CodeReadOnly},
			{name: "settings bad", method: "PATCH", path: "/api/settings", body: `{"retry_backoff":-1}`, status: 400, code: settings.CodeInvalidSetting},
			{name: "settings not object", method: "PATCH", path: "/api/settings", body: `[1]`, status: 400, code: control.CodeInvalidInput},
		} {
			t.Run(c.name, func(t *testing.T) { keep(e.req(c.method, c.path, c.body)).want(t, c.status, c.code) })
		}
		after, _ := e.st.ListProviders(e.ctx)
		if len(after) != len(before) || after[0].UpdatedAt != before[0].UpdatedAt {
			t.Fatal("bad input changed a provider")
		}

		var s settings.View
		r := keep(e.req("GET", "/api/settings", ""))
		r.decode(t, &s)
		if s.Effective.DefaultModel != "local/qwen3:8b" || s.Effective.ApprovalMode != "manual" || s.Effective.MaxRetries != 4 || s.Fixed["max_retries"].Source != "flag" {
			t.Fatalf("settings = %s", r.body)
		}

		// /api/meta tells the UI the default model in force now.
		var meta struct {
			DefaultModel string `json:"default_model"`
		}
		keep(e.req("GET", "/api/meta", "")).decode(t, &meta)
		if meta.DefaultModel != "local/qwen3:8b" {
			t.Fatalf("meta default_model = %q", meta.DefaultModel)
		}

		// The key came in once and never went out: no answer, no log line.
		for _, b := range bodies {
			if strings.Contains(b, providerKey) || strings.Contains(b, "sk-env-openai-key") || strings.Contains(b, headerSecret) {
				t.Fatalf("a key in an answer: %s", b)
			}
		}
		if strings.Contains(logs.String(), providerKey) || strings.Contains(logs.String(), headerSecret) {
			t.Fatalf("the key in the log: %s", logs.String())
		}

		keep(e.req("DELETE", "/api/providers/"+p.ID, "")).want(t, http.StatusNoContent, "")
		e.req("GET", "/api/providers/"+p.ID, "").want(t, http.StatusNotFound, settings.CodeNotFound)
		e.req("POST", "/api/providers/"+p.ID+"/test", "").want(t, http.StatusNotFound, settings.CodeNotFound)
	})
}

func TestProviderTestErrorsAPI(t *testing.T) {
	var logs bytes.Buffer
	e := providersEnv(t, storetest.SQLite, &logs)
	fake := openaitest.NewServer()
	t.Cleanup(fake.Close)
	fake.RequireKey("sk-the-right-key-000000000000")
	r := e.req("POST", "/api/providers", `{"name":"wrongkey","kind":"openai","base_url":"`+fake.BaseURL()+`","api_key":"`+providerKey+`"}`)
	var p settings.ProviderView
	r.decode(t, &p)
	res := e.req("POST", "/api/providers/"+p.ID+"/test", "")
	res.want(t, http.StatusBadGateway, settings.CodeTestAuth)
	if strings.Contains(string(res.body), providerKey) {
		t.Fatalf("the refusal echoes the key: %s", res.body)
	}
}

func TestSettingsUnavailable(t *testing.T) {
	e := newEnv(t)
	e.req("GET", "/api/providers", "").want(t, http.StatusServiceUnavailable, api.CodeSettingsUnavailable)
	e.req("PATCH", "/api/settings", `{}`).want(t, http.StatusServiceUnavailable, api.CodeSettingsUnavailable)
}
