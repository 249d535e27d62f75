package storetest

// Job delivery and the delivery cursor (issue 17, h17-deliver).

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

func testJobDelivery(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	for _, id := range []string{"wh-1", "wh-2", "wh-3"} {
		w := store.Webhook{ID: id, Name: id, URL: "https://example.test/" + id, Kind: store.WebhookJSON, Enabled: true,
			CreatedAt: at(1), UpdatedAt: at(1)}
		write(t, db, func(tx store.Tx) error { return tx.InsertWebhook(ctx, w) })
	}
	a := sampleJob("job-a", "a", at(5000))
	a.Delivery = store.JobDelivery{Notify: true, WebhookIDs: []string{"wh-3", "wh-1", "wh-2"}}
	b := sampleJob("job-b", "b", at(5000))
	b.Delivery = store.JobDelivery{WebhookIDs: []string{"wh-1"}}
	c := sampleJob("job-c", "c", at(5000)) // none
	for _, j := range []store.Job{a, b, c} {
		write(t, db, func(tx store.Tx) error { return tx.InsertJob(ctx, j) })
	}
	get := func(id string) store.Job {
		t.Helper()
		j, err := db.GetJob(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	if got := get("job-a").Delivery; !reflect.DeepEqual(got, a.Delivery) {
		t.Fatalf("delivery read back = %+v, want %+v (in the order given)", got, a.Delivery)
	}
	if got := get("job-c").Delivery; got.Notify || len(got.WebhookIDs) != 0 {
		t.Fatalf("a job without delivery reads %+v", got)
	}
	// UpdateJob replaces the delivery.
	b2 := get("job-b")
	b2.Delivery = store.JobDelivery{Notify: true, WebhookIDs: []string{"wh-2", "wh-1"}}
	write(t, db, func(tx store.Tx) error { return tx.UpdateJob(ctx, b2, b2.NextFireAt) })
	if got := get("job-b").Delivery; !reflect.DeepEqual(got, b2.Delivery) {
		t.Fatalf("delivery after update = %+v, want %+v", got, b2.Delivery)
	}
	// Deleting a webhook removes it from every job's list, and only it.
	write(t, db, func(tx store.Tx) error { return tx.DeleteWebhook(ctx, "wh-1") })
	if got := get("job-a").Delivery; !reflect.DeepEqual(got, store.JobDelivery{Notify: true, WebhookIDs: []string{"wh-3", "wh-2"}}) {
		t.Fatalf("job a after deleting wh-1: %+v", got)
	}
	if got := get("job-b").Delivery; !reflect.DeepEqual(got, store.JobDelivery{Notify: true, WebhookIDs: []string{"wh-2"}}) {
		t.Fatalf("job b after deleting wh-1: %+v", got)
	}
	write(t, db, func(tx store.Tx) error { return tx.DeleteWebhook(ctx, "wh-2") })
	if got := get("job-b").Delivery; got.Notify != true || len(got.WebhookIDs) != 0 {
		t.Fatalf("job b after deleting its last webhook: %+v", got)
	}
	// The list holds all, in ListJobs too.
	all, err := db.ListJobs(ctx)
	if err != nil || len(all) != 3 || !reflect.DeepEqual(all[0].Delivery.WebhookIDs, []string{"wh-3"}) {
		t.Fatalf("ListJobs = %+v, %v", all, err)
	}
}

func testJobOfRun(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	write(t, db, func(tx store.Tx) error { return tx.InsertJob(ctx, sampleJob("job-a", "a", time.Time{})) })
	addSession(t, db, "ses-1", t0)
	addRun(t, db, store.Run{ID: "run-1", SessionID: "ses-1", Status: run.Queued})
	addRun(t, db, store.Run{ID: "run-2", SessionID: "ses-1", Status: run.Queued})
	write(t, db, func(tx store.Tx) error {
		return tx.RecordJobRun(ctx, store.JobRun{JobID: "job-a", RunID: "run-1", SessionID: "ses-1", FireAt: at(3000)})
	})
	for runID, want := range map[string]string{"run-1": "job-a", "run-2": "", "run-none": ""} {
		if got, err := db.JobOfRun(ctx, runID); err != nil || got != want {
			t.Errorf("JobOfRun(%s) = %q, %v; want %q", runID, got, err, want)
		}
	}
	got, err := db.JobsOfRuns(ctx, []string{"run-2", "run-1", "run-none"})
	if err != nil || !reflect.DeepEqual(got, map[string]string{"run-1": "job-a"}) {
		t.Errorf("JobsOfRuns = %v, %v; want run-1 of job-a only", got, err)
	}
	if got, err := db.JobsOfRuns(ctx, nil); err != nil || len(got) != 0 {
		t.Errorf("JobsOfRuns(none) = %v, %v", got, err)
	}
	// More ids than one IN list holds.
	many := make([]string, 1200)
	for i := range many {
		many[i] = fmt.Sprintf("run-x%d", i)
	}
	many[1100] = "run-1"
	if got, err := db.JobsOfRuns(ctx, many); err != nil || !reflect.DeepEqual(got, map[string]string{"run-1": "job-a"}) {
		t.Errorf("JobsOfRuns of 1200 ids = %v, %v", got, err)
	}
}

func testDeliveryCursor(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	if id, ok, err := db.DeliveryCursor(ctx); err != nil || ok || id != 0 {
		t.Fatalf("DeliveryCursor before any = %d, %v, %v; want none", id, ok, err)
	}
	for _, step := range []struct{ advance, want int64 }{{5, 5}, {9, 9}, {7, 9}, {0, 9}, {12, 12}} {
		write(t, db, func(tx store.Tx) error { return tx.AdvanceDeliveryCursor(ctx, step.advance) })
		if id, ok, err := db.DeliveryCursor(ctx); err != nil || !ok || id != step.want {
			t.Fatalf("after advancing to %d: cursor %d, %v, %v; want %d (it never goes back)", step.advance, id, ok, err, step.want)
		}
	}
}
