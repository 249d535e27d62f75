package control_test

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

func TestCreateSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	other := t.TempDir()
	if err := e.svc.AllowWorkspaces([]string{e.ws, other}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		in       control.NewSession
		wantCode string
		wantWS   string
		wantName string
	}{
		{"defaults", control.NewSession{}, "", e.ws, ""},
		{"title and workspace", control.NewSession{Title: "  Build  ", Workspace: other + "/", Model: " m "}, "", other, "Build"},
		{"relative workspace", control.NewSession{Workspace: "rel/dir"}, control.CodeInvalidInput, "", ""},
		{"missing workspace", control.NewSession{Workspace: other + "/nope"}, control.CodeInvalidInput, "", ""},
		{"multi-line title", control.NewSession{Title: "a\nb"}, control.CodeInvalidInput, "", ""},
		{"long title", control.NewSession{Title: strings.Repeat("é", control.MaxTitleRunes+1)}, control.CodeInvalidInput, "", ""},
		{"invalid UTF-8 title", control.NewSession{Title: "\xff"}, control.CodeInvalidInput, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := e.svc.CreateSession(e.ctx, tt.in)
			if tt.wantCode != "" {
				wantCode(t, err, tt.wantCode)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := e.st.GetSession(e.ctx, s.ID)
			if err != nil || got.Workspace != tt.wantWS || got.Title != tt.wantName || got.Model != strings.TrimSpace(tt.in.Model) {
				t.Fatalf("stored session = %+v (%v)", got, err)
			}
		})
	}
}

func TestSendFirstMessage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.session()
	r := e.send(s.ID, "  Fix the build\nit fails on CI", "")
	if r.Status != run.Queued || r.Priority != 0 || r.SessionID != s.ID || r.Input != "  Fix the build\nit fails on CI" || r.CreatedAt.IsZero() {
		t.Fatalf("run = %+v", r)
	}
	evs := e.runEvents(r.ID)
	if want := []event.Type{event.RunQueued, event.MessageUser, event.TitleUpdated}; !slices.Equal(types(evs), want) {
		t.Fatalf("events = %v, want %v", types(evs), want)
	}
	for i, ev := range evs {
		if ev.Seq != int64(i+1) || ev.SessionID != s.ID || ev.Terminal {
			t.Fatalf("event %d = %+v", i, ev)
		}
	}
	if q := decode[event.RunQueuedPayload](t, evs[0]); q.Input != r.Input || q.IfBusy != control.IfBusyEnqueue {
		t.Fatalf("run.queued = %+v", q)
	}
	if u := decode[event.MessageUserPayload](t, evs[1]); u.Content != r.Input || !strings.HasPrefix(u.MessageID, "msg_") {
		t.Fatalf("message.user = %+v", u)
	}
	if ti := decode[event.TitlePayload](t, evs[2]); ti.Title != "Fix the build" {
		t.Fatalf("title.updated = %+v", ti)
	}
	if got, _ := e.st.GetSession(e.ctx, s.ID); got.Title != "Fix the build" {
		t.Fatalf("session title = %q", got.Title)
	}

	// Later messages leave the title alone.
	r2 := e.send(s.ID, "and then deploy", "")
	if got := types(e.runEvents(r2.ID)); !slices.Equal(got, []event.Type{event.RunQueued, event.MessageUser}) {
		t.Fatalf("second run events = %v", got)
	}
	if got, _ := e.st.GetSession(e.ctx, s.ID); got.Title != "Fix the build" {
		t.Fatalf("session title = %q", got.Title)
	}
}

