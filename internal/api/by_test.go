package api_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/auth"
	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// byOf is the "by" of the newest event of typ in the run (nil if none has
// one), failing when there is no such event.
func (e *env) byOf(t *testing.T, runID string, typ event.Type, match func(json.RawMessage) bool) *event.Actor {
	t.Helper()
	evs, err := e.st.Events(e.ctx, store.EventQuery{RunID: runID, Types: []event.Type{typ}})
	if err != nil {
		t.Fatal(err)
	}
	for i := len(evs) - 1; i >= 0; i-- {
		if match != nil && !match(evs[i].Payload) {
			continue
		}
		var p struct {
			By *event.Actor `json:"by"`
		}
		if err := json.Unmarshal(evs[i].Payload, &p); err != nil {
			t.Fatal(err)
		}
		return p.By
	}
	t.Fatalf("no %s event in run %s", typ, runID)
	return nil
}

func statusIs(s run.Status) func(json.RawMessage) bool {
	return func(b json.RawMessage) bool {
		var p event.RunStatusPayload
		return json.Unmarshal(b, &p) == nil && p.Status == string(s)
	}
}

// TestWhoDidIt: messages, answers and cancels name who made them.
func TestWhoDidIt(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	local := e.send(t, s.ID, "from the open server")
	if by := e.byOf(t, local.ID, event.RunQueued, nil); by == nil || by.Kind != "local" || by.Name != "local" {
		t.Fatalf("local message by %+v", by)
	}
	e.hold(t, local.ID, "rnr_test")
	q := e.ask(t, local.ID, "rnr_test", store.KindClarify)

	ann := e.addPerson("ann", auth.RoleOperator)
	b := e.login(ann)
	tok := e.addToken(ann, auth.ScopeOperate)

	b.req("POST", "/api/requests/"+q+"/respond", `{"answer":"a"}`).want(t, http.StatusOK, "")
	want := event.Actor{Kind: "user", Name: "ann", UserID: ann.ID}
	if by := e.byOf(t, local.ID, event.ClarifyResolved, nil); by == nil || *by != want {
		t.Fatalf("clarify.resolved by %+v, want %+v", by, want)
	}

	// A cancel of a held run: the cancelling status names the person, and
	// so does the run.done its runner writes.
	b.req("POST", "/api/runs/"+local.ID+"/cancel", "").want(t, http.StatusAccepted, "")
	if by := e.byOf(t, local.ID, event.RunStatus, statusIs(run.Cancelling)); by == nil || *by != want {
		t.Fatalf("cancelling by %+v", by)
	}
	if err := e.w.Do(e.ctx, func(tx store.Tx) error {
		return control.Finish(e.ctx, tx, local.ID, "rnr_test", control.Outcome{Status: run.Cancelled})
	}); err != nil {
		t.Fatal(err)
	}
	if by := e.byOf(t, local.ID, event.RunDone, nil); by == nil || *by != want {
		t.Fatalf("run.done by %+v", by)
	}

	// A message by token; its cancel finishes at once (no runner holds it).
	r := e.req("POST", "/api/sessions/"+s.ID+"/messages", `{"content":"by token"}`, bearer(tok)...)
	r.want(t, http.StatusAccepted, "")
	var ru runJSON
	r.decode(t, &ru)
	wantTok := event.Actor{Kind: "token", Name: "ann", UserID: ann.ID, TokenID: "tok_operateann"}
	for _, typ := range []event.Type{event.RunQueued, event.MessageUser} {
		if by := e.byOf(t, ru.ID, typ, nil); by == nil || *by != wantTok {
			t.Fatalf("%s by %+v, want %+v", typ, by, wantTok)
		}
	}
	e.req("POST", "/api/runs/"+ru.ID+"/cancel", "", bearer(tok)...).want(t, http.StatusOK, "")
	if by := e.byOf(t, ru.ID, event.RunDone, nil); by == nil || *by != wantTok {
		t.Fatalf("run.done of a queued run's cancel by %+v", by)
	}
}
