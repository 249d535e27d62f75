// Package api holds the acceptance tests over real HTTP against a server
// in the test process (e2etest.StartServer) on a real SQLite file.
package api

import (
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
)

type demoTurn = demo.Turn

// A scripted run with reasoning, text, a tool call needing approval and a
// final answer streams every event in order on the session stream, and
// approving through the API completes it.
func TestRunWithApprovalCompletes(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(
		e2etest.Turn(e2etest.Reasoning("I should look around."), e2etest.Text("Let me check."), e2etest.Call("run_command", `{"command":"echo hello"}`)),
		e2etest.Turn(e2etest.Text("The command printed hello.")),
	))
	sid := s.NewSession(t)
	st := e2etest.OpenStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
	r := s.Send(t, sid, "please run it")

	seen := st.Until(t, "approval.requested", e2etest.IsType(event.ApprovalRequested))
	req := e2etest.Payload[event.ApprovalRequestedPayload](t, seen[len(seen)-1])
	if req.Action != "$ echo hello" || !slices.Equal(req.Choices, []string{"once", "session", "always", "deny"}) {
		t.Fatalf("approval request = %+v", req)
	}
	s.WaitStatus(t, r.ID, "awaiting_approval")
	if p := s.Pending(t); len(p) != 1 || p[0].ID != req.RequestID {
		t.Fatalf("pending = %+v", p)
	}
	if c := e2etest.Do(t, "POST", s.URL+"/api/requests/"+req.RequestID+"/respond", map[string]string{"choice": "once"}, nil); c != http.StatusOK {
		t.Fatalf("respond: %d", c)
	}
	seen = append(seen, st.Until(t, "run.done", e2etest.IsDone(r.ID))...)

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
		// The command may change the workspace: a checkpoint before it
		// runs, and one closing the run's span before run.done.
		// approval.decided records who let it run (the decisions log).
		event.ApprovalRequested, event.RunStatus, event.ApprovalResolved, event.RunStatus, event.ApprovalDecided, event.CheckpointCreated, event.ToolDone,
		event.TurnStarted, event.MessageDone, event.TurnEnded, event.Usage, event.CheckpointCreated, event.RunDone,
	}
	if !slices.Equal(types, want) {
		t.Fatalf("event order:\n got %v\nwant %v", types, want)
	}
	done := e2etest.Payload[event.RunDonePayload](t, seen[len(seen)-1])
	if done.Status != "completed" {
		t.Fatalf("run.done = %+v", done)
	}
	for _, e := range seen {
		if e.Type == event.ToolDone {
			td := e2etest.Payload[event.ToolDonePayload](t, e)
			if td.Status != event.ToolOK || td.Output == "" {
				t.Fatalf("tool.done = %+v", td)
			}
		}
	}
	e2etest.CheckJournal(t, s.Journal(t, r.ID))
	if got := s.WaitStatus(t, r.ID, "completed"); !got.Terminal || len(got.Controls) != 1 {
		t.Fatalf("final run = %+v", got)
	}
	var msgs struct {
		Items []struct {
			Kind string `json:"kind"`
			Text string `json:"text"`
		} `json:"items"`
	}
	e2etest.Do(t, "GET", s.URL+"/api/sessions/"+sid+"/messages", nil, &msgs)
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
	t.Parallel()
	for _, mode := range []string{"last-event-id", "after"} {
		t.Run(mode, func(t *testing.T) {
			s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.SlowText(150, 5))))
			sid := s.NewSession(t)
			st := e2etest.OpenStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
			r := s.Send(t, sid, "stream a lot")
			n := 0
			first := st.Until(t, "some deltas", func(e event.Event) bool {
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
			second := e2etest.OpenStream(t, url, hdr).Until(t, "run.done", e2etest.IsDone(r.ID))

			seen := map[int64]bool{}
			var union []event.Event
			for _, e := range append(first, second...) {
				if !seen[e.ID] {
					seen[e.ID] = true
					union = append(union, e)
				}
			}
			e2etest.CheckJournal(t, union)
			text := ""
			for _, e := range union {
				if e.Type == event.MessageDelta {
					text += e2etest.Payload[event.DeltaPayload](t, e).Delta
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
			replay := s.Journal(t, r.ID)
			live := len(union) - e2etest.CountType(union, event.SessionCreated) // of the session, not the run
			if len(replay) != live || !replay[len(replay)-1].Terminal {
				t.Fatalf("replay has %d events (terminal %v), live had %d", len(replay), replay[len(replay)-1].Terminal, live)
			}
			// Resuming a finished run at its end closes at once with nothing.
			tail := e2etest.OpenStream(t, s.URL+"/api/runs/"+r.ID+"/events", map[string]string{"Last-Event-ID": fmt.Sprint(replay[len(replay)-1].ID)}).Drain(t)
			if len(tail) != 0 {
				t.Fatalf("stream past the end sent %d events", len(tail))
			}
		})
	}
}