func TestSendTitles(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		content string
		want    string
	}{
		{"first line", "hello\nworld", "hello"},
		{"leading blank lines", "\n\n  hi there  \nmore", "hi there"},
		{"long line is cut", strings.Repeat("ab ", 30), strings.TrimSpace(strings.Repeat("ab ", 20)) + "…"},
		{"runes, not bytes", strings.Repeat("日", 61), strings.Repeat("日", 60) + "…"},
		{"exactly 60 runes", strings.Repeat("é", 60), strings.Repeat("é", 60)},
	}
	e := newEnv(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := e.session()
			e.send(s.ID, tt.content, "")
			got, _ := e.st.GetSession(e.ctx, s.ID)
			if got.Title != tt.want {
				t.Fatalf("title = %q, want %q", got.Title, tt.want)
			}
		})
	}
	t.Run("a named session keeps its name", func(t *testing.T) {
		s, err := e.svc.CreateSession(e.ctx, control.NewSession{Title: "Named"})
		if err != nil {
			t.Fatal(err)
		}
		r := e.send(s.ID, "hello", "")
		if len(ofType(e.runEvents(r.ID), event.TitleUpdated)) != 0 {
			t.Fatal("title.updated for a named session")
		}
	})
}

func TestSendInvalidInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		msg  control.Message
	}{
		{"empty", control.Message{Content: ""}},
		{"blank", control.Message{Content: " \n\t "}},
		{"bad if_busy", control.Message{Content: "hi", IfBusy: "later"}},
		{"if_busy case matters", control.Message{Content: "hi", IfBusy: "Reject"}},
		{"invalid UTF-8", control.Message{Content: "hi \xff\xfe"}},
		{"oversize", control.Message{Content: strings.Repeat("a", control.MaxMessageBytes+1)}},
	}
	e := newEnv(t)
	s := e.session()
	before := e.lastID()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := e.svc.Send(e.ctx, s.ID, tt.msg)
			wantCode(t, err, control.CodeInvalidInput)
			if rs := e.runs(s.ID); len(rs) != 0 {
				t.Fatalf("runs written: %+v", rs)
			}
			if n := e.lastID(); n != before {
				t.Fatalf("events written: last id %d, was %d", n, before)
			}
		})
	}
	t.Run("exactly the limit is accepted", func(t *testing.T) {
		r := e.send(s.ID, strings.Repeat("a", control.MaxMessageBytes), "")
		if len(e.run(r.ID).Input) != control.MaxMessageBytes {
			t.Fatal("input not stored whole")
		}
	})
	t.Run("unknown session", func(t *testing.T) {
		_, err := e.svc.Send(e.ctx, "ses_missing", control.Message{Content: "hi"})
		wantCode(t, err, control.CodeNotFound)
	})
}

func TestSendIfBusy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		ifBusy string
		// how the first run is held when the second message arrives
		firstStatus run.Status
		lease       time.Duration
		// expectations
		wantBusyErr  bool
		wantFirst    run.Status
		wantPriority int
	}{
		{"reject while queued", control.IfBusyReject, run.Queued, 0, true, run.Queued, 0},
		{"reject while running", control.IfBusyReject, run.Running, time.Minute, true, run.Running, 0},
		{"enqueue while queued", control.IfBusyEnqueue, run.Queued, 0, false, run.Queued, 0},
		{"default is enqueue", "", run.Running, time.Minute, false, run.Running, 0},
		{"interrupt a queued run leaves it queued", control.IfBusyInterrupt, run.Queued, 0, false, run.Queued, 1},
		{"interrupt a running run", control.IfBusyInterrupt, run.Running, time.Minute, false, run.Cancelling, 1},
		{"interrupt a run waiting for approval", control.IfBusyInterrupt, run.AwaitingApproval, time.Minute, false, run.Cancelling, 1},
		{"interrupt a run whose runner is gone", control.IfBusyInterrupt, run.Running, -time.Minute, false, run.Cancelled, 1},
		{"interrupted runs do not keep the session busy", control.IfBusyReject, run.Interrupted, 0, false, run.Interrupted, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			s := e.session()
			first := e.send(s.ID, "first", "")
			if tt.firstStatus != run.Queued {
				e.hold(first.ID, "rn_1", tt.firstStatus, tt.lease)
			}
			before := e.lastID()
			firstEvents := len(e.runEvents(first.ID))

			second, err := e.svc.Send(e.ctx, s.ID, control.Message{Content: "second", IfBusy: tt.ifBusy})
			if tt.wantBusyErr {
				var ce *control.Error
				if !errors.As(err, &ce) || ce.Code != control.CodeSessionBusy || ce.Details["run_id"] != first.ID {
					t.Fatalf("err = %v, want session_busy naming %s", err, first.ID)
				}
				if rs := e.runs(s.ID); len(rs) != 1 {
					t.Fatalf("runs = %+v", rs)
				}
				if n := e.lastID(); n != before {
					t.Fatalf("events written by a rejected send")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if second.Status != run.Queued || second.Priority != tt.wantPriority {
				t.Fatalf("second run = %+v, want queued with priority %d", second, tt.wantPriority)
			}
			got := e.run(first.ID)
			if got.Status != tt.wantFirst {
				t.Fatalf("first run status = %s, want %s", got.Status, tt.wantFirst)
			}
			newFirst := e.runEvents(first.ID)[firstEvents:]
			switch tt.wantFirst {
			case run.Cancelling:
				if len(newFirst) != 1 || newFirst[0].Type != event.RunStatus {
					t.Fatalf("first run's new events = %v", types(newFirst))
				}
				p := decode[event.RunStatusPayload](t, newFirst[0])
				if p.Status != string(run.Cancelling) || p.Reason != "interrupted by a new message" {
					t.Fatalf("run.status = %+v", p)
				}
				if got.RunnerID != "rn_1" {
					t.Fatalf("cancelling run lost its runner: %+v", got)
				}
			case run.Cancelled:
				if len(newFirst) != 1 || newFirst[0].Type != event.RunDone || !newFirst[0].Terminal {
					t.Fatalf("first run's new events = %v", types(newFirst))
				}
				if got.RunnerID != "" || got.EndedAt.IsZero() {
					t.Fatalf("cancelled run = %+v", got)
				}
			default:
				if len(newFirst) != 0 {
					t.Fatalf("first run's new events = %v", types(newFirst))
				}
			}
		})
	}
}

