package processes

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/id"
)

// The web process dies (SIGKILL) while a separate runner streams a run: the
// run keeps going, a new web process serves its stream from where the client
// left off, and cancelling through the new process ends it once.
func TestWebRestartRunKeepsGoing(t *testing.T) { e2etest.EachStore(t, pg, testWebRestartRunKeepsGoing) }

func testWebRestartRunKeepsGoing(t *testing.T, dbArgs []string) {
	dataDir, ws := t.TempDir(), t.TempDir()
	sp := e2etest.WriteScript(t, e2etest.Script(e2etest.Turn(e2etest.SlowText(400, 20))))
	web := e2etest.StartWeb(t, binary, dataDir, ws, sp, dbArgs...)
	e2etest.StartRunner(t, binary, dataDir, ws, sp, dbArgs...)
	sid := web.NewSession(t)
	st := e2etest.OpenStream(t, web.URL+"/api/sessions/"+sid+"/events", nil)
	r := web.Send(t, sid, "go")
	seen := st.Until(t, "30 deltas", e2etest.Deltas(30))
	e2etest.CheckJournal(t, seen)
	last := seen[len(seen)-1]

	web.Stop(t, syscall.SIGKILL)
	st.Close()
	web2 := e2etest.StartWeb(t, binary, dataDir, ws, sp, dbArgs...)
	if got := web2.Run(t, r.ID); got.Status != "running" || got.LastEventID <= last.ID {
		t.Fatalf("after the web restart the run is %s (last event %d, client had %d): the runner should have kept going",
			got.Status, got.LastEventID, last.ID)
	}

	rs := e2etest.OpenStream(t, web2.URL+"/api/runs/"+r.ID+"/events", map[string]string{"Last-Event-ID": fmt.Sprint(last.ID)})
	more := rs.Until(t, "10 more deltas", e2etest.Deltas(10))
	var cancelled e2etest.RunJSON
	if c := e2etest.Do(t, "POST", web2.URL+"/api/runs/"+r.ID+"/cancel", nil, &cancelled); c != http.StatusAccepted && c != http.StatusOK {
		t.Fatalf("cancel on the new web process: %d", c)
	}
	more = append(more, rs.Drain(t)...)
	prev := last
	for _, e := range more {
		if e.Seq != prev.Seq+1 || e.ID <= prev.ID {
			t.Fatalf("after event id %d seq %d came id %d seq %d (%s): gap or duplicate", prev.ID, prev.Seq, e.ID, e.Seq, e.Type)
		}
		prev = e
	}
	if n := e2etest.CountType(more, event.RunDone); n != 1 {
		t.Fatalf("resumed stream has %d run.done", n)
	}

	evs := web2.Journal(t, r.ID)
	e2etest.CheckOnce(t, evs, "cancelled")
	for i, e := range e2etest.OfRuns(append(seen, more...)) {
		if evs[i].ID != e.ID || string(evs[i].Payload) != string(e.Payload) {
			t.Fatalf("journal event %d differs from what was streamed", i)
		}
	}
}

// A runner SIGKILLed while a command runs: the command is killed too (the
// web tier's watchdog finds its record), the run is interrupted (no
// retries), a person resumes it on a new runner, and the command is
// reported as interrupted instead of being run a second time.
func TestRunnerKilledRunResumes(t *testing.T) { e2etest.EachStore(t, pg, testRunnerKilledRunResumes) }

