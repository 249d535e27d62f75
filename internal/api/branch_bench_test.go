package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/api"
	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/journal"
	"github.com/caduceus-dev/caduceus/internal/journal/journaltest"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

// BenchmarkOpenAndBranch is the server time (the handler, no network) of
// opening a session — GET messages — and of branching it, on both stores,
// for a 20-message session (the baseline of the same handlers in the same
// run) and a 2,000-message one, and of opening the branch (its history
// read through its parent). Each exchange is journaled as a real run is:
// queued, started, a turn with its text in 8 fragments, usage, the end.
func BenchmarkOpenAndBranch(b *testing.B) {
	for _, k := range storetest.Kinds(pg) {
		j := journaltest.Start(b, k.Open)
		svc := control.NewService(j.Store, j.Writer, b.TempDir(), control.RetryPolicy{})
		h := api.New(j.Store, svc, j.Hub, api.Info{Version: "bench"}, api.Options{}, slog.New(slog.DiscardHandler)).Handler()
		b.Cleanup(j.StopHub)
		for _, msgs := range []int{20, 2_000} {
			sid := benchConversation(b, j.Writer, msgs/2, func(int) string { return id.New("run") })
			mid := benchItemAt(b, h, sid, msgs/2)
			b.Run(fmt.Sprintf("%s/open/messages=%d", k.Name, msgs), func(b *testing.B) {
				for b.Loop() {
					benchServe(b, h, "GET", "/api/sessions/"+sid+"/messages", "", http.StatusOK)
				}
			})
			var branch string
			b.Run(fmt.Sprintf("%s/branch/messages=%d", k.Name, msgs), func(b *testing.B) {
				for b.Loop() {
					branch = benchServe(b, h, "POST", "/api/sessions/"+sid+"/branch", `{"item_id":"`+mid+`"}`, http.StatusCreated)
				}
			})
			b.Run(fmt.Sprintf("%s/open-branch/messages=%d", k.Name, msgs), func(b *testing.B) {
				if branch == "" { // the branch benchmark was filtered out
					branch = benchServe(b, h, "POST", "/api/sessions/"+sid+"/branch", `{"item_id":"`+mid+`"}`, http.StatusCreated)
				}
				for b.Loop() {
					benchServe(b, h, "GET", "/api/sessions/"+branch+"/messages", "", http.StatusOK)
				}
			})
		}
	}
}

// benchServe serves one request and returns the id in its answer.
func benchServe(b testing.TB, h http.Handler, method, path, body string, want int) string {
	var rd *strings.Reader
	if body != "" {
		rd = strings.NewReader(body)
	} else {
		rd = strings.NewReader("")
	}
	req := httptest.NewRequest(method, path, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != want {
		b.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body.String()[:min(300, rec.Body.Len())])
	}
	if method == "POST" {
		var v struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(rec.Body.Bytes(), &v)
		return v.ID
	}
	return ""
}

// benchItemAt is the id of the nth message (1-based) of the session.
func benchItemAt(b testing.TB, h http.Handler, sid string, n int) string {
	req := httptest.NewRequest("GET", "/api/sessions/"+sid+"/messages", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var out struct {
		Items []struct {
			ID   string `json:"id"`
			Kind string `json:"kind"`
		} `json:"items"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		b.Fatal(err)
	}
	seen := 0
	for _, it := range out.Items {
		if it.Kind == "user" || it.Kind == "assistant" {
			if seen++; seen == n {
				return it.ID
			}
		}
	}
	b.Fatalf("session has %d messages, want %d", seen, n)
	return ""
}

// benchConversation journals a session of n exchanges (2n messages), the
// ith run named runID(i).
func benchConversation(b testing.TB, w *journal.Writer, n int, runID func(i int) string) string {
	b.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	sid := id.New("ses")
	err := w.Do(ctx, func(tx store.Tx) error {
		return tx.InsertSession(ctx, store.Session{ID: sid, Title: "bench", Workspace: "/ws", CreatedAt: now, UpdatedAt: now})
	})
	if err != nil {
		b.Fatal(err)
	}
	answer := strings.Repeat("A sentence of an answer, about this long. ", 6)
	for done := 0; done < n; {
		batch := min(100, n-done)
		err := w.Do(ctx, func(tx store.Tx) error {
			for i := done; i < done+batch; i++ {
				rid, turn, seg := runID(i), fmt.Sprintf("turn_%d", i), fmt.Sprintf("msg_%d", i)
				q := fmt.Sprintf("Question number %d: what about this part of the code?", i)
				if err := tx.InsertRun(ctx, store.Run{ID: rid, SessionID: sid, Status: run.Completed, Input: q,
					CreatedAt: now.Add(time.Duration(i) * time.Millisecond)}); err != nil {
					return err
				}
				usage := event.UsageTotals{InputTokens: 1000, OutputTokens: 80, CostUSD: 0.0002}
				drafts := []event.Draft{
					{Type: event.RunQueued, Payload: event.RunQueuedPayload{Input: q}},
					{Type: event.MessageUser, Payload: event.MessageUserPayload{MessageID: "usr_" + rid, Content: q}},
					{Type: event.RunStarted, Payload: event.RunStartedPayload{RunnerID: "rnr_bench", Attempt: 1, Model: "m", Provider: "p"}},
					{Type: event.TurnStarted, Payload: event.TurnStartedPayload{TurnID: turn}},
				}
				for f := 0; f < 8; f++ {
					part := answer[f*len(answer)/8 : (f+1)*len(answer)/8]
					drafts = append(drafts, event.Draft{Type: event.MessageDelta, Payload: event.DeltaPayload{ID: seg, TurnID: turn, Delta: part}})
				}
				drafts = append(drafts,
					event.Draft{Type: event.MessageDone, Payload: event.DonePayload{ID: seg, TurnID: turn, Text: answer}},
					event.Draft{Type: event.Usage, Payload: event.UsagePayload{TurnID: turn, Turn: usage, Total: usage}},
					event.Draft{Type: event.TurnEnded, Payload: event.TurnEndedPayload{TurnID: turn, StopReason: "end_turn"}},
					event.Draft{Type: event.RunDone, Payload: event.RunDonePayload{Status: "completed", Usage: usage}},
				)
				for k := range drafts {
					drafts[k].RunID, drafts[k].SessionID = rid, sid
				}
				if _, err := tx.AppendEvents(ctx, "", drafts...); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		done += batch
	}
	return sid
}