// TestInterruptJumpsTheQueue: the priority an interrupting message gets
// makes it the next run claimed, ahead of older queued runs.
func TestInterruptJumpsTheQueue(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.session()
	first := e.send(s.ID, "first", "")
	e.hold(first.ID, "rn_1", run.Running, time.Minute)
	queued := e.send(s.ID, "queued", control.IfBusyEnqueue)
	urgent := e.send(s.ID, "urgent", control.IfBusyInterrupt)
	if e.run(first.ID).Status != run.Cancelling || e.run(queued.ID).Status != run.Queued {
		t.Fatalf("first %s, queued %s", e.run(first.ID).Status, e.run(queued.ID).Status)
	}
	e.mustDo(func(tx store.Tx) error {
		return control.Finish(e.ctx, tx, first.ID, "rn_1", control.Outcome{Status: run.Cancelled})
	})
	var claimed store.Run
	e.mustDo(func(tx store.Tx) error {
		r, ok, err := control.Claim(e.ctx, tx, "rn_2", time.Minute, describeDemo)
		if err == nil && !ok {
			t.Error("nothing to claim")
		}
		claimed = r
		return err
	})
	if claimed.ID != urgent.ID {
		t.Fatalf("claimed %s, want the interrupting run %s (queued %s)", claimed.ID, urgent.ID, queued.ID)
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		status     run.Status // run.Queued: left as sent
		lease      time.Duration
		wantStatus run.Status
		wantEvents []event.Type
	}{
		{"queued finishes at once", run.Queued, 0, run.Cancelled, []event.Type{event.RunDone}},
		{"running with a live lease is asked to stop", run.Running, time.Minute, run.Cancelling, []event.Type{event.RunStatus}},
		{"awaiting clarify with a live lease", run.AwaitingClarify, time.Minute, run.Cancelling, []event.Type{event.RunStatus}},
		{"running with an expired lease finishes at once", run.Running, -time.Second, run.Cancelled, []event.Type{event.RunDone}},
		{"interrupted finishes at once", run.Interrupted, 0, run.Cancelled, []event.Type{event.RunDone}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			s := e.session()
			r := e.send(s.ID, "work", "")
			if tt.status != run.Queued {
				e.hold(r.ID, "rn_1", tt.status, tt.lease)
			}
			n := len(e.runEvents(r.ID))
			got, err := e.svc.Cancel(e.ctx, r.ID, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != tt.wantStatus {
				t.Fatalf("status = %s, want %s", got.Status, tt.wantStatus)
			}
			evs := e.runEvents(r.ID)
			if added := types(evs[n:]); !slices.Equal(added, tt.wantEvents) {
				t.Fatalf("new events = %v, want %v", added, tt.wantEvents)
			}
			last := evs[len(evs)-1]
			switch tt.wantStatus {
			case run.Cancelled:
				p := decode[event.RunDonePayload](t, last)
				if p.Status != string(run.Cancelled) || p.Error != nil || !last.Terminal {
					t.Fatalf("run.done = %+v", p)
				}
				if got.RunnerID != "" || !got.LeaseExpiresAt.IsZero() || got.EndedAt.IsZero() {
					t.Fatalf("cancelled run = %+v", got)
				}
			case run.Cancelling:
				if p := decode[event.RunStatusPayload](t, last); p.Status != string(run.Cancelling) || p.Reason != "cancelled by request" {
					t.Fatalf("run.status = %+v", p)
				}
				if got.RunnerID != "rn_1" {
					t.Fatalf("the runner lost the run: %+v", got)
				}
			}
			// Cancel is idempotent: no new events, same state.
			n = len(evs)
			again, err := e.svc.Cancel(e.ctx, r.ID, nil)
			if err != nil || again.Status != tt.wantStatus {
				t.Fatalf("second cancel = %+v, %v", again, err)
			}
			if added := e.runEvents(r.ID)[n:]; len(added) != 0 {
				t.Fatalf("second cancel wrote %v", types(added))
			}
			if c := len(ofType(e.runEvents(r.ID), event.RunDone)); tt.wantStatus == run.Cancelled && c != 1 {
				t.Fatalf("%d run.done events", c)
			}
			var controls []store.Control
			e.mustDo(func(tx store.Tx) (err error) { controls, err = tx.ListControls(e.ctx, r.ID); return })
			if len(controls) != 1 || controls[0].Kind != "cancel" {
				t.Fatalf("controls = %+v", controls)
			}
		})
	}
	t.Run("unknown run", func(t *testing.T) {
		e := newEnv(t)
		_, err := e.svc.Cancel(e.ctx, "run_missing", nil)
		wantCode(t, err, control.CodeNotFound)
	})
}

