package journal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

const waitLong = 10 * time.Second // generous: -race on a 2-core machine

// TestHubReplayThenLive subscribes while events are being appended, in a
// loop to shake out races between replay and the live mailbox: every event
// of the session after the cursor arrives exactly once, in order.
// The races are the hub's, whatever the store: PostgreSQL, slower per
// commit, takes fewer rounds (under the full suite's load 50 took 40 s).
func TestHubReplayThenLive(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testHubReplayThenLive(t, storetest.SQLite, 50) })
	t.Run("postgres", func(t *testing.T) { testHubReplayThenLive(t, storetest.Postgres(pg), 10) })
}

func testHubReplayThenLive(t *testing.T, open storetest.Open, iters int) {
	e := newEnv(t, envOpts{open: open})
	ctx := context.Background()
	const before, during = 12, 24
	for i := range iters {
		sid, r1, r2 := fmt.Sprintf("s%d", i), fmt.Sprintf("s%d-r1", i), fmt.Sprintf("s%d-r2", i)
		e.seed(t, sid, r1, r2)
		var pre []event.Event
		for j := 0; j < before; j += 4 {
			err := e.w.Do(ctx, func(tx store.Tx) error {
				evs, err := tx.AppendEvents(ctx, "", d(sid, r1, event.MessageDelta), d(sid, r2, event.MessageDelta),
					d(sid, r1, event.MessageDelta), d(sid, r2, event.MessageDelta))
				pre = append(pre, evs...)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		// Noise in another session, which the subscriber must not see.
		e.seed(t, sid+"-other", sid+"-other-r")

		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			var chans []<-chan error
			for j := range during {
				rid := []string{r1, r2}[j%2]
				// Bursts of Submits (batched) mixed with single Dos.
				if j%3 == 0 {
					if err := e.w.Do(ctx, appendOp(d(sid, rid, event.ToolUpdated), d(sid+"-other", sid+"-other-r", event.Usage))); err != nil {
						t.Error(err)
					}
				} else {
					chans = append(chans, e.w.Submit(appendOp(d(sid, rid, event.MessageDelta))))
				}
				if j%5 == 0 {
					time.Sleep(time.Duration(i%4) * 100 * time.Microsecond)
				}
			}
			for _, ch := range chans {
				if err := <-ch; err != nil {
					t.Error(err)
				}
			}
		}()
		time.Sleep(time.Duration(i%5) * 200 * time.Microsecond)
		cursor := int64(0)
		skip := 0
		if i%3 == 1 { // resume from a cursor in the middle of the history
			skip = before / 2
			cursor = pre[skip-1].ID
		}
		sub := e.hub.Subscribe(Filter{SessionID: sid}, cursor)
		got := collect(t, sub, before+during-skip, waitLong)
		wg.Wait()
		want := storeEvents(t, e.db, store.EventQuery{SessionID: sid, AfterID: cursor})
		if !slices.Equal(eventIDs(got), eventIDs(want)) {
			t.Fatalf("iteration %d:\n got %v\nwant %v", i, eventIDs(got), eventIDs(want))
		}
		expectQuiet(t, sub, 5*time.Millisecond)
		sub.Close()
	}
}

func TestHubFilters(t *testing.T) { storetest.Each(t, pg, testHubFilters) }

func testHubFilters(t *testing.T, open storetest.Open) {
	e := newEnv(t, envOpts{open: open})
	e.seed(t, "s1", "r1", "r2")
	e.seed(t, "s2", "r3")
	types := []event.Type{event.MessageDelta, event.ToolStarted, event.Usage, event.RunStatus}
	appendMix := func(n, offset int) {
		var drafts []event.Draft
		for i := offset; i < offset+n; i++ {
			rid, sid := []string{"r1", "r2", "r3"}[i%3], "s1"
			if rid == "r3" {
				sid = "s2"
			}
			drafts = append(drafts, d(sid, rid, types[(i/3)%len(types)]))
		}
		for len(drafts) > 0 { // a few events per commit
			k := min(len(drafts), 4)
			if err := e.w.Do(context.Background(), appendOp(drafts[:k]...)); err != nil {
				t.Fatal(err)
			}
			drafts = drafts[k:]
		}
	}
	appendMix(40, 0) // replayed from the store

	tests := []struct {
		name string
		f    Filter
	}{
		{"all", Filter{}},
		{"session s1", Filter{SessionID: "s1"}},
		{"session s2", Filter{SessionID: "s2"}},
		{"run r2", Filter{RunID: "r2"}},
		{"types", Filter{Types: []event.Type{event.ToolStarted, event.Usage}}},
		{"session and types", Filter{SessionID: "s1", Types: []event.Type{event.RunStatus}}},
		{"run and types", Filter{RunID: "r3", Types: []event.Type{event.MessageDelta, event.Usage}}},
		{"unknown session", Filter{SessionID: "nope"}},
		{"type never used", Filter{Types: []event.Type{event.ClarifyRequested}}},
		// A browser tab: all of one session, the lifecycle of the others.
		{"session plus types from everywhere", Filter{SessionID: "s1", Also: []event.Type{event.RunStatus}}},
		{"only types from everywhere", Filter{Also: []event.Type{event.RunStatus, event.Usage}}},
		{"run plus types from everywhere", Filter{RunID: "r2", Also: []event.Type{event.ToolStarted}}},
	}
	subs := make([]*Sub, len(tests))
	for i, tc := range tests {
		subs[i] = e.hub.Subscribe(tc.f, 0)
	}
	appendMix(40, 40) // delivered live

	all := storeEvents(t, e.db, store.EventQuery{})
	if len(all) != 80 {
		t.Fatalf("%d events", len(all))
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var want []int64
			for _, ev := range all {
				selected := (tc.f.SessionID == "" || ev.SessionID == tc.f.SessionID) && (tc.f.RunID == "" || ev.RunID == tc.f.RunID) &&
					(len(tc.f.Types) == 0 || slices.Contains(tc.f.Types, ev.Type))
				if len(tc.f.Also) > 0 && tc.f.SessionID == "" && tc.f.RunID == "" {
					selected = false
				}
				if selected || slices.Contains(tc.f.Also, ev.Type) {
					want = append(want, ev.ID)
				}
			}
			got := collect(t, subs[i], len(want), waitLong)
			if !slices.Equal(eventIDs(got), want) {
				t.Fatalf("got %v\nwant %v", eventIDs(got), want)
			}
			expectQuiet(t, subs[i], 5*time.Millisecond)
		})
	}
}

