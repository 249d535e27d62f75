package api_test

// Webhooks and triggers (issue 17, h17-hooks).

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/api"
	"github.com/caduceus-dev/caduceus/internal/hook"
	"github.com/caduceus-dev/caduceus/internal/secretbox"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

func hookBox(t *testing.T) *secretbox.Box {
	t.Helper()
	box, err := secretbox.New(bytes.Repeat([]byte{3}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return box
}

// withHooks gives the API a key for secrets and a deliverer over its store
// (set by the returned pointer once the env exists).
func withHooks(box *secretbox.Box, d **hook.Deliverer) envOpt {
	return func(c *envConfig) {
		c.options = append(c.options, func(o *api.Options) {
			o.HookKeys = func(bool) (*secretbox.Box, error) { return box, nil }
			o.Hooks = *d
		})
	}
}

// signed sends body to a trigger signed with secret at ts.
func (e *env) signed(path, secret string, ts time.Time, body string) resp {
	e.t.Helper()
	return e.req("POST", path, body, hook.HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10),
		hook.HeaderSignature, hook.Sign(secret, ts, []byte(body)))
}

func TestTriggerRoutes(t *testing.T) {
	t.Parallel()
	storetest.Each(t, pg, func(t *testing.T, open storetest.Open) {
		var none *hook.Deliverer
		e := newEnv(t, withStore(open), withHooks(hookBox(t), &none))
		var tr struct {
			ID, Secret, URL string
		}
		r := e.req("POST", "/api/triggers", `{"name":"deploys","prompt_template":"Deploy {{.ref}} for {{.who}}","session_policy":"accumulate"}`)
		r.want(t, http.StatusCreated, "")
		r.decode(t, &tr)
		if tr.Secret == "" || tr.URL != "/hooks/"+tr.ID {
			t.Fatalf("created trigger = %s", r.body)
		}
		// The secret is shown once.
		for _, path := range []string{"/api/triggers", "/api/triggers/" + tr.ID} {
			if got := e.req("GET", path, ""); got.code != http.StatusOK || bytes.Contains(got.body, []byte(tr.Secret)) ||
				!bytes.Contains(got.body, []byte(tr.ID)) {
				t.Fatalf("GET %s = %d %s", path, got.code, got.body)
			}
		}
		for _, bad := range []struct{ body, code string }{
			{`{"name":"x","prompt_template":"{{.a"}`, "invalid_input"},
			{`{"name":"","prompt_template":"hi"}`, "invalid_input"},
			{`{"name":"x","prompt_template":"hi","session_policy":"sometimes"}`, "invalid_input"},
			{`{"name":"x","prompt_template":"hi","profile_id":"prf_nope"}`, "profile_not_found"},
		} {
			e.req("POST", "/api/triggers", bad.body).want(t, http.StatusBadRequest, bad.code)
		}

		path := "/hooks/" + tr.ID
		body := `{"ref":"v1.2","who":"ada"}`
		now := time.Now()
		refused := []struct {
			name string
			r    resp
			code string
		}{
			{"unsigned", e.req("POST", path, body), api.CodeSignatureMissing},
			{"wrong secret", e.signed(path, "whsec_other", now, body), api.CodeSignatureInvalid},
			{"body changed", e.req("POST", path, body, hook.HeaderTimestamp, strconv.FormatInt(now.Unix(), 10),
				hook.HeaderSignature, hook.Sign(tr.Secret, now, []byte(`{"ref":"evil","who":"ada"}`))), api.CodeSignatureInvalid},
			{"old timestamp", e.signed(path, tr.Secret, now.Add(-6*time.Minute), body), api.CodeSignatureStale},
			{"unknown trigger", e.signed("/hooks/trg_01jzzzzzzzzzzzzzzzzzzzzzzz", tr.Secret, now, body), api.CodeSignatureInvalid},
		}
		for _, c := range refused {
			if c.r.code != http.StatusUnauthorized || c.r.errCode() != c.code {
				t.Errorf("%s: %d %s, want 401 %s", c.name, c.r.code, c.r.body, c.code)
			}
		}
		if ss, _, err := e.st.ListSessions(e.ctx, store.SessionPage{Limit: 10}); err != nil || len(ss) != 0 {
			t.Fatalf("refused calls made sessions: %+v, %v", ss, err)
		}

		ok := e.signed(path, tr.Secret, now, body)
		ok.want(t, http.StatusAccepted, "")
		var queued struct{ RunID, SessionID string }
		var m map[string]string
		ok.decode(t, &m)
		queued.RunID, queued.SessionID = m["run_id"], m["session_id"]
		ru, err := e.st.GetRun(e.ctx, queued.RunID)
		if err != nil || ru.SessionID != queued.SessionID || ru.Input != "Deploy v1.2 for ada" {
			t.Fatalf("queued run = %+v, %v", ru, err)
		}
		// The same signed request again is a replay.
		e.req("POST", path, body, hook.HeaderTimestamp, strconv.FormatInt(now.Unix(), 10),
			hook.HeaderSignature, hook.Sign(tr.Secret, now, []byte(body))).want(t, http.StatusUnauthorized, api.CodeSignatureReplayed)
		// A body the template cannot fill starts nothing.
		e.signed(path, tr.Secret, now.Add(time.Second), `{"ref":"v2"}`).want(t, http.StatusUnprocessableEntity, api.CodeTemplateFailed)
		// Accumulate: the next call runs in the same session.
		next := e.signed(path, tr.Secret, now.Add(2*time.Second), `{"ref":"v3","who":"bo"}`)
		next.want(t, http.StatusAccepted, "")
		next.decode(t, &m)
		if m["session_id"] != queued.SessionID {
			t.Fatalf("accumulating trigger's second run went to %s, want %s", m["session_id"], queued.SessionID)
		}
		runs, err := e.st.SessionRuns(e.ctx, queued.SessionID)
		if err != nil || len(runs) != 2 {
			t.Fatalf("session runs = %d, %v; want 2", len(runs), err)
		}
		// Disabled: a valid call starts nothing.
		e.req("PATCH", "/api/triggers/"+tr.ID, `{"enabled":false}`).want(t, http.StatusOK, "")
		e.signed(path, tr.Secret, now.Add(3*time.Second), body).want(t, http.StatusConflict, api.CodeTriggerDisabled)
		// Rotating the secret retires the old one.
		var rot struct{ Secret string }
		rr := e.req("PATCH", "/api/triggers/"+tr.ID, `{"enabled":true,"rotate_secret":true}`)
		rr.want(t, http.StatusOK, "")
		rr.decode(t, &rot)
		if rot.Secret == "" || rot.Secret == tr.Secret {
			t.Fatalf("rotated secret = %q", rot.Secret)
		}
		e.signed(path, tr.Secret, now.Add(4*time.Second), body).want(t, http.StatusUnauthorized, api.CodeSignatureInvalid)
		e.signed(path, rot.Secret, now.Add(4*time.Second), body).want(t, http.StatusAccepted, "")
		e.req("DELETE", "/api/triggers/"+tr.ID, "").want(t, http.StatusNoContent, "")
		e.req("GET", "/api/triggers/"+tr.ID, "").want(t, http.StatusNotFound, "not_found")
		e.signed(path, rot.Secret, now.Add(5*time.Second), body).want(t, http.StatusUnauthorized, api.CodeSignatureInvalid)
	})
}

// A trigger's body is bounded.
func TestTriggerBodyLimit(t *testing.T) {
	t.Parallel()
	var none *hook.Deliverer
	e := newEnv(t, withHooks(hookBox(t), &none))
	var tr struct{ ID, Secret string }
	r := e.req("POST", "/api/triggers", `{"name":"big","prompt_template":"{{.x}}"}`)
	r.want(t, http.StatusCreated, "")
	r.decode(t, &tr)
	big := `{"x":"` + strings.Repeat("a", api.MaxTriggerBody) + `"}`
	got := e.signed("/hooks/"+tr.ID, tr.Secret, time.Now(), big)
	if got.code != http.StatusRequestEntityTooLarge || got.errCode() != "body_too_large" {
		t.Fatalf("a body over 1 MiB: %d %s", got.code, got.body)
	}
}

type hookReceiver struct {
	mu    sync.Mutex
	codes []int
	reqs  []*http.Request
	body  [][]byte
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reqs, h.body = append(h.reqs, r), append(h.body, b)
	code := h.codes[0]
	if len(h.codes) > 1 {
		h.codes = h.codes[1:]
	}
	w.WriteHeader(code)
}

func TestWebhookRoutes(t *testing.T) {
	t.Parallel()
	storetest.Each(t, pg, func(t *testing.T, open storetest.Open) {
		rc := &hookReceiver{codes: []int{200}}
		srv := httptest.NewServer(rc)
		defer srv.Close()
		box := hookBox(t)
		var none *hook.Deliverer // the API without one answers the test route 503; sent below by hand
		e := newEnv(t, withStore(open), withHooks(box, &none))
		for _, bad := range []struct{ body, code string }{
			{`{"name":"x","url":"ftp://example.test/x"}`, api.CodeInvalidURL},
			{`{"name":"x","url":"/relative"}`, api.CodeInvalidURL},
			{`{"name":"x","url":"http://example.test","kind":"xml"}`, "invalid_input"},
			{`{"name":"x","url":"http://example.test","events":["cancelled"]}`, "invalid_input"},
			{`{"name":"x","url":"http://example.test","session_id":"ses_nope"}`, "invalid_input"},
		} {
			e.req("POST", "/api/webhooks", bad.body).want(t, http.StatusBadRequest, bad.code)
		}
		var wh struct {
			ID, Secret string
			Signed     bool
			Events     []string
		}
		r := e.req("POST", "/api/webhooks", `{"name":"ci","url":"`+srv.URL+`","events":["failed"]}`)
		r.want(t, http.StatusCreated, "")
		r.decode(t, &wh)
		if wh.Secret == "" || !wh.Signed || len(wh.Events) != 1 {
			t.Fatalf("created webhook = %s", r.body)
		}
		if got := e.req("GET", "/api/webhooks", ""); got.code != http.StatusOK || bytes.Contains(got.body, []byte(wh.Secret)) {
			t.Fatalf("list = %d %s", got.code, got.body)
		}
		var slack struct{ Secret string }
		r = e.req("POST", "/api/webhooks", `{"name":"chat","url":"https://hooks.slack.test/x","kind":"slack"}`)
		r.want(t, http.StatusCreated, "")
		r.decode(t, &slack)
		if slack.Secret != "" {
			t.Fatal("a Slack webhook got a secret")
		}
		e.req("POST", "/api/webhooks/"+wh.ID+"/test", "").want(t, http.StatusServiceUnavailable, api.CodeHooksUnavailable)
		e.req("PATCH", "/api/webhooks/"+wh.ID, `{"url":"gopher://x"}`).want(t, http.StatusBadRequest, api.CodeInvalidURL)
		e.req("PATCH", "/api/webhooks/"+wh.ID, `{"enabled":false}`).want(t, http.StatusOK, "")

		// Deliveries, through a deliverer on the same store.
		dl := hook.NewDeliverer(hook.Config{Store: e.st, Secrets: func() (hook.Opener, error) { return box, nil }})
		if _, err := dl.Test(e.ctx, store.Webhook{ID: wh.ID}); err != nil {
			t.Fatal(err)
		}
		if sent, err := dl.SendOne(e.ctx); !sent || err != nil {
			t.Fatalf("SendOne = %v, %v", sent, err)
		}
		if len(rc.reqs) != 1 {
			t.Fatalf("the receiver got %d posts", len(rc.reqs))
		}
		if err := hook.Verify(wh.Secret, rc.reqs[0].Header.Get(hook.HeaderTimestamp), rc.reqs[0].Header.Get(hook.HeaderSignature),
			rc.body[0], time.Now()); err != nil {
			t.Fatalf("test delivery: %v", err)
		}
		var log struct {
			Deliveries []struct {
				Event, State string
				StatusCode   int `json:"status_code"`
				Attempt      int
			}
		}
		r = e.req("GET", "/api/webhooks/"+wh.ID+"/deliveries", "")
		r.want(t, http.StatusOK, "")
		r.decode(t, &log)
		if len(log.Deliveries) != 1 || log.Deliveries[0].State != "ok" || log.Deliveries[0].StatusCode != 200 || log.Deliveries[0].Event != hook.EventTest {
			t.Fatalf("deliveries = %s", r.body)
		}
		e.req("GET", "/api/webhooks/"+wh.ID+"/deliveries?limit=0", "").want(t, http.StatusBadRequest, "invalid_input")
		e.req("DELETE", "/api/webhooks/"+wh.ID, "").want(t, http.StatusNoContent, "")
		e.req("GET", "/api/webhooks/"+wh.ID, "").want(t, http.StatusNotFound, "not_found")
		e.req("GET", "/api/webhooks/"+wh.ID+"/deliveries", "").want(t, http.StatusNotFound, "not_found")
	})
}

// A message's webhook_url is checked and kept with the run it queues; the
// run key that signs its delivery is the server key's derived one.
func TestRunWebhookURL(t *testing.T) {
	t.Parallel()
	storetest.Each(t, pg, func(t *testing.T, open storetest.Open) {
		box := hookBox(t)
		var none *hook.Deliverer
		e := newEnv(t, withStore(open), withHooks(box, &none))
		s := e.session(t)
		for _, bad := range []string{"file:///etc/passwd", "not a url", "//host/path"} {
			e.req("POST", "/api/sessions/"+s.ID+"/messages", `{"content":"hi","webhook_url":"`+bad+`"}`).
				want(t, http.StatusBadRequest, api.CodeInvalidURL)
		}
		if runs, err := e.st.SessionRuns(e.ctx, s.ID); err != nil || len(runs) != 0 {
			t.Fatalf("refused messages queued %d runs, %v", len(runs), err)
		}
		var ru struct{ ID string }
		r := e.req("POST", "/api/sessions/"+s.ID+"/messages", `{"content":"hi","webhook_url":"https://ci.test/done?job=7"}`)
		r.want(t, http.StatusAccepted, "")
		r.decode(t, &ru)
		if got, err := e.st.RunWebhook(e.ctx, ru.ID); err != nil || got != "https://ci.test/done?job=7" {
			t.Fatalf("RunWebhook = %q, %v", got, err)
		}
		var key struct{ Key string }
		r = e.req("POST", "/api/webhooks/run-key", "")
		r.want(t, http.StatusOK, "")
		r.decode(t, &key)
		if key.Key == "" || key.Key != box.Derive(hook.RunKeyLabel) {
			t.Fatalf("run key = %q", key.Key)
		}
	})
}

// An accumulating trigger's first calls at once all run in one session.
func TestTriggerAccumulateConcurrentFirstCalls(t *testing.T) {
	t.Parallel()
	storetest.Each(t, pg, func(t *testing.T, open storetest.Open) {
		var none *hook.Deliverer
		e := newEnv(t, withStore(open), withHooks(hookBox(t), &none))
		var tr struct{ ID, Secret string }
		r := e.req("POST", "/api/triggers", `{"name":"acc","prompt_template":"n={{.n}}","session_policy":"accumulate"}`)
		r.want(t, http.StatusCreated, "")
		r.decode(t, &tr)
		now := time.Now()
		const calls = 4
		var wg sync.WaitGroup
		codes := make([]int, calls)
		for i := range calls {
			wg.Go(func() {
				ts := now.Add(time.Duration(i) * time.Second)
				body := `{"n":` + strconv.Itoa(i) + `}`
				req, _ := http.NewRequest("POST", e.srv.URL+"/hooks/"+tr.ID, strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set(hook.HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
				req.Header.Set(hook.HeaderSignature, hook.Sign(tr.Secret, ts, []byte(body)))
				res, err := e.srv.Client().Do(req)
				if err != nil {
					return
				}
				res.Body.Close()
				codes[i] = res.StatusCode
			})
		}
		wg.Wait()
		for i, c := range codes {
			if c != http.StatusAccepted {
				t.Fatalf("call %d: %d", i, c)
			}
		}
		ss, _, err := e.st.ListSessions(e.ctx, store.SessionPage{Limit: 10})
		if err != nil || len(ss) != 1 {
			t.Fatalf("%d sessions, %v; want 1", len(ss), err)
		}
		if runs, err := e.st.SessionRuns(e.ctx, ss[0].ID); err != nil || len(runs) != calls {
			t.Fatalf("%d runs in the session, %v; want %d", len(runs), err, calls)
		}
	})
}
