package hook

// The body a delivery posts, and queueing it when a run ends.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// EventTest is the event of POST /api/webhooks/{id}/test's delivery.
const EventTest = "webhook.test"

// Events are the run statuses a webhook can be told of (a new slice each
// call: no caller can change another's).
func Events() []string {
	return []string{string(run.Completed), string(run.Failed), string(run.Expired)}
}

// SummaryChars bounds a payload's summary: the start of the run's last
// answer.
const SummaryChars = 500

// Payload is the JSON body of a delivery.
type Payload struct {
	Event   string     `json:"event"` // run.completed, run.failed, run.expired or webhook.test
	Run     PayloadRun `json:"run"`
	Summary string     `json:"summary"`
	Link    string     `json:"link,omitempty"`
}

// PayloadRun is the run a payload reports.
type PayloadRun struct {
	ID        string            `json:"id"`
	SessionID string            `json:"session_id"`
	Status    string            `json:"status"`
	Usage     event.UsageTotals `json:"usage"`
	Error     *event.ErrorInfo  `json:"error,omitempty"`
}

// slackBody turns a payload into a Slack incoming webhook's {"text"}.
func slackBody(payload string) []byte {
	var p Payload
	_ = json.Unmarshal([]byte(payload), &p) // written by RunEnded; a test has no run
	text := fmt.Sprintf("Caduceus run %s %s", p.Run.ID, p.Run.Status)
	if p.Event == EventTest {
		text = "Caduceus webhook test"
	}
	if p.Run.Error != nil {
		text += ": " + p.Run.Error.Message
	}
	if p.Summary != "" {
		text += "\n" + p.Summary
	}
	if p.Link != "" {
		text += "\n" + p.Link
	}
	b, _ := json.Marshal(map[string]string{"text": text}) // a map of strings always marshals
	return b
}

// attemptID is the ID of a delivery's nth attempt. Attempt 1's base is
// derived from the run and the webhook, so every process that sees the
// run end queues the same attempt (InsertDelivery keeps the first).
func attemptID(base string, n int) string { return base + "-" + strconv.Itoa(n) }

func baseID(attempt string) string {
	if i := strings.LastIndexByte(attempt, '-'); i > 0 {
		return attempt[:i]
	}
	return attempt
}

// RunEnded queues a delivery to every enabled webhook that wants e, a
// run.done, and to runURL (the run's own webhook_url) when it is set. A
// webhook wants a run its filter matches, or one whose job named it in
// its delivery; its status filter applies either way.
func (d *Deliverer) RunEnded(ctx context.Context, e event.Event, runURL string) error {
	var done event.RunDonePayload
	if err := json.Unmarshal(e.Payload, &done); err != nil {
		// Not an error the watcher retries: the journal is never
		// rewritten, so the event would stop every later delivery.
		d.cfg.Log.Warn("webhooks: an unreadable run.done", "event", e.ID, "run", e.RunID, "err", err)
		return nil
	}
	if !slices.Contains(Events(), done.Status) {
		return nil // a cancel is the person's own doing: no one to tell
	}
	hooks, err := d.cfg.Store.ListWebhooks(ctx)
	if err != nil {
		return err
	}
	chosen, err := d.jobWebhooks(ctx, e.RunID)
	if err != nil {
		return err
	}
	var sess store.Session
	var want []store.Webhook
	for _, w := range hooks {
		if !w.Enabled || (len(w.Events) > 0 && !slices.Contains(w.Events, done.Status)) {
			continue
		}
		// A webhook the run's job chose is told whatever its own session
		// and profile filter say; once, as the loop visits it once.
		if slices.Contains(chosen, w.ID) {
			want = append(want, w)
			continue
		}
		if w.SessionID != "" && w.SessionID != e.SessionID {
			continue
		}
		if w.ProfileID != "" {
			if sess.ID == "" {
				if sess, err = d.cfg.Store.GetSession(ctx, e.SessionID); err != nil {
					return err
				}
			}
			if sess.ProfileID != w.ProfileID {
				continue
			}
		}
		want = append(want, w)
	}
	if len(want) == 0 && runURL == "" {
		return nil
	}
	p := Payload{Event: "run." + done.Status, Summary: d.summary(ctx, e.RunID),
		Run: PayloadRun{ID: e.RunID, SessionID: e.SessionID, Status: done.Status, Usage: done.Usage, Error: done.Error}}
	if d.cfg.Link != nil {
		p.Link = d.cfg.Link(e.SessionID, e.RunID)
	}
	body, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("webhook payload: %w", err)
	}
	now := d.cfg.Now()
	err = d.cfg.Store.Write(ctx, func(tx store.Tx) error {
		for _, w := range want {
			a := store.Delivery{ID: attemptID("dl-"+e.RunID+"."+w.ID, 1), WebhookID: w.ID, RunID: e.RunID,
				Event: p.Event, Payload: string(body), Attempt: 1, State: store.DeliveryPending, NextAt: now, CreatedAt: now}
			if err := tx.InsertDelivery(ctx, a); err != nil {
				return err
			}
		}
		if runURL == "" {
			return nil
		}
		return tx.InsertDelivery(ctx, store.Delivery{ID: attemptID("dl-"+e.RunID+".run", 1), RunID: e.RunID, URL: runURL,
			Event: p.Event, Payload: string(body), Attempt: 1, State: store.DeliveryPending, NextAt: now, CreatedAt: now})
	})
	if err != nil {
		return fmt.Errorf("queue webhook deliveries of run %s: %w", e.RunID, err)
	}
	d.Poke()
	return nil
}

// jobWebhooks are the webhooks the job that started the run chose for its
// delivery (none for a run no job started, or whose job is gone).
func (d *Deliverer) jobWebhooks(ctx context.Context, runID string) ([]string, error) {
	jobID, err := d.cfg.Store.JobOfRun(ctx, runID)
	if err != nil || jobID == "" {
		return nil, err
	}
	j, err := d.cfg.Store.GetJob(ctx, jobID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return j.Delivery.WebhookIDs, nil
}

// summary is the start of the run's last answer ("" when it gave none).
func (d *Deliverer) summary(ctx context.Context, runID string) string {
	evs, err := d.cfg.Store.Events(ctx, store.EventQuery{RunID: runID, Types: []event.Type{event.MessageDone}})
	if err != nil || len(evs) == 0 {
		return ""
	}
	var p event.DonePayload
	if json.Unmarshal(evs[len(evs)-1].Payload, &p) != nil {
		return ""
	}
	r := []rune(p.Text)
	if len(r) > SummaryChars {
		r = r[:SummaryChars]
	}
	return string(r)
}

// Test queues a webhook.test delivery to w, sent even when w is disabled.
func (d *Deliverer) Test(ctx context.Context, w store.Webhook) (store.Delivery, error) {
	body, _ := json.Marshal(Payload{Event: EventTest, Summary: "A test delivery from Caduceus."}) // plain fields always marshal
	now := d.cfg.Now()
	a := store.Delivery{ID: attemptID(id.New("dl"), 1), WebhookID: w.ID, Event: EventTest, Payload: string(body),
		Attempt: 1, State: store.DeliveryPending, NextAt: now, CreatedAt: now}
	if err := d.cfg.Store.Write(ctx, func(tx store.Tx) error { return tx.InsertDelivery(ctx, a) }); err != nil {
		return a, fmt.Errorf("queue webhook test: %w", err)
	}
	d.Poke()
	return a, nil
}