func TestHubMailboxOverflowRereadsStore(t *testing.T) {
	storetest.Each(t, pg, testHubMailboxOverflowRereadsStore)
}

func testHubMailboxOverflowRereadsStore(t *testing.T, open storetest.Open) {
	e := newEnv(t, envOpts{open: open})
	e.seed(t, "s1", "r1")
	e.seed(t, "s2", "r2")
	firstID := appendDirect(t, e.db, d("s1", "r1", event.RunQueued))[0].ID
	sub := e.hub.Subscribe(Filter{SessionID: "s1"}, 0)
	collect(t, sub, 1, waitLong) // replay done: the sub now lives on its mailbox

	// Flood well past the mailbox while the subscriber is not reading.
	const flood = 5000
	if flood <= mailboxCap {
		t.Fatalf("flood %d does not exceed the mailbox (%d)", flood, mailboxCap)
	}
	for n := 0; n < flood; n += 1000 {
		appendDirect(t, e.db, append(repeat(1000, d("s1", "r1", event.MessageDelta)), d("s2", "r2", event.Usage))...)
	}
	last, _ := e.db.LastEventID(context.Background())
	e.hub.Poke()
	deadline := time.Now().Add(waitLong)
	for e.hub.LastID() < last {
		if time.Now().After(deadline) {
			t.Fatalf("hub stuck at %d, want %d", e.hub.LastID(), last)
		}
		time.Sleep(time.Millisecond)
	}
	sub.mu.Lock()
	overflowed, buffered := sub.overflow, len(sub.buf)
	sub.mu.Unlock()
	if !overflowed || buffered != 0 {
		t.Fatalf("mailbox did not overflow (overflow=%v, %d buffered)", overflowed, buffered)
	}

	// A live event during the catch-up, then everything exactly once.
	if err := e.w.Do(context.Background(), appendOp(d("s1", "r1", event.MessageDone))); err != nil {
		t.Fatal(err)
	}
	got := collect(t, sub, flood+1, waitLong)
	want := storeEvents(t, e.db, store.EventQuery{SessionID: "s1", AfterID: firstID})
	if !slices.Equal(eventIDs(got), eventIDs(want)) {
		t.Fatalf("after overflow: got %d events, want %d", len(got), len(want))
	}
	for i, ev := range got {
		if ev.Seq != int64(i+2) {
			t.Fatalf("event %d: seq %d, want %d", i, ev.Seq, i+2)
		}
	}
	expectQuiet(t, sub, 5*time.Millisecond)
}

