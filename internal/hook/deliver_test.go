package hook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/hook"
	"github.com/caduceus-dev/caduceus/internal/secretbox"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

// receiver is a local webhook receiver answering codes in turn (the last
// one from then on) and keeping what it got.
type receiver struct {
	mu    sync.Mutex
	codes []int
	got   []*http.Request
	body  [][]byte
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.got, rc.body = append(rc.got, r), append(rc.body, b)
	code := rc.codes[0]
	if len(rc.codes) > 1 {
		rc.codes = rc.codes[1:]
	}
	w.WriteHeader(code)
}

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newBox(t *testing.T) *secretbox.Box {
	t.Helper()
	box, err := secretbox.New(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return box
}

func runDone(t *testing.T, status string) event.Event {
	t.Helper()
	p, err := json.Marshal(event.RunDonePayload{Status: status, Usage: event.UsageTotals{InputTokens: 12, OutputTokens: 3},
		Error: map[bool]*event.ErrorInfo{true: {Code: "model_error", Message: "the model failed"}}[status == "failed"]})
	if err != nil {
		t.Fatal(err)
	}
	return event.Event{ID: 9, RunID: "run_1", SessionID: "ses_1", Type: event.RunDone, Terminal: true, Payload: p}
}

func TestDeliveries(t *testing.T) {
	tests := []struct {
		name      string
		kind      string
		status    string // the run's end
		codes     []int  // the receiver's answers
		wantCodes []int  // the attempts' status codes, oldest first
		wantState []string
	}{
		{"500 then 200 is retried", store.WebhookJSON, "completed", []int{500, 200}, []int{500, 200},
			[]string{store.DeliveryRetried, store.DeliveryOK}},
		{"4xx is final", store.WebhookJSON, "failed", []int{410}, []int{410}, []string{store.DeliveryFailed}},
		{"5xx five times fails", store.WebhookJSON, "completed", []int{503}, []int{503, 503, 503, 503, 503},
			[]string{store.DeliveryRetried, store.DeliveryRetried, store.DeliveryRetried, store.DeliveryRetried, store.DeliveryFailed}},
		{"slack", store.WebhookSlack, "completed", []int{200}, []int{200}, []string{store.DeliveryOK}},
		{"cancelled is not told", store.WebhookJSON, "cancelled", []int{200}, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			st, _ := storetest.SQLite(t)
			rc := &receiver{codes: tc.codes}
			srv := httptest.NewServer(rc)
			defer srv.Close()
			box := newBox(t)
			secret := "whsec-test"
			w := store.Webhook{ID: "wh_1", Name: "ci", URL: srv.URL, Kind: tc.kind, Enabled: true}
			if tc.kind == store.WebhookJSON {
				sealed, err := box.Seal(secret, hook.SecretContext("webhook", w.ID))
				if err != nil {
					t.Fatal(err)
				}
				w.SecretSealed = sealed
			}
			if err := st.Write(ctx, func(tx store.Tx) error { return tx.InsertWebhook(ctx, w) }); err != nil {
				t.Fatal(err)
			}
			clk := &clock{now: time.Now()}
			d := hook.NewDeliverer(hook.Config{Store: st, Secrets: func() (hook.Opener, error) { return box, nil },
				Now: clk.Now, Backoff: time.Second, Link: func(s, r string) string { return "http://ui.test/s/" + s + "?run=" + r }})
			// Two processes that both saw the run end queue it once.
			for range 2 {
				if err := d.RunEnded(ctx, runDone(t, tc.status), ""); err != nil {
					t.Fatal(err)
				}
			}
			for i := range 10 {
				sent, err := d.SendOne(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if !sent {
					clk.Add(time.Second << i) // the next retry's wait
				}
			}
			log, err := st.ListDeliveries(ctx, w.ID, 50)
			if err != nil {
				t.Fatal(err)
			}
			if len(log) != len(tc.wantCodes) || len(rc.got) != len(tc.wantCodes) {
				t.Fatalf("%d attempts logged, %d received; want %d", len(log), len(rc.got), len(tc.wantCodes))
			}
			for i, a := range log {
				j := len(log) - 1 - i // the log is newest first
				if a.StatusCode != tc.wantCodes[j] || a.State != tc.wantState[j] || a.Attempt != j+1 {
					t.Errorf("attempt %d = %d %s (#%d), want %d %s", j+1, a.StatusCode, a.State, a.Attempt, tc.wantCodes[j], tc.wantState[j])
				}
			}
			for i, r := range rc.got {
				if tc.kind == store.WebhookSlack {
					var m map[string]string
					if err := json.Unmarshal(rc.body[i], &m); err != nil || len(m) != 1 || m["text"] == "" {
						t.Fatalf("slack body = %s, %v", rc.body[i], err)
					}
					if r.Header.Get(hook.HeaderSignature) != "" {
						t.Fatal("a Slack post is signed")
					}
					continue
				}
				ts, sig := r.Header.Get(hook.HeaderTimestamp), r.Header.Get(hook.HeaderSignature)
				sec, _ := strconv.ParseInt(ts, 10, 64) // the fake clock moved on since: check at the time it was sent
				if err := hook.Verify(secret, ts, sig, rc.body[i], time.Unix(sec, 0)); err != nil {
					t.Fatalf("attempt %d: %v (ts %q sig %q)", i+1, err, ts, sig)
				}
				var p hook.Payload
				if err := json.Unmarshal(rc.body[i], &p); err != nil {
					t.Fatal(err)
				}
				if p.Event != "run."+tc.status || p.Run.ID != "run_1" || p.Run.SessionID != "ses_1" || p.Run.Usage.InputTokens != 12 ||
					p.Link != "http://ui.test/s/ses_1?run=run_1" || (tc.status == "failed") != (p.Run.Error != nil) {
					t.Fatalf("payload = %s", rc.body[i])
				}
			}
		})
	}
}

// A network error is retried like a 5xx.
func TestDeliveryNetworkErrorIsRetried(t *testing.T) {
	ctx := context.Background()
	st, _ := storetest.SQLite(t)
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	clk := &clock{now: time.Now()}
	d := hook.NewDeliverer(hook.Config{Store: st, Now: clk.Now, RunSecret: func() (string, error) { return "run-key", nil }})
	if err := d.RunEnded(ctx, runDone(t, "completed"), url); err != nil {
		t.Fatal(err)
	}
	if sent, err := d.SendOne(ctx); !sent || err != nil {
		t.Fatalf("SendOne = %v, %v", sent, err)
	}
	log, err := st.ListDeliveries(ctx, "", 10)
	if err != nil || len(log) != 2 || log[1].State != store.DeliveryRetried || log[1].Error == "" || log[1].StatusCode != 0 ||
		log[0].State != store.DeliveryPending || log[0].Attempt != 2 || !log[0].NextAt.Equal(clk.Now().Add(2*time.Second).Truncate(time.Millisecond)) {
		t.Fatalf("log = %+v, %v", log, err)
	}
}

// A failed post's error, logged and shown in the delivery log, does not
// quote the URL: a Slack incoming webhook's holds its token.
func TestDeliveryErrorHidesTheURL(t *testing.T) {
	ctx := context.Background()
	st, _ := storetest.SQLite(t)
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/services/T000/B000/SECRETTOKEN"
	srv.Close()
	w := store.Webhook{ID: "wh_s", Name: "chat", URL: url, Kind: store.WebhookSlack, Enabled: true}
	if err := st.Write(ctx, func(tx store.Tx) error { return tx.InsertWebhook(ctx, w) }); err != nil {
		t.Fatal(err)
	}
	d := hook.NewDeliverer(hook.Config{Store: st})
	if _, err := d.Test(ctx, w); err != nil {
		t.Fatal(err)
	}
	if sent, err := d.SendOne(ctx); !sent || err != nil {
		t.Fatalf("SendOne = %v, %v", sent, err)
	}
	log, err := st.ListDeliveries(ctx, w.ID, 10)
	if err != nil || len(log) != 2 {
		t.Fatalf("log = %+v, %v", log, err)
	}
	if e := log[1].Error; e == "" || strings.Contains(e, "SECRETTOKEN") {
		t.Fatalf("the attempt's error = %q", e)
	}
}

// A delivery to a webhook disabled since it was queued fails at once.
func TestDeliveryToADisabledWebhookIsFinal(t *testing.T) {
	ctx := context.Background()
	st, _ := storetest.SQLite(t)
	w := store.Webhook{ID: "wh_d", Name: "off", URL: "http://127.0.0.1:1/x", Kind: store.WebhookSlack, Enabled: true}
	if err := st.Write(ctx, func(tx store.Tx) error { return tx.InsertWebhook(ctx, w) }); err != nil {
		t.Fatal(err)
	}
	d := hook.NewDeliverer(hook.Config{Store: st})
	if err := d.RunEnded(ctx, runDone(t, "completed"), ""); err != nil {
		t.Fatal(err)
	}
	w.Enabled = false
	if err := st.Write(ctx, func(tx store.Tx) error { return tx.UpdateWebhook(ctx, w) }); err != nil {
		t.Fatal(err)
	}
	if sent, err := d.SendOne(ctx); !sent || err != nil {
		t.Fatalf("SendOne = %v, %v", sent, err)
	}
	log, err := st.ListDeliveries(ctx, w.ID, 10)
	if err != nil || len(log) != 1 || log[0].State != store.DeliveryFailed || !strings.Contains(log[0].Error, "disabled") {
		t.Fatalf("log = %+v, %v", log, err)
	}
}
