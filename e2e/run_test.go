package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
)

type demoTurn = demo.Turn

// A scripted run with reasoning, text, a tool call needing approval and a
// final answer streams every event in order on the session stream, and
// approving through the API completes it.
func TestRunWithApprovalCompletes(t *testing.T) {
	s := startServer(t, script(
		turn(reasoning("I should look around."), text("Let me check."), call("run_command", `{"command":"echo hello"}`)),
		turn(text("The command printed hello.")),
	))
	sid := s.newSession(t)
	st := openStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
	r := s.send(t, sid, "please run it")

	seen := st.until(t, "approval.requested", isType(event.ApprovalRequested))
	req := payload[event.ApprovalRequestedPayload](t, seen[len(seen)-1])
	if req.Action != "$ echo hello" || !slices.Equal(req.Choices, []string{"once", "session", "always", "deny"}) {
		t.Fatalf("approval request = %+v", req)
	}
	s.waitStatus(t, r.ID, "awaiting_approval")
	if p := s.pending(t); len(p) != 1 || p[0].ID != req.RequestID {
		t.Fatalf("pending = %+v", p)
	}
	if c := do(t, "POST", s.URL+"/api/requests/"+req.RequestID+"/respond", map[string]string{"choice": "once"}, nil); c != http.StatusOK {
		t.Fatalf("respond: %d", c)
	}
	seen = append(seen, st.until(t, "run.done", isDone(r.ID))...)

	var types []event.Type
	for _, e := range seen {
		if e.Type != event.MessageDelta && e.Type != event.ReasoningDelta && e.Type != event.ToolUpdated {
			types = append(types, e.Type)
		}
	}
	want := []event.Type{
		event.SessionCreated, // the session stream carries the session's own lifecycle
		event.RunQueued, event.MessageUser, event.TitleUpdated, event.RunStarted,
		event.TurnStarted, event.ReasoningDone, event.MessageDone, event.TurnEnded, event.Usage, event.ToolStarted,
		event.ApprovalRequested, event.RunStatus, event.ApprovalResolved, event.RunStatus, event.ToolDone,
		event.TurnStarted, event.MessageDone, event.TurnEnded, event.Usage, event.RunDone,
	}
	if !slices.Equal(types, want) {
		t.Fatalf("event order:\n got %v\nwant %v", types, want)
	}
	done := payload[event.RunDonePayload](t, seen[len(seen)-1])
	if done.Status != "completed" {
		t.Fatalf("run.done = %+v", done)
	}
	for _, e := range seen {
		if e.Type == event.ToolDone {
			td := payload[event.ToolDonePayload](t, e)
			if td.Status != event.ToolOK || td.Output == "" {
				t.Fatalf("tool.done = %+v", td)
			}
		}
	}
	checkJournal(t, s.journal(t, r.ID))
	if got := s.waitStatus(t, r.ID, "completed"); !got.Terminal || len(got.Controls) != 1 {
		t.Fatalf("final run = %+v", got)
	}
	var msgs struct {
		Items []struct {
			Kind string `json:"kind"`
			Text string `json:"text"`
		} `json:"items"`
	}
	do(t, "GET", s.URL+"/api/sessions/"+sid+"/messages", nil, &msgs)
	var kinds []string
	for _, it := range msgs.Items {
		kinds = append(kinds, it.Kind)
	}
	if !slices.Equal(kinds, []string{"user", "reasoning", "assistant", "tool_call", "assistant"}) {
		t.Fatalf("transcript kinds = %v", kinds)
	}
}

// Disconnecting mid-run and reconnecting with Last-Event-ID or ?after=
// loses nothing and, after dropping seen ids, duplicates nothing.
func TestReconnectNoGapNoDuplicate(t *testing.T) {
	for _, mode := range []string{"last-event-id", "after"} {
		t.Run(mode, func(t *testing.T) {
			s := startServer(t, script(turn(slowText(150, 5))))
			sid := s.newSession(t)
			st := openStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
			r := s.send(t, sid, "stream a lot")
			n := 0
			first := st.until(t, "some deltas", func(e event.Event) bool {
				if e.Type == event.MessageDelta {
					n++
				}
				return n == 20
			})
			st.Close()
			last := first[len(first)-1].ID
			// Let events accumulate while disconnected.
			time.Sleep(150 * time.Millisecond)
			url, hdr := s.URL+"/api/sessions/"+sid+"/events", map[string]string{}
			if mode == "after" {
				url += fmt.Sprintf("?after=%d", last-5) // overlap: the client must drop ids it saw
			} else {
				hdr["Last-Event-ID"] = fmt.Sprint(last - 5)
			}
			second := openStream(t, url, hdr).until(t, "run.done", isDone(r.ID))

			seen := map[int64]bool{}
			var union []event.Event
			for _, e := range append(first, second...) {
				if !seen[e.ID] {
					seen[e.ID] = true
					union = append(union, e)
				}
			}
			checkJournal(t, union)
			text := ""
			for _, e := range union {
				if e.Type == event.MessageDelta {
					text += payload[event.DeltaPayload](t, e).Delta
				}
			}
			var want string
			for range 150 {
				want += "tok "
			}
			if text != want {
				t.Fatalf("reassembled text has %d bytes, want %d", len(text), len(want))
			}
			// A finished run replays its whole journal and terminal state.
			replay := s.journal(t, r.ID)
			live := len(union) - countType(union, event.SessionCreated) // of the session, not the run
			if len(replay) != live || !replay[len(replay)-1].Terminal {
				t.Fatalf("replay has %d events (terminal %v), live had %d", len(replay), replay[len(replay)-1].Terminal, live)
			}
			// Resuming a finished run at its end closes at once with nothing.
			tail := openStream(t, s.URL+"/api/runs/"+r.ID+"/events", map[string]string{"Last-Event-ID": fmt.Sprint(replay[len(replay)-1].ID)}).drain(t)
			if len(tail) != 0 {
				t.Fatalf("stream past the end sent %d events", len(tail))
			}
		})
	}
}