func TestHubResyncWhenCursorAhead(t *testing.T) { storetest.Each(t, pg, testHubResyncWhenCursorAhead) }

func testHubResyncWhenCursorAhead(t *testing.T, open storetest.Open) {
	tests := []struct {
		name   string
		f      Filter
		events int
		ahead  int64
	}{
		{"all, one past the end", Filter{}, 5, 1},
		{"session, far ahead", Filter{SessionID: "s1"}, 5, 1000},
		{"run", Filter{RunID: "r1"}, 3, 7},
		{"empty journal", Filter{}, 0, 42},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, envOpts{open: open})
			e.seed(t, "s1", "r1")
			e.seed(t, "s2", "r2")
			for range tc.events {
				appendDirect(t, e.db, d("s1", "r1", event.MessageDelta), d("s2", "r2", event.MessageDelta))
			}
			last, _ := e.db.LastEventID(context.Background())
			cursor := last + tc.ahead
			sub := e.hub.Subscribe(tc.f, cursor)
			ctx, cancel := context.WithTimeout(context.Background(), waitLong)
			defer cancel()
			evs, err := sub.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) != 1 || evs[0].Type != event.Resync || evs[0].ID != 0 || evs[0].Seq != 0 {
				t.Fatalf("first Next = %+v, want one resync event without id", evs)
			}
			rs := evs[0]
			if rs.SessionID != tc.f.SessionID || rs.RunID != tc.f.RunID || rs.TS.IsZero() {
				t.Fatalf("resync envelope %+v", rs)
			}
			var p event.ResyncPayload
			if err := json.Unmarshal(rs.Payload, &p); err != nil {
				t.Fatal(err)
			}
			if p != (event.ResyncPayload{Reason: "cursor_ahead", Cursor: cursor, LastID: last}) {
				t.Fatalf("resync payload %+v", p)
			}
			if sub.Cursor() != 0 {
				t.Fatalf("cursor after resync = %d, want 0", sub.Cursor())
			}
			want := storeEvents(t, e.db, store.EventQuery{SessionID: tc.f.SessionID, RunID: tc.f.RunID})
			got := collect(t, sub, len(want), waitLong)
			if !slices.Equal(eventIDs(got), eventIDs(want)) {
				t.Fatalf("replay after resync: got %v, want %v", eventIDs(got), eventIDs(want))
			}
			// Then live, with no second resync.
			if err := e.w.Do(context.Background(), appendOp(d("s1", "r1", event.MessageDone))); err != nil {
				t.Fatal(err)
			}
			if got := collect(t, sub, 1, waitLong); got[0].Type != event.MessageDone {
				t.Fatalf("live event %+v", got[0])
			}
		})
	}

	t.Run("cursor at the end is not a resync", func(t *testing.T) {
		e := newEnv(t, envOpts{open: open})
		e.seed(t, "s1", "r1")
		evs := appendDirect(t, e.db, d("s1", "r1", event.MessageDelta))
		sub := e.hub.Subscribe(Filter{}, evs[0].ID)
		expectQuiet(t, sub, 20*time.Millisecond)
	})
}

// TestHubDeliversOtherProcessesEvents: events committed through another
// handle on the file never Poke this Hub; the poll finds them.
func TestHubDeliversOtherProcessesEvents(t *testing.T) {
	storetest.Each(t, pg, testHubDeliversOtherProcessesEvents)
}