// TestConcurrentCancel: however many cancels race, one run.done.
func TestConcurrentCancel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.send(e.session().ID, "work", "")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if got, err := e.svc.Cancel(e.ctx, r.ID, nil); err != nil || got.Status != run.Cancelled {
				t.Errorf("Cancel = %+v, %v", got, err)
			}
		})
	}
	wg.Wait()
	if n := len(ofType(e.runEvents(r.ID), event.RunDone)); n != 1 {
		t.Fatalf("%d run.done events", n)
	}
}

// pendingApproval is a running run that asked for approval of call_1.
func pendingApproval(e *env, kind string) (store.Run, store.Request) {
	e.t.Helper()
	r := e.send(e.session().ID, "work", "")
	r = e.hold(r.ID, "rn_1", run.Running, time.Minute)
	name := "run_command"
	if kind == store.KindClarify {
		name = "clarify"
	}
	e.emit(r, "rn_1", event.Draft{Type: event.ToolStarted, Payload: event.ToolStartedPayload{ToolCallID: "call_1", Name: name, TurnID: "t1"}})
	return r, e.ask(r, "rn_1", kind, "call_1")
}

func TestAsk(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{store.KindApproval, store.KindClarify} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			r, q := pendingApproval(e, kind)
			wantStatus, wantType := run.AwaitingApproval, event.ApprovalRequested
			if kind == store.KindClarify {
				wantStatus, wantType = run.AwaitingClarify, event.ClarifyRequested
			}
			if got := e.run(r.ID); got.Status != wantStatus || got.RunnerID != "rn_1" {
				t.Fatalf("run = %+v", got)
			}
			if q.Status != store.RequestPending || q.Kind != kind || q.ToolCallID != "call_1" {
				t.Fatalf("request = %+v", q)
			}
			evs := e.runEvents(r.ID)
			tail := types(evs[len(evs)-2:])
			if !slices.Equal(tail, []event.Type{wantType, event.RunStatus}) {
				t.Fatalf("events = %v", types(evs))
			}
			p := decode[struct {
				RequestID string `json:"request_id"`
			}](t, evs[len(evs)-2])
			if p.RequestID != q.ID {
				t.Fatalf("requested payload names %q, want %q", p.RequestID, q.ID)
			}
		})
	}
	t.Run("another runner cannot ask", func(t *testing.T) {
		e := newEnv(t)
		r := e.send(e.session().ID, "work", "")
		r = e.hold(r.ID, "rn_1", run.Running, time.Minute)
		before := e.lastID()
		err := e.do(func(tx store.Tx) error {
			return control.Ask(e.ctx, tx, "rn_other", store.Request{ID: "req_x", RunID: r.ID, SessionID: r.SessionID,
				Kind: store.KindApproval, ToolCallID: "c", CreatedAt: time.Now()}, event.ApprovalRequestedPayload{RequestID: "req_x"})
		})
		if !errors.Is(err, store.ErrLeaseLost) {
			t.Fatalf("err = %v, want lease lost", err)
		}
		if _, err := e.st.GetRequest(e.ctx, "req_x"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("request written by a fenced-out ask: %v", err)
		}
		if e.lastID() != before || e.run(r.ID).Status != run.Running {
			t.Fatal("a fenced-out ask changed state")
		}
	})
}