// A cursor ahead of the journal yields an explicit resync, then a replay.
func TestCursorAheadResyncs(t *testing.T) {
	s := startServer(t, script(turn(text("hi"))))
	sid := s.newSession(t)
	r := s.send(t, sid, "hello")
	s.waitStatus(t, r.ID, "completed")
	evs := openStream(t, s.URL+"/api/sessions/"+sid+"/events?after=999999", nil).until(t, "run.done", isDone(r.ID))
	if evs[0].Type != event.Resync || evs[0].ID != 0 {
		t.Fatalf("first event = %+v, want resync without id", evs[0])
	}
	rs := payload[event.ResyncPayload](t, evs[0])
	if rs.Cursor != 999999 || rs.LastID == 0 {
		t.Fatalf("resync payload = %+v", rs)
	}
	if evs[1].Type != event.SessionCreated {
		t.Fatalf("after resync the stream replays from the start, got %s", evs[1].Type)
	}
	if c := do(t, "GET", s.URL+"/api/sessions/"+sid+"/events?after=abc", nil, nil); c != http.StatusBadRequest {
		t.Fatalf("bad cursor: %d", c)
	}
}

// Cancel while the model streams, while a tool runs and while waiting for a
// person: exactly one terminal cancelled event each; a second cancel
// changes nothing.
func TestCancel(t *testing.T) {
	cases := []struct {
		name  string
		turns []demoTurn
		reach func(t *testing.T, s *server, st *stream, runID string)
	}{
		{
			name:  "during streaming",
			turns: []demoTurn{turn(text("partial "), slowText(200, 20))},
			reach: func(t *testing.T, s *server, st *stream, runID string) {
				n := 0
				st.until(t, "deltas", func(e event.Event) bool {
					if e.Type == event.MessageDelta {
						n++
					}
					return n == 5
				})
			},
		},
		{
			name:  "during a tool call",
			turns: []demoTurn{turn(call("run_command", `{"command":"sleep 30"}`)), turn(text("never"))},
			reach: func(t *testing.T, s *server, st *stream, runID string) {
				st.until(t, "approval", isType(event.ApprovalRequested))
				q := s.pending(t)[0]
				do(t, "POST", s.URL+"/api/requests/"+q.ID+"/respond", map[string]string{"choice": "once"}, nil)
				st.until(t, "executing", func(e event.Event) bool {
					return e.Type == event.ToolUpdated && payload[event.ToolUpdatedPayload](t, e).Phase == "executing"
				})
				time.Sleep(100 * time.Millisecond)
			},
		},
		{
			name:  "during an approval wait",
			turns: []demoTurn{turn(call("run_command", `{"command":"echo x"}`)), turn(text("never"))},
			reach: func(t *testing.T, s *server, st *stream, runID string) {
				st.until(t, "approval", isType(event.ApprovalRequested))
				s.waitStatus(t, runID, "awaiting_approval")
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := startServer(t, script(tc.turns...))
			sid := s.newSession(t)
			st := openStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
			r := s.send(t, sid, "go")
			tc.reach(t, s, st, r.ID)
			start := time.Now()
			var c1, c2 runJSON
			if code := do(t, "POST", s.URL+"/api/runs/"+r.ID+"/cancel", nil, &c1); code != http.StatusAccepted && code != http.StatusOK {
				t.Fatalf("cancel: %d", code)
			}
			st.until(t, "run.done", isDone(r.ID))
			t.Logf("cancel took %v", time.Since(start))
			do(t, "POST", s.URL+"/api/runs/"+r.ID+"/cancel", nil, &c2)
			if c2.Status != "cancelled" {
				t.Fatalf("second cancel sees status %s", c2.Status)
			}
			evs := s.journal(t, r.ID)
			checkJournal(t, evs)
			if n := countType(evs, event.RunDone); n != 1 {
				t.Fatalf("%d terminal events", n)
			}
			if d := payload[event.RunDonePayload](t, evs[len(evs)-1]); d.Status != "cancelled" {
				t.Fatalf("terminal status %s", d.Status)
			}
			// Every tool call has a result, so the history stays valid.
			if countType(evs, event.ToolStarted) != countType(evs, event.ToolDone) {
				t.Fatalf("open tool call left: %d started, %d done", countType(evs, event.ToolStarted), countType(evs, event.ToolDone))
			}
			for _, e := range evs {
				if e.Type == event.ToolDone && payload[event.ToolDonePayload](t, e).Status != event.ToolCancelled {
					t.Fatalf("tool.done status %s, want cancelled", payload[event.ToolDonePayload](t, e).Status)
				}
				if e.Type == event.MessageDone {
					if p := payload[event.DonePayload](t, e); !p.Partial || p.Text == "" {
						t.Fatalf("cancelled text not kept as partial: %+v", p)
					}
				}
			}
			if len(s.pending(t)) != 0 {
				t.Fatal("a request is still pending after cancel")
			}
			// A second cancel appended nothing.
			if again := s.journal(t, r.ID); len(again) != len(evs) {
				t.Fatalf("second cancel added %d events", len(again)-len(evs))
			}
			// The session is usable again: a new run is claimed at once.
			r2 := s.send(t, sid, "again")
			deadline := time.Now().Add(10 * time.Second)
			for s.run(t, r2.ID).Status == "queued" {
				if time.Now().After(deadline) {
					t.Fatal("the next run was never claimed: session still busy")
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}
