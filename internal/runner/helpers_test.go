package runner_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/journal"
	"github.com/caduceus-dev/caduceus/internal/journal/journaltest"
	"github.com/caduceus-dev/caduceus/internal/models"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/runner"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/postgres/pgtest"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// pg is the PostgreSQL server of this test binary: the tests run on both
// stores (storetest.Each).
var pg = pgtest.New()

func TestMain(m *testing.M) { os.Exit(pg.Main(m)) }

// env is a fresh store with the journal writer and hub running
// and the control service that writes what the API would; runners are
// started on it with start.
type env struct {
	t      *testing.T
	ctx    context.Context
	st     store.Store
	w      *journal.Writer
	hub    *journal.Hub
	svc    *control.Service
	script demo.Script
	// model, when set, answers instead of the demo model playing script.
	model models.Client
}

func newEnv(t *testing.T, open storetest.Open, s demo.Script, retry control.RetryPolicy) *env {
	t.Helper()
	j := journaltest.Start(t, open)
	return &env{t: t, ctx: context.Background(), st: j.Store, w: j.Writer, hub: j.Hub,
		svc: control.NewService(j.Store, j.Writer, t.TempDir(), retry), script: s}
}

// started is a running Runner; stop stops it as a process shutdown does.
type started struct {
	*runner.Runner
	stop func()
}

// start runs a runner with the demo model, the run_command and clarify
// tools, and cfg (approval mode manual unless set). It stops when the test
// ends, unless stopped before.
func (e *env) start(cfg runner.Config) *started {
	e.t.Helper()
	if cfg.ApprovalMode == "" {
		cfg.ApprovalMode = "manual"
	}
	if cfg.Lease == 0 {
		cfg.Lease = 5 * time.Second
	}
	log := slog.New(slog.DiscardHandler)
	var model models.Client = demo.New(e.script)
	if e.model != nil {
		model = e.model
	}
	reg := models.New(models.File{}, func(string) string { return "" }, nil, model)
	tools := tool.NewRegistry(tool.NewRunCommand(tool.Config{}), tool.NewClarify())
	r := runner.New(cfg, e.st, e.w, e.hub, tools, reg, log)
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := r.Run(ctx); err != nil && ctx.Err() == nil {
			e.t.Errorf("runner: %v", err)
		}
	}()
	stopped := false
	s := &started{Runner: r, stop: func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}}
	e.t.Cleanup(s.stop)
	return s
}

// send queues a message in a new session.
func (e *env) send(content string) store.Run {
	e.t.Helper()
	s, err := e.svc.CreateSession(e.ctx, control.NewSession{})
	if err != nil {
		e.t.Fatal(err)
	}
	r, err := e.svc.Send(e.ctx, s.ID, control.Message{Content: content})
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

func (e *env) run(id string) store.Run {
	e.t.Helper()
	r, err := e.st.GetRun(e.ctx, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// wait polls the run until ok holds, for at most 10s.
func (e *env) wait(id, what string, ok func(store.Run) bool) store.Run {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := e.run(id)
		if ok(r) {
			return r
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("run %s is %s; timed out waiting for %s", id, r.Status, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func isStatus(s run.Status) func(store.Run) bool {
	return func(r store.Run) bool { return r.Status == s }
}

func terminal(r store.Run) bool { return r.Status.Terminal() }

// pending is the run's pending request, waiting for it to be filed.
func (e *env) pending(id string) store.Request {
	e.t.Helper()
	var q store.Request
	e.wait(id, "a pending request", func(store.Run) bool {
		qs, err := e.st.ListRequests(e.ctx, store.RequestQuery{RunID: id, Status: store.RequestPending})
		if err != nil {
			e.t.Fatal(err)
		}
		if len(qs) == 1 {
			q = qs[0]
			return true
		}
		return false
	})
	return q
}

func (e *env) events(id string) []event.Event {
	e.t.Helper()
	evs, err := e.st.Events(e.ctx, store.EventQuery{RunID: id})
	if err != nil {
		e.t.Fatal(err)
	}
	return evs
}

// checkOnce asserts what every finished run's journal shows: seq 1..n,
// exactly one terminal event, the last, a run.done of status want.
func checkOnce(t *testing.T, evs []event.Event, want run.Status) {
	t.Helper()
	terminal := 0
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d (%s) has seq %d", i, e.Type, e.Seq)
		}
		if e.Terminal {
			terminal++
		}
	}
	last := evs[len(evs)-1]
	if terminal != 1 || last.Type != event.RunDone {
		t.Fatalf("%d terminal events, last %s; want one run.done at the end: %v", terminal, last.Type, typesOf(evs))
	}
	var d event.RunDonePayload
	if err := json.Unmarshal(last.Payload, &d); err != nil || d.Status != string(want) {
		t.Fatalf("run.done %s, want status %s", last.Payload, want)
	}
}

func typesOf(evs []event.Event) []event.Type {
	out := make([]event.Type, len(evs))
	for i, e := range evs {
		out[i] = e.Type
	}
	return out
}

func count(evs []event.Event, typ event.Type) int {
	n := 0
	for _, e := range evs {
		if e.Type == typ {
			n++
		}
	}
	return n
}

func script(turns ...demo.Turn) demo.Script {
	return demo.Script{Scenarios: []demo.Scenario{{Turns: turns}}}
}

func turn(steps ...demo.Step) demo.Turn { return demo.Turn{Steps: steps} }

func text(s string) demo.Step { return demo.Step{Kind: demo.KindText, Text: s} }

func call(name, args string) demo.Step {
	return demo.Step{Kind: demo.KindToolCall, Name: name, Args: json.RawMessage(args)}
}