func TestRespondApproval(t *testing.T) {
	t.Parallel()
	tests := []struct {
		choice   string
		wantRule string // scope of the remembered rule, "" for none
	}{
		{control.ChoiceOnce, ""},
		{control.ChoiceDeny, ""},
		{control.ChoiceSession, "session"},
		{control.ChoiceAlways, "always"},
	}
	for _, tt := range tests {
		t.Run(tt.choice, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			r, q := pendingApproval(e, store.KindApproval)
			got, err := e.svc.Respond(e.ctx, q.ID, control.Response{Choice: tt.choice})
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != store.RequestResolved || got.Response != tt.choice || got.ResolvedAt.IsZero() {
				t.Fatalf("request = %+v", got)
			}
			res := ofType(e.runEvents(r.ID), event.ApprovalResolved)
			if len(res) != 1 {
				t.Fatalf("%d approval.resolved events", len(res))
			}
			if p := decode[event.ResolvedPayload](t, res[0]); p.RequestID != q.ID || p.Status != store.RequestResolved || p.Choice != tt.choice || p.Answer != "" {
				t.Fatalf("approval.resolved = %+v", p)
			}
			// Responding does not move the run: its runner does, when it wakes.
			if st := e.run(r.ID).Status; st != run.AwaitingApproval {
				t.Fatalf("run status = %s", st)
			}
			rules, err := e.st.ListRules(e.ctx)
			if err != nil {
				t.Fatal(err)
			}
			if tt.wantRule == "" {
				if len(rules) != 0 {
					t.Fatalf("rules = %+v", rules)
				}
			} else {
				if len(rules) != 1 || rules[0].Scope != tt.wantRule || rules[0].Tool != "run_command" || rules[0].Pattern != "$ make test" {
					t.Fatalf("rules = %+v", rules)
				}
				wantSession := ""
				if tt.wantRule == "session" {
					wantSession = r.SessionID
				}
				if rules[0].SessionID != wantSession {
					t.Fatalf("rule session = %q, want %q", rules[0].SessionID, wantSession)
				}
				if _, err := e.st.FindRule(e.ctx, "run_command", "$ make test", r.SessionID); err != nil {
					t.Fatalf("FindRule: %v", err)
				}
			}

			// The first response wins.
			n := e.lastID()
			_, err = e.svc.Respond(e.ctx, q.ID, control.Response{Choice: control.ChoiceDeny})
			ce := wantCode(t, err, control.CodeNotPending)
			if ce.Details["status"] != store.RequestResolved {
				t.Fatalf("details = %+v", ce.Details)
			}
			if e.lastID() != n {
				t.Fatal("a late response wrote events")
			}
			if again, _ := e.st.GetRequest(e.ctx, q.ID); again.Response != tt.choice {
				t.Fatalf("response changed to %q", again.Response)
			}
			if rules2, _ := e.st.ListRules(e.ctx); len(rules2) != len(rules) {
				t.Fatalf("a late response changed rules: %+v", rules2)
			}
		})
	}
}

