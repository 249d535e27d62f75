package storetest

// Outgoing webhooks and inbound triggers (issue 17, h17-hooks).

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/store"
)

func testWebhooks(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	if _, err := db.GetWebhook(ctx, "wh-1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetWebhook before any: %v, want not found", err)
	}
	b := store.Webhook{ID: "wh-b", Name: "b", URL: "https://example.test/b", Kind: store.WebhookJSON, SecretSealed: "sealed",
		Events: []string{"completed", "failed"}, ProfileID: "prf-1", Enabled: true, CreatedAt: at(1), UpdatedAt: at(1)}
	a := store.Webhook{ID: "wh-a", Name: "a", URL: "https://hooks.slack.test/x", Kind: store.WebhookSlack, SessionID: "s-1",
		CreatedAt: at(2), UpdatedAt: at(2)}
	for _, w := range []store.Webhook{b, a} {
		write(t, db, func(tx store.Tx) error { return tx.InsertWebhook(ctx, w) })
	}
	if got, err := db.GetWebhook(ctx, "wh-b"); err != nil || !reflect.DeepEqual(got, b) {
		t.Fatalf("GetWebhook = %+v, %v; want %+v", got, err, b)
	}
	all, err := db.ListWebhooks(ctx)
	if err != nil || len(all) != 2 || !reflect.DeepEqual(all[0], a) || all[1].ID != "wh-b" {
		t.Fatalf("ListWebhooks = %+v, %v; want a, b", all, err)
	}
	b2 := b
	b2.Name, b2.Events, b2.Enabled, b2.UpdatedAt, b2.CreatedAt = "b2", nil, false, at(5), at(99) // CreatedAt is kept
	write(t, db, func(tx store.Tx) error { return tx.UpdateWebhook(ctx, b2) })
	b2.CreatedAt = b.CreatedAt
	if got, err := db.GetWebhook(ctx, "wh-b"); err != nil || !reflect.DeepEqual(got, b2) {
		t.Fatalf("GetWebhook after update = %+v, %v; want %+v", got, err, b2)
	}
	err = db.Write(ctx, func(tx store.Tx) error { return tx.UpdateWebhook(ctx, store.Webhook{ID: "wh-none", Kind: "json"}) })
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("UpdateWebhook of unknown: %v, want not found", err)
	}
	write(t, db, func(tx store.Tx) error {
		return tx.InsertDelivery(ctx, store.Delivery{ID: "dl-1", WebhookID: "wh-b", RunID: "r-1", Event: "completed",
			Payload: "{}", Attempt: 1, State: store.DeliveryPending, NextAt: at(1), CreatedAt: at(1)})
	})
	write(t, db, func(tx store.Tx) error { return tx.DeleteWebhook(ctx, "wh-b") })
	write(t, db, func(tx store.Tx) error { return tx.DeleteWebhook(ctx, "wh-none") })
	if _, err := db.GetWebhook(ctx, "wh-b"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetWebhook after delete: %v", err)
	}
	if got, err := db.ListDeliveries(ctx, "wh-b", 10); err != nil || len(got) != 0 {
		t.Fatalf("deliveries of a deleted webhook = %+v, %v; want none", got, err)
	}
}

func testDeliveries(t *testing.T, open Open) {
	ctx := context.Background()
	db, another := open(t)
	other := another()
	claim := func(s store.Store, now, until time.Time) (d store.Delivery, ok bool) {
		t.Helper()
		write(t, s, func(tx store.Tx) error {
			var err error
			d, ok, err = tx.ClaimDelivery(ctx, now, until)
			return err
		})
		return d, ok
	}
	if _, ok := claim(db, at(100), at(200)); ok {
		t.Fatal("claimed a delivery from an empty store")
	}
	d1 := store.Delivery{ID: "dl-1", WebhookID: "wh-1", RunID: "r-1", Event: "completed", Payload: `{"event":"run.completed"}`,
		Attempt: 1, State: store.DeliveryPending, NextAt: at(10), CreatedAt: at(10)}
	d2 := store.Delivery{ID: "dl-2", WebhookID: "", RunID: "r-2", URL: "http://127.0.0.1:1/x", Event: "failed", Payload: "{}",
		Attempt: 1, State: store.DeliveryPending, NextAt: at(50), CreatedAt: at(5)}
	for _, d := range []store.Delivery{d1, d2} {
		write(t, db, func(tx store.Tx) error { return tx.InsertDelivery(ctx, d) })
	}
	// The same ID again (another process saw the run end) changes nothing.
	again := d1
	again.Payload, again.NextAt = "{}", at(0)
	write(t, db, func(tx store.Tx) error { return tx.InsertDelivery(ctx, again) })
	// Not due yet: nothing.
	if _, ok := claim(db, at(9), at(1000)); ok {
		t.Fatal("claimed a delivery before it was due")
	}
	// The oldest due goes to one store handle; the other gets the next.
	got, ok := claim(db, at(60), at(1000))
	want := d1
	want.State, want.NextAt = store.DeliverySending, at(1000)
	if !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf("first claim = %+v, %v; want %+v", got, ok, want)
	}
	if got, ok := claim(other, at(60), at(1000)); !ok || got.ID != "dl-2" {
		t.Fatalf("second claim = %+v, %v; want dl-2", got, ok)
	}
	if _, ok := claim(other, at(60), at(1000)); ok {
		t.Fatal("claimed a delivery another sender holds")
	}
	// A claim that ran out (its sender died) is taken again.
	if got, ok := claim(other, at(1000), at(2000)); !ok || got.ID != "dl-1" || got.Attempt != 1 {
		t.Fatalf("reclaim = %+v, %v; want dl-1", got, ok)
	}
	fin := want
	fin.State, fin.StatusCode, fin.Error, fin.Duration, fin.NextAt = store.DeliveryRetried, 500, "HTTP 500", 12*time.Millisecond, at(2000)
	write(t, db, func(tx store.Tx) error { return tx.FinishDelivery(ctx, fin) })
	ok2 := d2
	ok2.State, ok2.StatusCode, ok2.NextAt = store.DeliveryOK, 204, at(1000)
	write(t, db, func(tx store.Tx) error { return tx.FinishDelivery(ctx, ok2) })
	next := store.Delivery{ID: "dl-3", WebhookID: "wh-1", RunID: "r-1", Event: "completed", Payload: d1.Payload,
		Attempt: 2, State: store.DeliveryPending, NextAt: at(3000), CreatedAt: at(1500)}
	write(t, db, func(tx store.Tx) error { return tx.InsertDelivery(ctx, next) })
	if _, ok := claim(db, at(1500), at(9000)); ok {
		t.Fatal("claimed a finished attempt")
	}
	log, err := db.ListDeliveries(ctx, "wh-1", 10)
	if err != nil || len(log) != 2 || !reflect.DeepEqual(log[0], next) || !reflect.DeepEqual(log[1], fin) {
		t.Fatalf("ListDeliveries = %+v, %v; want attempt 2 then attempt 1 %+v", log, err, fin)
	}
	if log, err := db.ListDeliveries(ctx, "wh-1", 1); err != nil || len(log) != 1 || log[0].ID != "dl-3" {
		t.Fatalf("ListDeliveries limit 1 = %+v, %v", log, err)
	}
	if log, err := db.ListDeliveries(ctx, "", 10); err != nil || len(log) != 1 || !reflect.DeepEqual(log[0], ok2) {
		t.Fatalf("per-run deliveries = %+v, %v", log, err)
	}
	err = db.Write(ctx, func(tx store.Tx) error { return tx.FinishDelivery(ctx, store.Delivery{ID: "dl-none"}) })
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("FinishDelivery of unknown: %v, want not found", err)
	}
}

