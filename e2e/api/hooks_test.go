package api_test

// Outgoing webhooks and inbound triggers (issue 17, h17-hooks): acceptance.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/config"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/hook"
	"github.com/caduceus-dev/caduceus/internal/secretbox"
)

// receiver is a local webhook receiver: it answers 500 to the first post
// and 200 after, keeping every post.
type receiver struct {
	okFirst bool // answer 200 from the first post
	mu      sync.Mutex
	n       int
	hdr     []http.Header
	bodys   [][]byte
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.n++
	rc.hdr, rc.bodys = append(rc.hdr, r.Header.Clone()), append(rc.bodys, b)
	if rc.n == 1 && !rc.okFirst {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusOK)
}

func (rc *receiver) posts() ([]http.Header, [][]byte) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]http.Header(nil), rc.hdr...), append([][]byte(nil), rc.bodys...)
}

// fire posts body to a trigger, signed with secret at ts.
func fire(t *testing.T, url, secret string, ts time.Time, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest("POST", url, bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(hook.HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set(hook.HeaderSignature, hook.Sign(secret, ts, []byte(body)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// A trigger with a wrong signature, an old timestamp or a replayed
// signature starts nothing; a valid one starts a run whose prompt is the
// filled template. The run's end goes to a local receiver with a valid
// signature; the receiver's 500 is retried, and the deliveries log shows
// both attempts.
func TestTriggerStartsRunAndWebhookIsRetried(t *testing.T) {
	e2etest.EachStore(t, pg, triggerStartsRunAndWebhookIsRetried)
}

// withSecretKey gives the server CADUCEUS_SECRET_KEY, which a server on
// PostgreSQL needs to seal secrets.
func withSecretKey(c *config.Config) {
	key := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{9}, 32))
	c.Getenv = func(k string) string {
		if k == secretbox.EnvKey {
			return key
		}
		return ""
	}
}

func triggerStartsRunAndWebhookIsRetried(t *testing.T, dbArgs []string) {
	s := e2etest.StartServer(t, e2etest.Scenarios(e2etest.Scenario("", e2etest.Turn(e2etest.Text("Deployed v1.2 to staging.")))),
		e2etest.WithApprovalMode("off"), onStore(dbArgs), withSecretKey,
		func(c *config.Config) { c.PublicURL = "https://cad.example.test" })
	rc := &receiver{}
	recv := httptest.NewServer(rc)
	defer recv.Close()

	var wh struct{ ID, Secret string }
	if c := e2etest.Do(t, "POST", s.URL+"/api/webhooks", map[string]any{"name": "ci", "url": recv.URL}, &wh); c != http.StatusCreated || wh.Secret == "" {
		t.Fatalf("create webhook: %d %+v", c, wh)
	}
	var tr struct{ ID, Secret, URL string }
	if c := e2etest.Do(t, "POST", s.URL+"/api/triggers", map[string]any{"name": "deploys",
		"prompt_template": "Deploy {{.ref}} to {{.env}}"}, &tr); c != http.StatusCreated || tr.Secret == "" {
		t.Fatalf("create trigger: %d %+v", c, tr)
	}
	url := s.URL + tr.URL
	body := `{"ref":"v1.2","env":"staging"}`
	now := time.Now()
	for _, c := range []struct {
		name, secret string
		ts           time.Time
		code         string
	}{
		{"wrong signature", "whsec_wrong", now, "signature_invalid"},
		{"old timestamp", tr.Secret, now.Add(-10 * time.Minute), "signature_stale"},
	} {
		code, out := fire(t, url, c.secret, c.ts, body)
		if got, _ := out["error"].(map[string]any); code != http.StatusUnauthorized || got["code"] != c.code {
			t.Fatalf("%s: %d %v, want 401 %s", c.name, code, out, c.code)
		}
	}
	if ss := s.Sessions(t); len(ss) != 0 {
		t.Fatalf("refused calls made %d sessions", len(ss))
	}

	code, out := fire(t, url, tr.Secret, now, body)
	if code != http.StatusAccepted {
		t.Fatalf("valid call: %d %v", code, out)
	}
	runID, _ := out["run_id"].(string)
	sessionID, _ := out["session_id"].(string)
	s.WaitStatus(t, runID, "completed")
	var prompt string
	for _, e := range s.Journal(t, runID) {
		if e.Type == event.MessageUser {
			var p event.MessageUserPayload
			if err := json.Unmarshal(e.Payload, &p); err != nil {
				t.Fatal(err)
			}
			prompt = p.Content
		}
	}
	if prompt != "Deploy v1.2 to staging" {
		t.Fatalf("the run's prompt = %q", prompt)
	}
	// The same signed call again is a replay: refused, nothing more runs.
	code, out = fire(t, url, tr.Secret, now, body)
	if got, _ := out["error"].(map[string]any); code != http.StatusUnauthorized || got["code"] != "signature_replayed" {
		t.Fatalf("replay: %d %v", code, out)
	}
	if ss := s.Sessions(t); len(ss) != 1 || len(s.Runs(t, ss[0].ID)) != 1 {
		t.Fatalf("after the replay: %d sessions", len(ss))
	}

	// The receiver answered 500, then 200 to the retry (2 s later).
	deadline := time.Now().Add(20 * time.Second)
	hdrs, bodies := rc.posts()
	for len(bodies) < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		hdrs, bodies = rc.posts()
	}
	if len(bodies) != 2 {
		t.Fatalf("the receiver got %d posts, want 2", len(bodies))
	}
	for i, b := range bodies {
		ts := hdrs[i].Get(hook.HeaderTimestamp)
		sec, _ := strconv.ParseInt(ts, 10, 64)
		if err := hook.Verify(wh.Secret, ts, hdrs[i].Get(hook.HeaderSignature), b, time.Unix(sec, 0)); err != nil {
			t.Fatalf("post %d: %v", i+1, err)
		}
		if sec < now.Unix()-5 || sec > time.Now().Unix()+5 {
			t.Fatalf("post %d was signed at %d, not now", i+1, sec)
		}
		var p hook.Payload
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		if p.Event != "run.completed" || p.Run.ID != runID || p.Run.Status != "completed" || p.Summary != "Deployed v1.2 to staging." ||
			p.Link != "https://cad.example.test/s/"+sessionID {
			t.Fatalf("post %d = %s", i+1, b)
		}
	}
	var log struct {
		Deliveries []struct {
			RunID      string `json:"run_id"`
			Attempt    int    `json:"attempt"`
			State      string `json:"state"`
			StatusCode int    `json:"status_code"`
		} `json:"deliveries"`
	}
	// The second attempt's outcome is written just after the receiver
	// answered it.
	for time.Now().Before(deadline) {
		if c := e2etest.Do(t, "GET", s.URL+"/api/webhooks/"+wh.ID+"/deliveries", nil, &log); c != http.StatusOK {
			t.Fatalf("deliveries: %d", c)
		}
		if len(log.Deliveries) == 2 && log.Deliveries[0].State != "sending" {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if len(log.Deliveries) != 2 {
		t.Fatalf("deliveries = %+v", log.Deliveries)
	}
	last, first := log.Deliveries[0], log.Deliveries[1]
	if first.Attempt != 1 || first.State != "retried" || first.StatusCode != 500 || first.RunID != runID ||
		last.Attempt != 2 || last.State != "ok" || last.StatusCode != 200 {
		t.Fatalf("deliveries = %+v", log.Deliveries)
	}
}

// A message's webhook_url is told of its run's end, signed with the run
// key an admin reads from POST /api/webhooks/run-key.
func TestRunWebhookURLIsSigned(t *testing.T) {
	s := e2etest.StartServer(t, e2etest.Scenarios(e2etest.Scenario("", e2etest.Turn(e2etest.Text("Tests pass.")))),
		e2etest.WithApprovalMode("off"))
	rc := &receiver{okFirst: true}
	recv := httptest.NewServer(rc)
	defer recv.Close()
	sid := s.NewSession(t)
	var ru e2etest.RunJSON
	if c := e2etest.Do(t, "POST", s.URL+"/api/sessions/"+sid+"/messages", map[string]any{"content": "run the tests",
		"webhook_url": recv.URL + "/ci?job=7"}, &ru); c != http.StatusAccepted {
		t.Fatalf("send: %d", c)
	}
	s.WaitStatus(t, ru.ID, "completed")
	var key struct{ Key string }
	if c := e2etest.Do(t, "POST", s.URL+"/api/webhooks/run-key", nil, &key); c != http.StatusOK || key.Key == "" {
		t.Fatalf("run key: %d", c)
	}
	deadline := time.Now().Add(15 * time.Second)
	hdrs, bodies := rc.posts()
	for len(bodies) < 1 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		hdrs, bodies = rc.posts()
	}
	if len(bodies) != 1 {
		t.Fatalf("the receiver got %d posts, want 1", len(bodies))
	}
	if err := hook.Verify(key.Key, hdrs[0].Get(hook.HeaderTimestamp), hdrs[0].Get(hook.HeaderSignature), bodies[0], time.Now()); err != nil {
		t.Fatalf("the run's delivery: %v", err)
	}
	var p hook.Payload
	if err := json.Unmarshal(bodies[0], &p); err != nil || p.Run.ID != ru.ID || p.Summary != "Tests pass." {
		t.Fatalf("payload = %s, %v", bodies[0], err)
	}
}