func testHubDeliversOtherProcessesEvents(t *testing.T, open storetest.Open) {
	const poll = 20 * time.Millisecond
	e := newEnv(t, envOpts{open: open, poll: poll})
	e.seed(t, "s1", "r1", "r2")
	other := e.another()
	sub := e.hub.Subscribe(Filter{SessionID: "s1"}, 0)
	expectQuiet(t, sub, 5*time.Millisecond)

	start := time.Now()
	appendDirect(t, other, d("s1", "r2", event.MessageDelta), d("s1", "r2", event.MessageDone))
	got := collect(t, sub, 2, waitLong)
	t.Logf("delivered %v after commit by the other process", time.Since(start).Round(time.Millisecond))

	// Interleaved local (poked) and remote (polled) writes arrive once, in
	// ID order.
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		for range 10 {
			if err := e.w.Do(context.Background(), appendOp(d("s1", "r1", event.MessageDelta))); err != nil {
				t.Error(err)
			}
		}
	}()
	go func() {
		defer wg.Done()
		for range 10 {
			if err := other.Write(context.Background(), func(tx store.Tx) error {
				_, err := tx.AppendEvents(context.Background(), "", d("s1", "r2", event.MessageDelta))
				return err
			}); err != nil {
				t.Error(err)
			}
		}
	}()
	got = append(got, collect(t, sub, 20, waitLong)...)
	wg.Wait()
	want := storeEvents(t, e.db, store.EventQuery{SessionID: "s1"})
	if !slices.Equal(eventIDs(got), eventIDs(want)) {
		t.Fatalf("got %v\nwant %v", eventIDs(got), eventIDs(want))
	}
	for _, r := range []string{"r1", "r2"} {
		for i, ev := range storeEvents(t, e.db, store.EventQuery{RunID: r}) {
			if ev.Seq != int64(i+1) {
				t.Fatalf("run %s: seq %d at %d", r, ev.Seq, i)
			}
		}
	}
}

func TestHubNextContextErrors(t *testing.T) { storetest.Each(t, pg, testHubNextContextErrors) }

func testHubNextContextErrors(t *testing.T, open storetest.Open) {
	e := newEnv(t, envOpts{open: open})
	e.seed(t, "s1", "r1")
	appendDirect(t, e.db, d("s1", "r1", event.MessageDelta))

	sub := e.hub.Subscribe(Filter{SessionID: "s1"}, 0)
	collect(t, sub, 1, waitLong)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := sub.Next(ctx)
		errc <- err
	}()
	time.Sleep(10 * time.Millisecond)
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	case <-time.After(waitLong):
		t.Fatal("Next did not return after cancel")
	}

	dctx, dcancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer dcancel()
	if _, err := sub.Next(dctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want DeadlineExceeded", err)
	}

	// Cancelled before the first Next: the replay read fails with it too.
	pre, precancel := context.WithCancel(context.Background())
	precancel()
	if _, err := e.hub.Subscribe(Filter{}, 0).Next(pre); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}

	// The subscription still works after a cancelled Next.
	if err := e.w.Do(context.Background(), appendOp(d("s1", "r1", event.MessageDone))); err != nil {
		t.Fatal(err)
	}
	if got := collect(t, sub, 1, waitLong); got[0].Type != event.MessageDone {
		t.Fatalf("got %+v", got[0])
	}
}

func TestHubClosed(t *testing.T) { storetest.Each(t, pg, testHubClosed) }