func TestRespondInvalid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		kind     string
		resp     control.Response
		wantCode string
	}{
		{"unknown choice", store.KindApproval, control.Response{Choice: "maybe"}, control.CodeInvalidChoice},
		{"empty choice", store.KindApproval, control.Response{}, control.CodeInvalidChoice},
		{"choice is case-sensitive", store.KindApproval, control.Response{Choice: "Once"}, control.CodeInvalidChoice},
		{"answer instead of choice", store.KindApproval, control.Response{Answer: "once"}, control.CodeInvalidChoice},
		{"empty answer", store.KindClarify, control.Response{Answer: "  "}, control.CodeInvalidInput},
		{"invalid UTF-8 answer", store.KindClarify, control.Response{Answer: "\xff"}, control.CodeInvalidInput},
		{"oversize answer", store.KindClarify, control.Response{Answer: strings.Repeat("a", control.MaxMessageBytes+1)}, control.CodeInvalidInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			_, q := pendingApproval(e, tt.kind)
			n := e.lastID()
			_, err := e.svc.Respond(e.ctx, q.ID, tt.resp)
			ce := wantCode(t, err, tt.wantCode)
			if tt.wantCode == control.CodeInvalidChoice && !slices.Equal(ce.Details["choices"].([]string), control.ApprovalChoices()) {
				t.Fatalf("details = %+v", ce.Details)
			}
			if got, _ := e.st.GetRequest(e.ctx, q.ID); got.Status != store.RequestPending {
				t.Fatalf("request = %+v", got)
			}
			if e.lastID() != n {
				t.Fatal("an invalid response wrote events")
			}
		})
	}
	t.Run("unknown request", func(t *testing.T) {
		e := newEnv(t)
		_, err := e.svc.Respond(e.ctx, "req_missing", control.Response{Choice: "once"})
		wantCode(t, err, control.CodeNotFound)
	})
}

func TestRespondClarify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		resp control.Response
		want string
	}{
		{"answer is trimmed", control.Response{Answer: "  blue \n"}, "blue"},
		{"a choice answers too", control.Response{Choice: "a"}, "a"},
		{"answer wins over choice", control.Response{Answer: "free text", Choice: "a"}, "free text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			r, q := pendingApproval(e, store.KindClarify)
			got, err := e.svc.Respond(e.ctx, q.ID, tt.resp)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != store.RequestResolved || got.Response != tt.want {
				t.Fatalf("request = %+v", got)
			}
			res := ofType(e.runEvents(r.ID), event.ClarifyResolved)
			if len(res) != 1 {
				t.Fatalf("%d clarify.resolved events", len(res))
			}
			if p := decode[event.ResolvedPayload](t, res[0]); p.Answer != tt.want || p.Choice != "" || p.Status != store.RequestResolved {
				t.Fatalf("clarify.resolved = %+v", p)
			}
			if rules, _ := e.st.ListRules(e.ctx); len(rules) != 0 {
				t.Fatalf("a clarify answer stored rules: %+v", rules)
			}
			_, err = e.svc.Respond(e.ctx, q.ID, control.Response{Answer: "again"})
			wantCode(t, err, control.CodeNotPending)
		})
	}
}

