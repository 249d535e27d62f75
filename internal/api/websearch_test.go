package api_test

// Web search settings (issue 18, h18-web).

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/api"
	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/httpguard"
	"github.com/caduceus-dev/caduceus/internal/identity"
	"github.com/caduceus-dev/caduceus/internal/secret"
	"github.com/caduceus-dev/caduceus/internal/secretbox"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
	"github.com/caduceus-dev/caduceus/internal/websearch"
)

const braveKey = "BSA-test-key-0123456789abcdef-77aa"

func webSearchEnv(t *testing.T, open storetest.Open, logs *bytes.Buffer) *env {
	t.Helper()
	st, _ := open(t)
	red := secret.NewRedactor()
	log := slog.New(red.Handler(slog.NewJSONHandler(logs, nil)))
	keyPath := t.TempDir() + "/" + secretbox.KeyFileName
	ws := websearch.New(websearch.Config{Store: st, Redactor: red, Keys: func(create bool) (*secretbox.Box, error) {
		if create {
			return secretbox.LoadOrCreateFile(keyPath)
		}
		return secretbox.LoadFile(keyPath)
	}})
	ident := identity.New(st, identity.Config{Loopback: true, Log: log})
	a := api.New(st, control.NewService(st, nil, t.TempDir(), control.RetryPolicy{}), nil, api.Info{Version: "test"},
		api.Options{Identity: ident, WebSearch: ws, Redactor: red}, log)
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

// fakeBrave answers Brave Search's wire format for the right key.
func fakeBrave(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/res/v1/web/search" || r.Header.Get("X-Subscription-Token") != braveKey {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"type": "search", "web": {"results": [{"title": "About %s", "url": "https://example.org/a", "description": "A <strong>result</strong>"}]}}`, r.URL.Query().Get("q"))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestWebSearchAPI(t *testing.T) {
	storetest.Each(t, pg, func(t *testing.T, open storetest.Open) {
		var logs bytes.Buffer
		e := webSearchEnv(t, open, &logs)
		brave := fakeBrave(t)
		var bodies []string
		keep := func(r resp) resp { bodies = append(bodies, string(r.body)); return r }

		var v websearch.View
		r := keep(e.req("GET", "/api/settings/web-search", ""))
		r.want(t, http.StatusOK, "")
		r.decode(t, &v)
		if v.Configured || len(v.Kinds) != 3 {
			t.Fatalf("initial = %s", r.body)
		}
		e.req("POST", "/api/settings/web-search/test", `{"query":"go"}`).want(t, http.StatusConflict, websearch.CodeNotConfigured)

		// Bad input: a stable code, nothing stored.
		for _, c := range []errCase{
			{name: "bad kind", method: "PUT", path: "/api/settings/web-search", body: `{"kind":"bing"}`, status: 400, code: websearch.CodeInvalidInput},
			{name: "no key", method: "PUT", path: "/api/settings/web-search", body: `{"kind":"brave"}`, status: 400, code: websearch.CodeInvalidInput},
			{name: "bad url", method: "PUT", path: "/api/settings/web-search", body: `{"kind":"searxng","url":"javascript:1"}`, status: 400, code: websearch.CodeInvalidInput},
			{name: "unknown field", method: "PUT", path: "/api/settings/web-search", body: `{"kind":"searxng","apikey":"x"}`, status: 400, code: control.CodeInvalidInput},
		} {
			t.Run(c.name, func(t *testing.T) { keep(e.req(c.method, c.path, c.body)).want(t, c.status, c.code) })
		}
		if sets, _ := e.st.ListSettings(e.ctx); len(sets) != 0 {
			t.Fatalf("bad input stored %+v", sets)
		}

		r = keep(e.req("PUT", "/api/settings/web-search", `{"kind":"brave","url":"`+brave.URL+`/res/v1/web/search","api_key":"`+braveKey+`"}`))
		r.want(t, http.StatusOK, "")
		r.decode(t, &v)
		if !v.Configured || !v.HasKey || v.APIKey != "BSA…77aa" {
			t.Fatalf("put = %s", r.body)
		}
		r = keep(e.req("POST", "/api/settings/web-search/test", `{"query":"caduceus","count":3}`))
		r.want(t, http.StatusOK, "")
		var tr struct {
			OK      bool               `json:"ok"`
			Results []websearch.Result `json:"results"`
		}
		r.decode(t, &tr)
		if !tr.OK || len(tr.Results) != 1 || tr.Results[0].Title != "About caduceus" || tr.Results[0].Snippet != "A result" {
			t.Fatalf("test = %s", r.body)
		}
		keep(e.req("POST", "/api/settings/web-search/test", `{"query":""}`)).want(t, 400, websearch.CodeInvalidInput)
		keep(e.req("POST", "/api/settings/web-search/test", `{"query":"x","count":99}`)).want(t, 400, websearch.CodeInvalidInput)

		// A wrong key: the back-end's refusal, coded, without the key.
		const wrong = "BSA-wrong-key-9999999999999-0000"
		keep(e.req("PUT", "/api/settings/web-search", `{"api_key":"`+wrong+`"}`)).want(t, http.StatusOK, "")
		keep(e.req("POST", "/api/settings/web-search/test", `{"query":"x"}`)).want(t, http.StatusBadGateway, websearch.CodeAuth)

		e.req("DELETE", "/api/settings/web-search", "").want(t, http.StatusNoContent, "")
		r = e.req("GET", "/api/settings/web-search", "")
		r.decode(t, &v)
		if v.Configured {
			t.Fatalf("after delete = %s", r.body)
		}
		// No key in any answer or log line.
		all := strings.Join(bodies, "\n") + logs.String()
		for _, k := range []string{braveKey, wrong} {
			if strings.Contains(all, k) {
				t.Fatalf("a key leaked:\n%s", all)
			}
		}
	})
}

func TestWebSearchAPIUnavailable(t *testing.T) {
	e := newEnv(t)
	e.req("GET", "/api/settings/web-search", "").want(t, http.StatusServiceUnavailable, api.CodeWebSearchUnavailable)
}