func testHubClosed(t *testing.T, open storetest.Open) {
	e := newEnv(t, envOpts{open: open})
	e.seed(t, "s1", "r1")
	appendDirect(t, e.db, d("s1", "r1", event.MessageDelta))

	waiting := e.hub.Subscribe(Filter{SessionID: "s1"}, 0)
	collect(t, waiting, 1, waitLong)
	idle := e.hub.Subscribe(Filter{RunID: "r1"}, 0) // never called Next
	errc := make(chan error, 1)
	go func() {
		_, err := waiting.Next(context.Background())
		errc <- err
	}()
	time.Sleep(10 * time.Millisecond)

	e.stopHub()
	err := <-e.hubDone
	e.hubDone <- nil // for the cleanup, which waits for it
	if err != nil {
		t.Fatalf("Run returned %v", err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, ErrHubClosed) {
			t.Fatalf("waiting Next: %v, want ErrHubClosed", err)
		}
	case <-time.After(waitLong):
		t.Fatal("waiting Next did not return when the hub stopped")
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	if _, err := idle.Next(ctx); !errors.Is(err, ErrHubClosed) {
		t.Fatalf("idle Next: %v, want ErrHubClosed", err)
	}
	if _, err := waiting.Next(ctx); !errors.Is(err, ErrHubClosed) {
		t.Fatalf("second Next: %v, want ErrHubClosed", err)
	}
	late := e.hub.Subscribe(Filter{}, 0)
	if _, err := late.Next(ctx); !errors.Is(err, ErrHubClosed) {
		t.Fatalf("Next of a subscription made after the hub stopped: %v, want ErrHubClosed", err)
	}
}

// TestHubSubscribeBeforeRun: a subscriber may register before Hub.Run has
// read where the journal ends (the app starts both concurrently). Events
// committed between its replay and Run's start must still reach it.
func TestHubSubscribeBeforeRun(t *testing.T) { storetest.Each(t, pg, testHubSubscribeBeforeRun) }

func testHubSubscribeBeforeRun(t *testing.T, open storetest.Open) {
	e := newEnv(t, envOpts{open: open, noHub: true})
	e.seed(t, "s1", "r1")
	first := appendDirect(t, e.db, d("s1", "r1", event.RunQueued))[0].ID
	sub := e.hub.Subscribe(Filter{SessionID: "s1"}, 0)
	collect(t, sub, 1, waitLong) // replay done: the sub now waits on its mailbox

	appendDirect(t, e.db, d("s1", "r1", event.MessageUser), d("s1", "r1", event.RunStarted))
	e.startHub(t)
	if err := e.w.Do(context.Background(), appendOp(d("s1", "r1", event.MessageDelta))); err != nil {
		t.Fatal(err)
	}
	got := collect(t, sub, 3, waitLong)
	want := storeEvents(t, e.db, store.EventQuery{SessionID: "s1", AfterID: first})
	if !slices.Equal(eventIDs(got), eventIDs(want)) {
		t.Fatalf("got %v, want %v", eventIDs(got), eventIDs(want))
	}
}

func TestSubCloseUnsubscribes(t *testing.T) { storetest.Each(t, pg, testSubCloseUnsubscribes) }

func testSubCloseUnsubscribes(t *testing.T, open storetest.Open) {
	e := newEnv(t, envOpts{open: open})
	e.seed(t, "s1", "r1")
	subs := []*Sub{
		e.hub.Subscribe(Filter{}, 0),
		e.hub.Subscribe(Filter{SessionID: "s1"}, 0),
		e.hub.Subscribe(Filter{RunID: "r1"}, 0),
		e.hub.Subscribe(Filter{SessionID: "s1", Types: []event.Type{event.Usage}}, 0),
	}
	for _, s := range subs {
		s.Close()
	}
	e.hub.mu.Lock()
	n := len(e.hub.all) + len(e.hub.bySession) + len(e.hub.byRun)
	e.hub.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d subscriptions left after Close", n)
	}
	if err := e.w.Do(context.Background(), appendOp(d("s1", "r1", event.Usage))); err != nil {
		t.Fatal(err)
	}
	for e.hub.LastID() == 0 {
		time.Sleep(time.Millisecond)
	}
	for _, s := range subs {
		s.mu.Lock()
		buffered := len(s.buf)
		s.mu.Unlock()
		if buffered != 0 {
			t.Fatal("a closed subscription still receives events")
		}
	}
}

// bulky is a draft whose payload is n bytes of JSON.
func bulky(sessionID, runID string, n int) event.Draft {
	return event.Draft{SessionID: sessionID, RunID: runID, Type: event.ToolDone,
		Payload: json.RawMessage(`{"output":"` + strings.Repeat("x", n-13) + `"}`)}
}