func testTriggers(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	if _, err := db.GetTrigger(ctx, "tg-1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetTrigger before any: %v, want not found", err)
	}
	tr := store.Trigger{ID: "tg-1", Name: "deploys", SecretSealed: "sealed", Template: "Deploy {{.ref}}", ProfileID: "prf-1",
		Workspace: "/w", SessionPolicy: store.SessionAccumulate, Enabled: true, CreatedAt: at(1), UpdatedAt: at(1)}
	write(t, db, func(tx store.Tx) error { return tx.InsertTrigger(ctx, tr) })
	if got, err := db.GetTrigger(ctx, "tg-1"); err != nil || got != tr {
		t.Fatalf("GetTrigger = %+v, %v; want %+v", got, err, tr)
	}
	tr2 := tr
	tr2.SessionID, tr2.Enabled, tr2.UpdatedAt = "s-9", false, at(4)
	write(t, db, func(tx store.Tx) error { return tx.UpdateTrigger(ctx, tr2) })
	if all, err := db.ListTriggers(ctx); err != nil || len(all) != 1 || all[0] != tr2 {
		t.Fatalf("ListTriggers = %+v, %v; want %+v", all, err, tr2)
	}
	err := db.Write(ctx, func(tx store.Tx) error { return tx.UpdateTrigger(ctx, store.Trigger{ID: "tg-none"}) })
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("UpdateTrigger of unknown: %v, want not found", err)
	}

	see := func(trigger, sig string, now, forget time.Time) bool {
		t.Helper()
		var fresh bool
		write(t, db, func(tx store.Tx) error {
			var err error
			fresh, err = tx.SeeTriggerSignature(ctx, trigger, sig, now, forget)
			return err
		})
		return fresh
	}
	if !see("tg-1", "sha256=aa", at(10), at(0)) {
		t.Fatal("a first signature is not fresh")
	}
	if see("tg-1", "sha256=aa", at(20), at(0)) {
		t.Fatal("a replayed signature is fresh")
	}
	if !see("tg-2", "sha256=aa", at(20), at(0)) {
		t.Fatal("another trigger's signature counts as a replay")
	}
	// Once it falls out of the window it is forgotten.
	if !see("tg-1", "sha256=aa", at(500), at(100)) {
		t.Fatal("a signature older than the window still counts")
	}
	write(t, db, func(tx store.Tx) error { return tx.DeleteTrigger(ctx, "tg-1") })
	if _, err := db.GetTrigger(ctx, "tg-1"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetTrigger after delete: %v", err)
	}
	if !see("tg-1", "sha256=aa", at(510), at(100)) {
		t.Fatal("a deleted trigger's signatures are kept")
	}
}

func testRunWebhooks(t *testing.T, open Open) {
	ctx := context.Background()
	db := fresh(t, open)
	if got, err := db.RunWebhook(ctx, "r-1"); err != nil || got != "" {
		t.Fatalf("RunWebhook of a run without = %q, %v", got, err)
	}
	write(t, db, func(tx store.Tx) error { return tx.PutRunWebhook(ctx, "r-1", "https://ci.test/done") })
	if got, err := db.RunWebhook(ctx, "r-1"); err != nil || got != "https://ci.test/done" {
		t.Fatalf("RunWebhook = %q, %v", got, err)
	}
	if got, err := db.RunWebhook(ctx, "r-2"); err != nil || got != "" {
		t.Fatalf("RunWebhook of another run = %q, %v", got, err)
	}
}