func testRunnerKilledRunResumes(t *testing.T, dbArgs []string) {
	dataDir, ws := t.TempDir(), t.TempDir()
	pids := filepath.Join(ws, "pids.txt")
	e2etest.KillPidFile(t, pids)
	// $$ is the shell, the leader of the command's process group: one line
	// per execution, and the handle to kill what outlives its runner.
	command := `echo $$ >> pids.txt; sleep 30; echo done >> out.txt`
	sp := e2etest.WriteScript(t, e2etest.Script(
		e2etest.Turn(e2etest.Text("Running it."), e2etest.Call("run_command", fmt.Sprintf(`{"command":%q}`, command))),
		e2etest.Turn(e2etest.Text("finished")),
	))
	web := e2etest.StartWeb(t, binary, dataDir, ws, sp, append(dbArgs, "--approval-mode", "off")...)
	r1 := e2etest.StartRunner(t, binary, dataDir, ws, sp, append(dbArgs, "--approval-mode", "off")...)
	sid := web.NewSession(t)
	st := e2etest.OpenStream(t, web.URL+"/api/sessions/"+sid+"/events", nil)
	r := web.Send(t, sid, "go")
	st.Until(t, "tool.started", e2etest.IsType(event.ToolStarted))
	// Kill only once the command really runs: the executing mark is durable
	// and the shell has written its pid.
	st.Until(t, "the executing mark", func(e event.Event) bool {
		return e.Type == event.ToolUpdated && e2etest.Payload[event.ToolUpdatedPayload](t, e).Phase == "executing"
	})
	e2etest.WaitFile(t, pids)
	killed := time.Now()
	r1.Stop(t, syscall.SIGKILL)

	web.WaitRun(t, r.ID, 30*time.Second, "interrupted", func(r e2etest.RunJSON) bool { return r.Status == "interrupted" })
	if d := time.Since(killed); d > 15*time.Second {
		t.Errorf("the run was interrupted %s after its runner died; lease %s", d.Round(time.Millisecond), e2etest.ProcLease)
	}
	shell := readPID(t, pids)
	for alive(shell) {
		if time.Since(killed) > 15*time.Second {
			t.Fatalf("the command (pid %d) still runs %s after its runner died", shell, time.Since(killed).Round(time.Millisecond))
		}
		time.Sleep(20 * time.Millisecond)
	}
	evs := e2etest.OpenStream(t, web.URL+"/api/runs/"+r.ID+"/events", nil).Until(t, "worker_stopped", func(e event.Event) bool {
		return e.Type == event.Diagnostic && e2etest.Payload[event.DiagnosticPayload](t, e).Code == "worker_stopped"
	})
	e2etest.CheckJournal(t, evs)
	if d := e2etest.Payload[event.DiagnosticPayload](t, evs[len(evs)-1]); d.Level != "error" {
		t.Errorf("worker_stopped diagnostic = %+v, want level error", d)
	}

	// Resumed while no runner is alive: it waits in the queue, and a second
	// resume changes nothing.
	var view e2etest.RunJSON
	if c := e2etest.Do(t, "POST", web.URL+"/api/runs/"+r.ID+"/resume", nil, &view); c != http.StatusAccepted {
		t.Fatalf("resume: %d", c)
	}
	if view.ID != r.ID || view.Status != "queued" {
		t.Fatalf("resume answered %+v, want the run, queued", view)
	}
	var e e2etest.ErrorJSON
	if c := e2etest.Do(t, "POST", web.URL+"/api/runs/"+r.ID+"/resume", map[string]any{}, &e); c != http.StatusConflict ||
		e.Error.Code != "not_resumable" || e.Error.Details["status"] != "queued" {
		t.Fatalf("resume of the queued run: %d %+v, want 409 not_resumable {status: queued}", c, e)
	}
	// On SQLite the web tier sees at once that the runner's process is
	// gone; on a shared database liveness is lease-only, and the dead
	// runner counts as live until its last heartbeat is 3 leases old.
	for deadline := killed.Add(3*e2etest.ProcLease + 5*time.Second); ; {
		h, _ := web.Health(t)
		if h.Status == "degraded" && h.QueueDepth == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("health with the resumed run and no runner = %+v", h)
		}
		time.Sleep(100 * time.Millisecond)
	}
	e2etest.StartRunner(t, binary, dataDir, ws, sp, append(dbArgs, "--approval-mode", "off")...)
	evs = web.Journal(t, r.ID)
	e2etest.CheckOnce(t, evs, "completed")
	if n := e2etest.CountType(evs, event.ToolStarted); n != 1 {
		t.Fatalf("%d tool.started: the interrupted call was announced again", n)
	}
	dones := e2etest.OfType[event.ToolDonePayload](t, evs, event.ToolDone)
	if len(dones) != 1 || dones[0].Status != event.ToolError || !strings.HasPrefix(dones[0].Error, "interrupted:") {
		t.Fatalf("tool.done = %+v, want one with status error and an error starting interrupted:", dones)
	}
	if !strings.Contains(dones[0].Output, "interrupted:") {
		t.Errorf("the model's result of the interrupted call is %q, want the interrupted text", dones[0].Output)
	}
	starts := e2etest.OfType[e2etest.StartedJSON](t, evs, event.RunStarted)
	if len(starts) != 2 || starts[0].Resumed || !starts[1].Resumed || starts[1].RunnerID == r1.ID {
		t.Fatalf("run.started payloads = %+v, want a first one and a resumed one on the new runner", starts)
	}
	msgs := e2etest.OfType[event.DonePayload](t, evs, event.MessageDone)
	if len(msgs) == 0 || msgs[len(msgs)-1].Text != "finished" {
		t.Fatalf("final messages = %+v, want the second turn's \"finished\"", msgs)
	}
	var resumed bool
	for _, s := range e2etest.OfType[e2etest.StatusJSON](t, evs, event.RunStatus) {
		resumed = resumed || (s.Status == "queued" && strings.Contains(s.Reason, "resumed"))
	}
	if !resumed {
		t.Errorf("no run.status queued \"resumed by a person\" in the journal")
	}
	if b, _ := os.ReadFile(pids); len(strings.Fields(string(b))) != 1 {
		t.Fatalf("the command was started %d times (pids %q), want once", len(strings.Fields(string(b))), b)
	}

	// Resume is not repeatable, and ids are checked.
	e = e2etest.ErrorJSON{}
	if c := e2etest.Do(t, "POST", web.URL+"/api/runs/"+r.ID+"/resume", map[string]any{}, &e); c != http.StatusConflict || e.Error.Code != "not_resumable" {
		t.Fatalf("second resume: %d %+v", c, e)
	}
	e = e2etest.ErrorJSON{}
	if c := e2etest.Do(t, "POST", web.URL+"/api/runs/"+id.New("run")+"/resume", nil, &e); c != http.StatusNotFound || e.Error.Code != "not_found" {
		t.Fatalf("resume of an unknown run: %d %+v", c, e)
	}
	e = e2etest.ErrorJSON{}
	c := e2etest.Do(t, "POST", web.URL+"/api/runs/garbage/resume", nil, &e)
	switch {
	case c == http.StatusBadRequest:
	case c == http.StatusNotFound && e.Error.Code == "not_found":
		// The API's convention for malformed ids elsewhere (pathID).
		t.Logf("resume of a malformed id: 404 not_found (the brief expected 400)")
	default:
		t.Fatalf("resume of a malformed id: %d %+v", c, e)
	}
}