func payloadBytes(evs []event.Event) int {
	n := 0
	for _, e := range evs {
		n += len(e.Payload)
	}
	return n
}

// A replay of a history of large events comes in pages bounded by bytes
// (each page ends with the event that reaches the budget), not a row
// count's worth of large events at once; every event arrives once, in
// order, and the live tail follows.
func TestHubReplayPagedByBytes(t *testing.T) {
	e := newEnv(t, envOpts{})
	e.seed(t, "s1", "r1")
	const size, n = 40 << 10, 40 // 1.6 MB in 40 events: 8 rows of them fill a page's bytes
	if n*size <= 2*defaultReplayBytes || n >= replayPage {
		t.Fatalf("history of %d x %d bytes does not span pages by bytes only", n, size)
	}
	var want []event.Event
	for range n / 10 {
		want = append(want, appendDirect(t, e.db, repeat(10, bulky("s1", "r1", size))...)...)
	}
	sub := e.hub.Subscribe(Filter{SessionID: "s1"}, 0)
	defer sub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	var got []event.Event
	pages := 0
	for len(got) < n {
		page, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("after %d events: %v", len(got), err)
		}
		pages++
		if b := payloadBytes(page[:len(page)-1]); b >= defaultReplayBytes {
			t.Fatalf("page %d holds %d bytes before its last event, budget %d", pages, b, defaultReplayBytes)
		}
		got = append(got, page...)
	}
	if !slices.Equal(eventIDs(got), eventIDs(want)) {
		t.Fatalf("replay: got %v, want %v", eventIDs(got), eventIDs(want))
	}
	if least := n * size / (defaultReplayBytes + size); pages < least {
		t.Fatalf("%d pages, want at least %d", pages, least)
	}
	live := appendDirect(t, e.db, bulky("s1", "r1", 100))
	e.hub.Poke()
	if tail := collect(t, sub, 1, waitLong); tail[0].ID != live[0].ID {
		t.Fatalf("live event %d, want %d", tail[0].ID, live[0].ID)
	}
}

// A subscriber that does not read while large events arrive gives up its
// mailbox once it holds mailboxBytes, long before mailboxCap events, and
// re-reads the store: nothing is lost or repeated.
func TestHubMailboxOverflowByBytes(t *testing.T) {
	e := newEnv(t, envOpts{})
	e.seed(t, "s1", "r1")
	firstID := appendDirect(t, e.db, d("s1", "r1", event.RunQueued))[0].ID
	sub := e.hub.Subscribe(Filter{SessionID: "s1"}, 0)
	defer sub.Close()
	collect(t, sub, 1, waitLong) // replay done: the sub now lives on its mailbox

	const size, n = 64 << 10, 24 // 1.5 MB in 24 events
	if n*size <= mailboxBytes || n >= mailboxCap {
		t.Fatalf("%d x %d bytes would not overflow by bytes alone", n, size)
	}
	for range n / 4 {
		appendDirect(t, e.db, repeat(4, bulky("s1", "r1", size))...)
		e.hub.Poke()
	}
	last, _ := e.db.LastEventID(context.Background())
	deadline := time.Now().Add(waitLong)
	for e.hub.LastID() < last {
		if time.Now().After(deadline) {
			t.Fatalf("hub stuck at %d, want %d", e.hub.LastID(), last)
		}
		time.Sleep(time.Millisecond)
	}
	sub.mu.Lock()
	overflowed, held := sub.overflow, sub.bufBytes
	sub.mu.Unlock()
	if !overflowed || held > mailboxBytes {
		t.Fatalf("mailbox holds %d bytes (overflow=%v), bound %d", held, overflowed, mailboxBytes)
	}
	got := collect(t, sub, n, waitLong)
	want := storeEvents(t, e.db, store.EventQuery{SessionID: "s1", AfterID: firstID})
	if !slices.Equal(eventIDs(got), eventIDs(want)) {
		t.Fatalf("after overflow: got %v, want %v", eventIDs(got), eventIDs(want))
	}
	expectQuiet(t, sub, 5*time.Millisecond)
}