// TestRespondRace: many people answer at once; exactly one wins.
func TestRespondRace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r, q := pendingApproval(e, store.KindApproval)
	choices := []string{"once", "deny", "session", "always", "once", "deny", "session", "always"}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		wins   []string
		others int
	)
	for _, c := range choices {
		wg.Go(func() {
			_, err := e.svc.Respond(e.ctx, q.ID, control.Response{Choice: c})
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				wins = append(wins, c)
				return
			}
			if ce, ok := control.AsError(err); !ok || ce.Code != control.CodeNotPending {
				t.Errorf("loser err = %v", err)
			}
			others++
		})
	}
	wg.Wait()
	if len(wins) != 1 || others != len(choices)-1 {
		t.Fatalf("winners %v, losers %d", wins, others)
	}
	if n := len(ofType(e.runEvents(r.ID), event.ApprovalResolved)); n != 1 {
		t.Fatalf("%d approval.resolved events", n)
	}
	if got, _ := e.st.GetRequest(e.ctx, q.ID); got.Response != wins[0] {
		t.Fatalf("stored response %q, winner %q", got.Response, wins[0])
	}
	rules, _ := e.st.ListRules(e.ctx)
	if wantRules := wins[0] == "session" || wins[0] == "always"; (len(rules) == 1) != wantRules || len(rules) > 1 {
		t.Fatalf("winner %q, rules %+v", wins[0], rules)
	}
}

func TestExpire(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r, q := pendingApproval(e, store.KindApproval)
	e.mustDo(func(tx store.Tx) error { return control.Expire(e.ctx, tx, q.ID) })
	got, _ := e.st.GetRequest(e.ctx, q.ID)
	if got.Status != store.RequestExpired {
		t.Fatalf("request = %+v", got)
	}
	res := ofType(e.runEvents(r.ID), event.ApprovalResolved)
	if len(res) != 1 || decode[event.ResolvedPayload](t, res[0]).Status != store.RequestExpired {
		t.Fatalf("approval.resolved = %v", res)
	}
	// A person answering after expiry is too late, and expiring twice conflicts.
	_, err := e.svc.Respond(e.ctx, q.ID, control.Response{Choice: "once"})
	wantCode(t, err, control.CodeNotPending)
	if err := e.do(func(tx store.Tx) error { return control.Expire(e.ctx, tx, q.ID) }); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second expire = %v, want conflict", err)
	}
	if n := len(ofType(e.runEvents(r.ID), event.ApprovalResolved)); n != 1 {
		t.Fatalf("%d approval.resolved events", n)
	}
}

func TestDeleteSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.session()
	r := e.send(s.ID, "work", "")
	other := e.session()
	otherRun := e.send(other.ID, "other work", "")

	err := e.svc.DeleteSession(e.ctx, s.ID)
	ce := wantCode(t, err, control.CodeSessionBusy)
	if ce.Details["run_id"] != r.ID {
		t.Fatalf("details = %+v", ce.Details)
	}
	if _, err := e.st.GetSession(e.ctx, s.ID); err != nil {
		t.Fatalf("busy session deleted: %v", err)
	}
	if len(e.events(store.EventQuery{SessionID: s.ID})) == 0 {
		t.Fatal("busy session lost its events")
	}

	if _, err := e.svc.Cancel(e.ctx, r.ID, nil); err != nil {
		t.Fatal(err)
	}
	if err := e.svc.DeleteSession(e.ctx, s.ID); err != nil {
		t.Fatalf("delete idle session: %v", err)
	}
	if _, err := e.st.GetSession(e.ctx, s.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetSession after delete = %v", err)
	}
	if _, err := e.st.GetRun(e.ctx, r.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("GetRun after delete = %v", err)
	}
	// Only the announcement of the delete is left.
	if evs := e.events(store.EventQuery{SessionID: s.ID}); len(evs) != 1 || evs[0].Type != event.SessionDeleted || evs[0].RunID != "" {
		t.Fatalf("events left after delete: %+v, want one session.deleted", evs)
	}
	// Other sessions are untouched.
	if len(e.runEvents(otherRun.ID)) == 0 {
		t.Fatal("another session's events were deleted")
	}
	wantCode(t, e.svc.DeleteSession(e.ctx, s.ID), control.CodeNotFound)

	t.Run("interrupted runs do not block deletion", func(t *testing.T) {
		s := e.session()
		r := e.send(s.ID, "work", "")
		e.hold(r.ID, "", run.Interrupted, 0)
		if err := e.svc.DeleteSession(e.ctx, s.ID); err != nil {
			t.Fatal(err)
		}
	})
}
