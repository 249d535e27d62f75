package hook_test

// The watcher's durable cursor (h17-deliver).

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/hook"
	"github.com/caduceus-dev/caduceus/internal/journal"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

// endRun writes a session, a run and its completed run.done.
func endRun(t *testing.T, st store.Store, runID string) {
	t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	err := st.Write(ctx, func(tx store.Tx) error {
		sess := store.Session{ID: "ses_" + runID, Title: "t", Workspace: "/ws", CreatedAt: now, UpdatedAt: now}
		if err := tx.InsertSession(ctx, sess); err != nil {
			return err
		}
		r := store.Run{ID: runID, SessionID: sess.ID, Status: run.Completed, Input: "x", CreatedAt: now, EndedAt: now}
		if err := tx.InsertRun(ctx, r); err != nil {
			return err
		}
		_, err := tx.AppendEvents(ctx, "", event.Draft{RunID: runID, SessionID: sess.ID, Type: event.RunDone,
			Payload: event.RunDonePayload{Status: "completed"}})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// watching runs d.Watch until the returned stop is called.
func watching(t *testing.T, d *hook.Deliverer, hub *journal.Hub) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := d.Watch(ctx, hub); err != nil {
			t.Error(err)
		}
	}()
	return func() { cancel(); wg.Wait() }
}

func queued(t *testing.T, st store.Store) map[string]bool {
	t.Helper()
	ds, err := st.ListDeliveries(context.Background(), "wh_1", 100)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, d := range ds {
		if out[d.RunID] {
			t.Errorf("run %s queued twice", d.RunID)
		}
		out[d.RunID] = true
	}
	return out
}

func waitQueued(t *testing.T, st store.Store, runID string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if queued(t, st)[runID] {
			return
		}
	}
	t.Fatalf("run %s was not queued; queued %v", runID, queued(t, st))
}

func TestWatchResumesFromTheCursor(t *testing.T) {
	ctx := context.Background()
	st, _ := storetest.SQLite(t)
	now := time.Now().UTC()
	if err := st.Write(ctx, func(tx store.Tx) error {
		return tx.InsertWebhook(ctx, store.Webhook{ID: "wh_1", Name: "w", URL: "http://127.0.0.1:9/", Kind: store.WebhookJSON,
			Enabled: true, CreatedAt: now, UpdatedAt: now})
	}); err != nil {
		t.Fatal(err)
	}
	hubCtx, stopHub := context.WithCancel(ctx)
	defer stopHub()
	hub := journal.NewHub(st, 10*time.Millisecond, slog.New(slog.DiscardHandler))
	go func() { _ = hub.Run(hubCtx) }()
	d := hook.NewDeliverer(hook.Config{Store: st, Poll: 20 * time.Millisecond})

	// A run that ended before any watcher is not told: the first watch
	// starts at the journal's end, and keeps that as the cursor.
	endRun(t, st, "run_before")
	stop := watching(t, d, hub)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, ok, err := st.DeliveryCursor(ctx); err != nil || ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first watch kept no cursor")
		}
	}
	endRun(t, st, "run_watched")
	waitQueued(t, st, "run_watched")
	stop()

	// A run that ends while no one watches is queued by the next watch.
	endRun(t, st, "run_unwatched")
	stop = watching(t, d, hub)
	waitQueued(t, st, "run_unwatched")
	stop()
	// A second watcher, and a third over the same events, queue nothing
	// twice (queued fails on a run queued twice).
	stop = watching(t, d, hub)
	stop2 := watching(t, hook.NewDeliverer(hook.Config{Store: st, Poll: 20 * time.Millisecond}), hub)
	endRun(t, st, "run_two_watchers")
	waitQueued(t, st, "run_two_watchers")
	stop()
	stop2()

	// A cursor past the journal's end (an older copy of the database put
	// back) starts at the end rather than replaying the journal.
	last, err := st.LastEventID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Write(ctx, func(tx store.Tx) error { return tx.AdvanceDeliveryCursor(ctx, last+100) }); err != nil {
		t.Fatal(err)
	}
	if err := st.Write(ctx, func(tx store.Tx) error { return tx.DeleteWebhook(ctx, "wh_1") }); err != nil {
		t.Fatal(err)
	}
	if err := st.Write(ctx, func(tx store.Tx) error {
		return tx.InsertWebhook(ctx, store.Webhook{ID: "wh_1", Name: "w", URL: "http://127.0.0.1:9/", Kind: store.WebhookJSON,
			Enabled: true, CreatedAt: now, UpdatedAt: now})
	}); err != nil {
		t.Fatal(err)
	}
	stop = watching(t, d, hub)
	endRun(t, st, "run_after_restore")
	waitQueued(t, st, "run_after_restore")
	stop()

	got := queued(t, st)
	if len(got) != 1 {
		t.Fatalf("after the cursor was put ahead, queued %v; want run_after_restore only (no replay)", got)
	}
}
