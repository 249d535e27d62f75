package control_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/journal"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlite"
)

// env is a real store with a started journal writer.
type env struct {
	t   *testing.T
	ctx context.Context
	st  store.Store
	w   *journal.Writer
	svc *control.Service
	ws  string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "caduceus.db"))
	if err != nil {
		t.Fatal(err)
	}
	w := journal.NewWriter(st, nil, slog.New(slog.DiscardHandler))
	w.Start()
	t.Cleanup(func() {
		w.Close()
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	ws := t.TempDir()
	return &env{t: t, ctx: ctx, st: st, w: w, svc: control.NewService(st, w, ws, control.RetryPolicy{}), ws: ws}
}

func (e *env) session() store.Session {
	e.t.Helper()
	s, err := e.svc.CreateSession(e.ctx, control.NewSession{})
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

func (e *env) send(sessionID, content, ifBusy string) store.Run {
	e.t.Helper()
	r, err := e.svc.Send(e.ctx, sessionID, control.Message{Content: content, IfBusy: ifBusy})
	if err != nil {
		e.t.Fatalf("Send(%q, %q): %v", content, ifBusy, err)
	}
	return r
}

func (e *env) run(runID string) store.Run {
	e.t.Helper()
	r, err := e.st.GetRun(e.ctx, runID)
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

func (e *env) runs(sessionID string) []store.Run {
	e.t.Helper()
	rs, err := e.st.SessionRuns(e.ctx, sessionID)
	if err != nil {
		e.t.Fatal(err)
	}
	return rs
}

// events returns the events matching q.
func (e *env) events(q store.EventQuery) []event.Event {
	e.t.Helper()
	evs, err := e.st.Events(e.ctx, q)
	if err != nil {
		e.t.Fatal(err)
	}
	return evs
}

func (e *env) runEvents(runID string) []event.Event {
	return e.events(store.EventQuery{RunID: runID})
}

func (e *env) lastID() int64 {
	e.t.Helper()
	n, err := e.st.LastEventID(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// hold gives the run to runnerID in status with a lease ending at
// now+lease (negative: already expired), bypassing the claim queue.
func (e *env) hold(runID, runnerID string, status run.Status, lease time.Duration) store.Run {
	e.t.Helper()
	err := e.st.Write(e.ctx, func(tx store.Tx) error {
		r, err := tx.GetRun(e.ctx, runID)
		if err != nil {
			return err
		}
		r.Status, r.RunnerID, r.LeaseExpiresAt = status, runnerID, time.Now().Add(lease)
		if r.StartedAt.IsZero() {
			r.StartedAt, r.Attempt = time.Now(), r.Attempt+1
		}
		return tx.UpdateRun(e.ctx, r)
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return e.run(runID)
}

// do runs op through the journal writer.
func (e *env) do(op journal.Op) error { return e.w.Do(e.ctx, op) }

func (e *env) mustDo(op journal.Op) {
	e.t.Helper()
	if err := e.do(op); err != nil {
		e.t.Fatal(err)
	}
}

// emit appends events to a held run as its runner would.
func (e *env) emit(r store.Run, fence string, drafts ...event.Draft) {
	e.t.Helper()
	for i := range drafts {
		drafts[i].RunID, drafts[i].SessionID = r.ID, r.SessionID
	}
	e.mustDo(func(tx store.Tx) error {
		_, err := tx.AppendEvents(e.ctx, fence, drafts...)
		return err
	})
}

// ask files an approval (or clarify) request for a call of a held run.
func (e *env) ask(r store.Run, fence, kind, toolCallID string) store.Request {
	e.t.Helper()
	q := store.Request{ID: id.New("req"), RunID: r.ID, SessionID: r.SessionID, Kind: kind,
		ToolCallID: toolCallID, CreatedAt: time.Now().UTC()}
	var payload any = event.ApprovalRequestedPayload{RequestID: q.ID, ToolCallID: toolCallID, Tool: "run_command",
		Action: "$ make test", Reason: "Runs a shell command", Choices: control.ApprovalChoices()}
	if kind == store.KindClarify {
		payload = event.ClarifyRequestedPayload{RequestID: q.ID, ToolCallID: toolCallID, Question: "Which?", Choices: []string{"a", "b"}}
	}
	e.mustDo(func(tx store.Tx) error { return control.Ask(e.ctx, tx, fence, q, payload) })
	got, err := e.st.GetRequest(e.ctx, q.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return got
}

func types(evs []event.Event) []event.Type {
	out := make([]event.Type, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return out
}

func ofType(evs []event.Event, typ event.Type) []event.Event {
	var out []event.Event
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func decode[P any](t *testing.T, e event.Event) P {
	t.Helper()
	var p P
	if err := json.Unmarshal(e.Payload, &p); err != nil {
		t.Fatalf("%s payload %s: %v", e.Type, e.Payload, err)
	}
	return p
}

// wantCode asserts err is a control error with code.
func wantCode(t *testing.T, err error, code string) *control.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("err = nil, want %s", code)
	}
	ce, ok := control.AsError(err)
	if !ok || ce.Code != code {
		t.Fatalf("err = %v (%T), want code %s", err, err, code)
	}
	return ce
}