// Two runners share the queue: every run is executed exactly once.
func TestTwoRunnersEachRunOnce(t *testing.T) { e2etest.EachStore(t, pg, testTwoRunnersEachRunOnce) }

func testTwoRunnersEachRunOnce(t *testing.T, dbArgs []string) {
	dataDir, ws := t.TempDir(), t.TempDir()
	sp := e2etest.WriteScript(t, e2etest.Script(e2etest.Turn(e2etest.Delay(100), e2etest.Text("short answer"))))
	web := e2etest.StartWeb(t, binary, dataDir, ws, sp, dbArgs...)
	ra := e2etest.StartRunner(t, binary, dataDir, ws, sp, append(dbArgs, "--max-concurrent", "2")...)
	rb := e2etest.StartRunner(t, binary, dataDir, ws, sp, append(dbArgs, "--max-concurrent", "2")...)
	var runs []string
	for i := range 20 {
		sid := web.NewSession(t)
		runs = append(runs, web.Send(t, sid, fmt.Sprintf("message %d", i)).ID)
	}
	deadline := time.Now().Add(45 * time.Second)
	for _, rid := range runs {
		for {
			r := web.Run(t, rid)
			if r.Terminal {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %s still %s", rid, r.Status)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	took := map[string]int{}
	for _, rid := range runs {
		evs := web.Journal(t, rid)
		e2etest.CheckOnce(t, evs, "completed")
		starts := e2etest.OfType[e2etest.StartedJSON](t, evs, event.RunStarted)
		if len(starts) != 1 {
			t.Fatalf("run %s: %d run.started, want 1: %+v", rid, len(starts), starts)
		}
		if id := starts[0].RunnerID; id != ra.ID && id != rb.ID {
			t.Fatalf("run %s started by %q, neither runner", rid, id)
		}
		took[starts[0].RunnerID]++
	}
	t.Logf("runs per runner: A %d, B %d", took[ra.ID], took[rb.ID])
	if len(took) < 2 {
		t.Logf("only one runner took work (timing dependent, not a failure)")
	}
}

// SIGTERM to the runner holding a run: it lets the run reach a step
// boundary, hands it over and exits 0; another runner finishes it.
func TestRunnerSIGTERMHandsOver(t *testing.T) { e2etest.EachStore(t, pg, testRunnerSIGTERMHandsOver) }

func testRunnerSIGTERMHandsOver(t *testing.T, dbArgs []string) {
	dataDir, ws := t.TempDir(), t.TempDir()
	first, second := strings.Repeat("tok ", 150), strings.Repeat("tok ", 100)
	sp := e2etest.WriteScript(t, e2etest.Script(
		e2etest.Turn(e2etest.SlowText(150, 20), e2etest.Call("run_command", `{"command":"echo step"}`)),
		e2etest.Turn(e2etest.SlowText(100, 20)),
	))
	web := e2etest.StartWeb(t, binary, dataDir, ws, sp, append(dbArgs, "--approval-mode", "off")...)
	ra := e2etest.StartRunner(t, binary, dataDir, ws, sp, append(dbArgs, "--approval-mode", "off")...)
	sid := web.NewSession(t)
	st := e2etest.OpenStream(t, web.URL+"/api/sessions/"+sid+"/events", nil)
	r := web.Send(t, sid, "go")
	seen := st.Until(t, "run.started", e2etest.IsType(event.RunStarted))
	if s := e2etest.Payload[e2etest.StartedJSON](t, seen[len(seen)-1]); s.RunnerID != ra.ID {
		t.Fatalf("run.started by %q, want runner A %s", s.RunnerID, ra.ID)
	}
	rb := e2etest.StartRunner(t, binary, dataDir, ws, sp, append(dbArgs, "--approval-mode", "off")...)
	if tr := web.Run(t, r.ID); tr.Status != "running" {
		t.Fatalf("run is %s before runner A was stopped", tr.Status)
	}
	stopped := time.Now()
	ra.Stop(t, syscall.SIGTERM)
	if d := time.Since(stopped); d > 5*time.Second+10*time.Second {
		t.Errorf("runner A took %s to exit, grace 5s", d.Round(time.Millisecond))
	}

	evs := append(seen, st.Until(t, "run.done", e2etest.IsDone(r.ID))...)
	e2etest.CheckJournal(t, evs)
	if j, n := web.Journal(t, r.ID), len(evs)-e2etest.CountType(evs, event.SessionCreated); len(j) != n {
		t.Fatalf("journal has %d events, the session stream %d of the run", len(j), n)
	}
	e2etest.CheckOnce(t, evs, "completed")
	starts := e2etest.OfType[e2etest.StartedJSON](t, evs, event.RunStarted)
	if len(starts) != 2 || starts[0].RunnerID != ra.ID || starts[1].RunnerID != rb.ID || !starts[1].Resumed {
		t.Fatalf("run.started payloads = %+v, want A then B resumed (A %s, B %s)", starts, ra.ID, rb.ID)
	}
	var handed bool
	for _, s := range e2etest.OfType[e2etest.StatusJSON](t, evs, event.RunStatus) {
		handed = handed || (s.Status == "queued" && strings.Contains(s.Reason, "handed over") && strings.Contains(s.Reason, ra.ID))
	}
	if !handed {
		t.Errorf("no run.status queued \"handed over: runner %s ...\"", ra.ID)
	}
	// Runner A finishes its step within the grace and hands over at the
	// step boundary; on a loaded machine the grace may end mid-step, and
	// then A's half-streamed answer is closed as partial and B streams the
	// turn again. Either way the complete answers are the two turns, once.
	var complete []string
	for _, m := range e2etest.OfType[event.DonePayload](t, evs, event.MessageDone) {
		if !m.Partial {
			complete = append(complete, m.Text)
		}
	}
	if len(complete) != 2 || complete[0] != first || complete[1] != second {
		t.Fatalf("complete message.done texts are not the two turns once each: %d complete messages", len(complete))
	}
	for _, typ := range []event.Type{event.ToolStarted, event.ToolDone} {
		if n := e2etest.CountType(evs, typ); n != 1 {
			t.Fatalf("%d %s, want 1", n, typ)
		}
	}
	if td := e2etest.OfType[event.ToolDonePayload](t, evs, event.ToolDone)[0]; td.Status != event.ToolOK {
		t.Fatalf("tool.done = %+v", td)
	}
}

// With retries, a run whose runner died recovers by itself on a new runner.
func TestAutoRecoveryAfterRunnerDeath(t *testing.T) {
	dataDir, ws := t.TempDir(), t.TempDir()
	sp := e2etest.WriteScript(t, e2etest.Script(e2etest.Turn(e2etest.SlowText(200, 20))))
	web := e2etest.StartWeb(t, binary, dataDir, ws, sp, "--max-retries", "2", "--retry-backoff", "500ms")
	r1 := e2etest.StartRunner(t, binary, dataDir, ws, sp)
	sid := web.NewSession(t)
	st := e2etest.OpenStream(t, web.URL+"/api/sessions/"+sid+"/events", nil)
	r := web.Send(t, sid, "go")
	seen := st.Until(t, "20 deltas", e2etest.Deltas(20))
	r1.Stop(t, syscall.SIGKILL)
	seen = append(seen, st.Until(t, "recovering", func(e event.Event) bool {
		return e.Type == event.RunStatus && e2etest.Payload[e2etest.StatusJSON](t, e).Status == "recovering"
	})...)
	rec := e2etest.Payload[e2etest.StatusJSON](t, seen[len(seen)-1])
	if rec.Retry != 1 || rec.MaxRetries != 2 || rec.RetryAt == "" {
		t.Fatalf("recovering status = %+v, want retry 1 of 2 with retry_at", rec)
	}
	if v := web.Run(t, r.ID); v.Terminal || (v.Status != "recovering" && v.Status != "queued") {
		t.Fatalf("run after its runner died: %s", v.Status)
	}

	r2 := e2etest.StartRunner(t, binary, dataDir, ws, sp)
	seen = append(seen, st.Until(t, "run.done", e2etest.IsDone(r.ID))...)
	e2etest.CheckOnce(t, seen, "completed")
	var stopped bool
	for _, d := range e2etest.OfType[event.DiagnosticPayload](t, seen, event.Diagnostic) {
		stopped = stopped || d.Code == "worker_stopped"
	}
	if !stopped {
		t.Errorf("no worker_stopped diagnostic")
	}
	starts := e2etest.OfType[e2etest.StartedJSON](t, seen, event.RunStarted)
	if len(starts) != 2 || !starts[1].Resumed || starts[1].RunnerID != r2.ID {
		t.Fatalf("run.started payloads = %+v, want the second resumed on %s", starts, r2.ID)
	}
	var v map[string]any
	e2etest.Do(t, "GET", web.URL+"/api/runs/"+r.ID, nil, &v)
	if v["retries"] != 1.0 || v["max_retries"] != 2.0 {
		t.Errorf("run view retries %v max_retries %v, want 1 and 2", v["retries"], v["max_retries"])
	}
	// docs/API.md: retry_at is there only while the run is recovering.
	if at, ok := v["retry_at"]; ok {
		t.Errorf("the completed run's view still has retry_at %v", at)
	}
}

// /api/health tells whether a runner is alive and how much work waits.
func TestHealthReportsRunners(t *testing.T) {
	dataDir, ws := t.TempDir(), t.TempDir()
	sp := e2etest.WriteScript(t, e2etest.Script(e2etest.Turn(e2etest.SlowText(150, 20))))
	web := e2etest.StartWeb(t, binary, dataDir, ws, sp)
	sid := web.NewSession(t)
	r := web.Send(t, sid, "go")

	h, raw := web.Health(t)
	if h.Status != "degraded" || h.QueueDepth != 1 || h.Reason == "" || h.RunnerMode != "none" || h.Store != "ok" {
		t.Fatalf("health without a runner = %+v", h)
	}
	if string(raw["runners"]) != "[]" {
		t.Fatalf("runners = %s, want []", raw["runners"])
	}

	rn := e2etest.StartRunner(t, binary, dataDir, ws, sp)
	web.WaitStatus(t, r.ID, "running")
	deadline := time.Now().Add(20 * time.Second)
	for {
		h, _ = web.Health(t)
		if len(h.Runners) == 1 && h.Runners[0].RunsHeld != nil && *h.Runners[0].RunsHeld == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("health with a runner holding a run = %+v", h)
		}
		time.Sleep(100 * time.Millisecond)
	}
	host, _ := os.Hostname()
	got := h.Runners[0]
	if got.ID != rn.ID || got.PID != rn.Child.PID() || got.Host != host || got.Version != rn.Version ||
		got.StartedAt == "" || got.HeartbeatAt == "" {
		t.Fatalf("runner = %+v, want id %s pid %d host %s version %s", got, rn.ID, rn.Child.PID(), host, rn.Version)
	}
	if h.Status != "ok" || h.QueueDepth != 0 {
		t.Fatalf("health with a runner = %+v", h)
	}

	rn.Stop(t, syscall.SIGTERM)
	h, raw = web.Health(t)
	if string(raw["runners"]) != "[]" {
		t.Fatalf("after the runner's SIGTERM runners = %s, want []", raw["runners"])
	}
	// Whether the run finished within the grace or went back to the queue
	// depends on the machine's speed; either way the status must say so.
	if want := map[bool]string{true: "degraded", false: "ok"}[h.QueueDepth > 0]; h.Status != want {
		t.Errorf("health after the runner left = %+v, want status %s", h, want)
	}
	t.Logf("after the runner left: run %s, health %+v", web.Run(t, r.ID).Status, h)
}

// SIGTERM to the web process ends its SSE streams cleanly (the response is
// complete, no error event) and the process exits 0.
func TestWebSIGTERMClosesStreams(t *testing.T) {
	dataDir, ws := t.TempDir(), t.TempDir()
	sp := e2etest.WriteScript(t, e2etest.Script(e2etest.Turn(e2etest.SlowText(400, 20))))
	web := e2etest.StartWeb(t, binary, dataDir, ws, sp)
	e2etest.StartRunner(t, binary, dataDir, ws, sp)
	sid := web.NewSession(t)
	type result struct {
		body []byte
		err  error
	}
	urls := []string{
		web.URL + "/api/sessions/" + sid + "/events",
		web.URL + "/api/events?session=" + sid,
	}
	results := make([]chan result, len(urls))
	firstEvent := make(chan struct{}, len(urls))
	for i, u := range urls {
		results[i] = make(chan result, 1)
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		req, _ := http.NewRequestWithContext(ctx, "GET", u, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("open %s: %v %v", u, resp, err)
		}
		go func() {
			defer resp.Body.Close()
			var body strings.Builder
			rd := bufio.NewReader(resp.Body)
			signalled := false
			for {
				line, err := rd.ReadString('\n')
				body.WriteString(line)
				if !signalled && strings.HasPrefix(line, "data: ") {
					signalled = true
					firstEvent <- struct{}{}
				}
				if err != nil {
					if err == io.EOF {
						err = nil
					}
					results[i] <- result{[]byte(body.String()), err}
					return
				}
			}
		}()
	}
	r := web.Send(t, sid, "go")
	for range urls {
		select {
		case <-firstEvent:
		case <-time.After(20 * time.Second):
			t.Fatal("no event on the streams")
		}
	}
	web.WaitStatus(t, r.ID, "running")

	stopped := time.Now()
	web.Stop(t, syscall.SIGTERM)
	if d := time.Since(stopped); d > 10*time.Second {
		t.Errorf("web took %s to exit on SIGTERM", d.Round(time.Millisecond))
	}
	for i, u := range urls {
		select {
		case res := <-results[i]:
			if res.err != nil {
				t.Errorf("%s ended with %v, want a clean end", u, res.err)
			}
			if strings.Contains(string(res.body), "event: error") || strings.Contains(string(res.body), `"type":"error"`) {
				t.Errorf("%s sent an error event:\n%s", u, res.body)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("%s still open after the web process exited", u)
		}
	}
}