// A cursor ahead of the journal yields an explicit resync, then a replay.
func TestCursorAheadResyncs(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("hi"))))
	sid := s.NewSession(t)
	r := s.Send(t, sid, "hello")
	s.WaitStatus(t, r.ID, "completed")
	evs := e2etest.OpenStream(t, s.URL+"/api/sessions/"+sid+"/events?after=999999", nil).Until(t, "run.done", e2etest.IsDone(r.ID))
	if evs[0].Type != event.Resync || evs[0].ID != 0 {
		t.Fatalf("first event = %+v, want resync without id", evs[0])
	}
	rs := e2etest.Payload[event.ResyncPayload](t, evs[0])
	if rs.Cursor != 999999 || rs.LastID == 0 {
		t.Fatalf("resync payload = %+v", rs)
	}
	if evs[1].Type != event.SessionCreated {
		t.Fatalf("after resync the stream replays from the start, got %s", evs[1].Type)
	}
	if c := e2etest.Do(t, "GET", s.URL+"/api/sessions/"+sid+"/events?after=abc", nil, nil); c != http.StatusBadRequest {
		t.Fatalf("bad cursor: %d", c)
	}
}

// Cancel while the model streams, while a tool runs and while waiting for a
// person: exactly one terminal cancelled event each; a second cancel
// changes nothing.
func TestCancel(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		turns []demoTurn
		reach func(t *testing.T, s *e2etest.Server, st *e2etest.Stream, runID string)
	}{
		{
			name:  "during streaming",
			turns: []demoTurn{e2etest.Turn(e2etest.Text("partial "), e2etest.SlowText(200, 20))},
			reach: func(t *testing.T, s *e2etest.Server, st *e2etest.Stream, runID string) {
				n := 0
				st.Until(t, "deltas", func(e event.Event) bool {
					if e.Type == event.MessageDelta {
						n++
					}
					return n == 5
				})
			},
		},
		{
			name:  "during a tool call",
			turns: []demoTurn{e2etest.Turn(e2etest.Call("run_command", `{"command":"sleep 30"}`)), e2etest.Turn(e2etest.Text("never"))},
			reach: func(t *testing.T, s *e2etest.Server, st *e2etest.Stream, runID string) {
				st.Until(t, "approval", e2etest.IsType(event.ApprovalRequested))
				q := s.Pending(t)[0]
				e2etest.Do(t, "POST", s.URL+"/api/requests/"+q.ID+"/respond", map[string]string{"choice": "once"}, nil)
				st.Until(t, "executing", func(e event.Event) bool {
					return e.Type == event.ToolUpdated && e2etest.Payload[event.ToolUpdatedPayload](t, e).Phase == "executing"
				})
				time.Sleep(100 * time.Millisecond)
			},
		},
		{
			name:  "during an approval wait",
			turns: []demoTurn{e2etest.Turn(e2etest.Call("run_command", `{"command":"echo x"}`)), e2etest.Turn(e2etest.Text("never"))},
			reach: func(t *testing.T, s *e2etest.Server, st *e2etest.Stream, runID string) {
				st.Until(t, "approval", e2etest.IsType(event.ApprovalRequested))
				s.WaitStatus(t, runID, "awaiting_approval")
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := e2etest.StartServer(t, e2etest.Script(tc.turns...))
			sid := s.NewSession(t)
			st := e2etest.OpenStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
			r := s.Send(t, sid, "go")
			tc.reach(t, s, st, r.ID)
			start := time.Now()
			var c1, c2 e2etest.RunJSON
			if code := e2etest.Do(t, "POST", s.URL+"/api/runs/"+r.ID+"/cancel", nil, &c1); code != http.StatusAccepted && code != http.StatusOK {
				t.Fatalf("cancel: %d", code)
			}
			st.Until(t, "run.done", e2etest.IsDone(r.ID))
			t.Logf("cancel took %v", time.Since(start))
			e2etest.Do(t, "POST", s.URL+"/api/runs/"+r.ID+"/cancel", nil, &c2)
			if c2.Status != "cancelled" {
				t.Fatalf("second cancel sees status %s", c2.Status)
			}
			evs := s.Journal(t, r.ID)
			e2etest.CheckJournal(t, evs)
			if n := e2etest.CountType(evs, event.RunDone); n != 1 {
				t.Fatalf("%d terminal events", n)
			}
			if d := e2etest.Payload[event.RunDonePayload](t, evs[len(evs)-1]); d.Status != "cancelled" {
				t.Fatalf("terminal status %s", d.Status)
			}
			// Every tool call has a result, so the history stays valid.
			if e2etest.CountType(evs, event.ToolStarted) != e2etest.CountType(evs, event.ToolDone) {
				t.Fatalf("open tool call left: %d started, %d done", e2etest.CountType(evs, event.ToolStarted), e2etest.CountType(evs, event.ToolDone))
			}
			for _, e := range evs {
				if e.Type == event.ToolDone && e2etest.Payload[event.ToolDonePayload](t, e).Status != event.ToolCancelled {
					t.Fatalf("tool.done status %s, want cancelled", e2etest.Payload[event.ToolDonePayload](t, e).Status)
				}
				if e.Type == event.MessageDone {
					if p := e2etest.Payload[event.DonePayload](t, e); !p.Partial || p.Text == "" {
						t.Fatalf("cancelled text not kept as partial: %+v", p)
					}
				}
			}
			if len(s.Pending(t)) != 0 {
				t.Fatal("a request is still pending after cancel")
			}
			// A second cancel appended nothing.
			if again := s.Journal(t, r.ID); len(again) != len(evs) {
				t.Fatalf("second cancel added %d events", len(again)-len(evs))
			}
			// The session is usable again: a new run is claimed at once.
			r2 := s.Send(t, sid, "again")
			deadline := time.Now().Add(10 * time.Second)
			for s.Run(t, r2.ID).Status == "queued" {
				if time.Now().After(deadline) {
					t.Fatal("the next run was never claimed: session still busy")
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}
