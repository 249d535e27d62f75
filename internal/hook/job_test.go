package hook_test

// A job's chosen webhooks (h17-deliver).

import (
	"context"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/hook"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

func TestJobWebhooks(t *testing.T) {
	ctx := context.Background()
	st, _ := storetest.SQLite(t)
	now := time.Unix(1_800_000_000, 0).UTC()
	hooks := []store.Webhook{
		{ID: "wh_chosen_other_session", SessionID: "ses_other", Enabled: true},   // the job's choice beats its filter
		{ID: "wh_chosen_failed_only", Events: []string{"failed"}, Enabled: true}, // its status filter still applies
		{ID: "wh_chosen_disabled"},                                        // and so does enabled
		{ID: "wh_chosen_and_matching", SessionID: "ses_1", Enabled: true}, // once, not twice
		{ID: "wh_not_chosen_other_session", SessionID: "ses_other", Enabled: true},
	}
	want := map[string]int{"wh_chosen_other_session": 1, "wh_chosen_failed_only": 0, "wh_chosen_disabled": 0,
		"wh_chosen_and_matching": 1, "wh_not_chosen_other_session": 0}
	job := store.Job{ID: "job_1", Name: "j", Prompt: "p", ScheduleKind: "interval", ScheduleExpr: "every 1h", Enabled: true,
		Overlap: "skip", Missed: "once", SessionPolicy: "new", CreatedAt: now, UpdatedAt: now}
	err := st.Write(ctx, func(tx store.Tx) error {
		for _, w := range hooks {
			w.Name, w.URL, w.Kind, w.CreatedAt, w.UpdatedAt = w.ID, "http://127.0.0.1:9/"+w.ID, store.WebhookJSON, now, now
			if err := tx.InsertWebhook(ctx, w); err != nil {
				return err
			}
			if w.ID != "wh_not_chosen_other_session" {
				job.Delivery.WebhookIDs = append(job.Delivery.WebhookIDs, w.ID)
			}
		}
		if err := tx.InsertJob(ctx, job); err != nil {
			return err
		}
		return tx.RecordJobRun(ctx, store.JobRun{JobID: "job_1", RunID: "run_1", SessionID: "ses_1", FireAt: now})
	})
	if err != nil {
		t.Fatal(err)
	}
	d := hook.NewDeliverer(hook.Config{Store: st, Now: func() time.Time { return now }})
	for range 2 { // a run's end read twice queues once
		if err := d.RunEnded(ctx, runDone(t, "completed"), ""); err != nil {
			t.Fatal(err)
		}
	}
	for id, n := range want {
		got, err := st.ListDeliveries(ctx, id, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != n {
			t.Errorf("webhook %s: %d deliveries, want %d", id, len(got), n)
		}
	}
}
