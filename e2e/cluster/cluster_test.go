package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
)

// sideEffect is the scripted turn of job name: a command appending the name
// to side.txt in the shared workspace (the namespaces share the file
// system), then a closing answer. before streams first (how long the turn
// takes).
func sideEffect(name string, before ...demo.Step) demo.Scenario {
	cmd := fmt.Sprintf(`{"command":"echo %s >> side.txt"}`, name)
	return e2etest.Scenario(name, e2etest.Turn(append(before, e2etest.Call("run_command", cmd))...), e2etest.Turn(e2etest.Text("done")))
}

// Three runners, each on a "host" of its own (a network namespace that
// reaches only the database), and two web nodes on this host, all on one
// PostgreSQL database: 50 runs created through both web nodes execute
// exactly once each, spread over the runners; a runner SIGKILLed while it
// holds runs mid-turn loses them to another after the lease, and they
// complete without anything executing twice; a client moving its stream
// between the web nodes sees every event once, in order.
func TestClusterAcrossHosts(t *testing.T) {
	const (
		jobs  = 50
		slows = 6
	)
	start := time.Now()
	last := start
	phase := func(name string) {
		t.Logf("phase %-8s %6s (total %s)", name, time.Since(last).Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
		last = time.Now()
	}
	hn := makeNet(t, subnet, 3)
	url := pgNet.DatabaseTCP(t)
	ws := t.TempDir()
	var sc []demo.Scenario
	for i := range jobs {
		sc = append(sc, sideEffect(fmt.Sprintf("job-%02d", i), e2etest.Text("on it")))
	}
	for i := range slows {
		sc = append(sc, sideEffect(fmt.Sprintf("slow-%02d", i), e2etest.SlowText(150, 20)),
			sideEffect(fmt.Sprintf("frz-%02d", i), e2etest.SlowText(150, 20)))
	}
	sc = append(sc, e2etest.Scenario("stream", e2etest.Turn(e2etest.SlowText(400, 10))))
	sp := e2etest.WriteScript(t, e2etest.Scenarios(sc...))

	webs := []*e2etest.WebProc{startWeb(t, binary, url, ws, sp), startWeb(t, binary, url, ws, sp)}
	var runners []*e2etest.RunnerProc
	for _, ns := range hn.ns {
		runners = append(runners, startRunner(t, binary, ns, url, ws, sp))
	}
	waitRunners(t, webs[1], len(runners))
	phase("start")

	// 50 runs through both web nodes, each exactly once.
	var ids []string
	for i := range jobs {
		w := webs[i%2]
		ids = append(ids, w.Send(t, w.NewSession(t), fmt.Sprintf("job-%02d", i)).ID)
	}
	for i, id := range ids {
		webs[i%2].WaitRun(t, id, 60*time.Second, "completed", func(r e2etest.RunJSON) bool { return r.Terminal })
	}
	phase("50 runs")
	ran := map[string]int{}
	for i, id := range ids {
		// Read through the other web node than the one that created it.
		starts := checkRun(t, webs[(i+1)%2], id)
		if len(starts) != 1 {
			t.Errorf("run %s (job-%02d) started %d times with no runner dying: %+v", id, i, len(starts), starts)
		}
		ran[starts[0].RunnerID]++
	}
	if len(ran) < 2 {
		t.Errorf("all %d runs ran on one runner: %v", jobs, ran)
	}
	t.Logf("runs per runner: %v", ran)
	checkSideFile(t, ws, "job-", jobs)
	phase("journal")

	// SIGKILL a runner holding runs mid-turn: they recover on another.
	victim, _ := loseRunner(t, webs, runners, ws, "slow-", slows, func(r *e2etest.RunnerProc) {
		r.Stop(t, syscall.SIGKILL)
	})
	runners = slices.DeleteFunc(runners, func(r *e2etest.RunnerProc) bool { return r == victim })
	phase("kill")

	// SIGSTOP one (a host frozen, or cut off): its runs recover on the
	// last runner; when it wakes, it finds each of them lost (its lease
	// gone, or its write refused: if it froze inside a transaction, the
	// server ended that session after postgres.IdleInTransaction so the
	// others could write), and neither appends to those runs nor runs their
	// commands again.
	frozen, held := loseRunner(t, webs, runners, ws, "frz-", slows, func(r *e2etest.RunnerProc) {
		if err := syscall.Kill(r.Child.PID(), syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
	})
	if err := syscall.Kill(frozen.Child.PID(), syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		log, fenced := frozen.Child.Log(t), 0
		for _, id := range held {
			if gaveUp(log, frozen.ID, id) {
				fenced++
			}
		}
		if fenced == len(held) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the woken runner gave up %d of the %d runs it held:\n%s", fenced, len(held), log)
		}
		time.Sleep(50 * time.Millisecond)
	}
	checkSideFile(t, ws, "frz-", slows)
	for i, id := range held {
		checkRun(t, webs[i%2], id) // still once, after the woken runner
	}
	phase("freeze")
	// A client's stream moves between the web nodes every 25 events.
	r := webs[0].Send(t, webs[0].NewSession(t), "stream")
	var seen []event.Event
	hops := 0
	for done := false; !done; hops++ {
		hdr := map[string]string{}
		if len(seen) > 0 {
			hdr["Last-Event-ID"] = fmt.Sprint(seen[len(seen)-1].ID)
		}
		st := e2etest.OpenStream(t, webs[hops%2].URL+"/api/runs/"+r.ID+"/events", hdr)
		n := 0
		seen = append(seen, st.Until(t, "25 events or run.done", func(e event.Event) bool {
			n++
			done = e.Type == event.RunDone
			return done || n == 25
		})...)
		st.Close()
	}
	e2etest.CheckOnce(t, seen, "completed")
	journal := webs[1].Journal(t, r.ID)
	if len(journal) != len(seen) {
		t.Fatalf("the moving client saw %d events, the journal has %d", len(seen), len(journal))
	}
	for i := range journal {
		if journal[i].ID != seen[i].ID || string(journal[i].Payload) != string(seen[i].Payload) {
			t.Fatalf("event %d: the client saw id %d, the journal has id %d", i, seen[i].ID, journal[i].ID)
		}
	}
	t.Logf("the stream moved %d times over %d events (%d deltas)", hops-1, len(seen), e2etest.CountType(seen, event.MessageDelta))
	phase("stream")
}

// loseRunner starts n runs of the jobs prefix00..., each streaming about
// 3 s before its command, waits until each has streamed a little, then
// does lose to the runner holding most of them. Every run completes; those
// the runner held (and had not finished) have a resumed second attempt on
// another runner, and every command ran once. It returns the runner lost
// and the runs it held.
func loseRunner(t *testing.T, webs []*e2etest.WebProc, runners []*e2etest.RunnerProc, ws, prefix string, n int,
	lose func(*e2etest.RunnerProc)) (*e2etest.RunnerProc, []string) {
	t.Helper()
	var ids []string
	for i := range n {
		w := webs[i%2]
		ids = append(ids, w.Send(t, w.NewSession(t), fmt.Sprintf("%s%02d", prefix, i)).ID)
	}
	holder := map[string]string{} // run -> runner of its first attempt
	held := map[string]int{}
	for i, id := range ids {
		st := e2etest.OpenStream(t, webs[i%2].URL+"/api/runs/"+id+"/events", nil)
		evs := st.Until(t, "5 deltas of "+id, e2etest.Deltas(5))
		st.Close()
		s := e2etest.OfType[e2etest.StartedJSON](t, evs, event.RunStarted)
		holder[id] = s[0].RunnerID
		held[s[0].RunnerID]++
	}
	victim := runners[0]
	for _, r := range runners {
		if held[r.ID] > held[victim.ID] {
			victim = r
		}
	}
	var lost []string
	for _, id := range ids {
		if holder[id] == victim.ID && !webs[0].Run(t, id).Terminal {
			lost = append(lost, id)
		}
	}
	if len(lost) == 0 {
		t.Fatalf("no runner holds an unfinished run: %v", held)
	}
	at := time.Now()
	lose(victim)
	for i, id := range ids {
		webs[i%2].WaitRun(t, id, 60*time.Second, "completed", func(r e2etest.RunJSON) bool { return r.Terminal })
	}
	t.Logf("runner %s lost holding %d of %d runs; all done %s later", victim.ID, len(lost), n, time.Since(at).Round(time.Millisecond))
	for i, id := range ids {
		starts := checkRun(t, webs[(i+1)%2], id)
		if !slices.Contains(lost, id) {
			continue
		}
		if len(starts) != 2 || starts[0].RunnerID != victim.ID || starts[1].RunnerID == victim.ID || !starts[1].Resumed {
			t.Errorf("run %s of the lost runner %s: run.started %+v, want a resumed second attempt on another runner", id, victim.ID, starts)
		}
	}
	checkSideFile(t, ws, prefix, n)
	return victim, lost
}

// gaveUp says whether a runner's log shows it found run id taken from it:
// its lease lost, or its ending of the run refused as a conflict.
func gaveUp(log, runner, id string) bool {
	for _, l := range strings.Split(log, "\n") {
		if !strings.Contains(l, "runner="+runner+" run="+id+" ") {
			continue
		}
		if strings.Contains(l, `msg="lease lost; another runner owns the run now"`) ||
			strings.Contains(l, `msg="finish failed"`) && strings.Contains(l, "conflict") {
			return true
		}
	}
	return false
}

// waitRunners waits until w's health lists n runners.
func waitRunners(t *testing.T, w *e2etest.WebProc, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		h, _ := w.Health(t)
		if len(h.Runners) == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("health lists %d runners, want %d: %+v", len(h.Runners), n, h)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkRun reads run id's journal through w and checks what exactly-once
// means there: gap-free seqs, one terminal event (completed), one
// run.started per attempt, and no tool started twice within an attempt. It
// returns the run.started payloads.
func checkRun(t *testing.T, w *e2etest.WebProc, id string) []e2etest.StartedJSON {
	t.Helper()
	evs := w.Journal(t, id)
	e2etest.CheckOnce(t, evs, "completed")
	var starts []e2etest.StartedJSON
	tools := map[[2]any]int{} // (attempt, call id) -> tool.started
	for _, e := range evs {
		switch e.Type {
		case event.RunStarted:
			s := e2etest.Payload[e2etest.StartedJSON](t, e)
			if len(starts) > 0 && s.Attempt <= starts[len(starts)-1].Attempt {
				t.Errorf("run %s: run.started of attempt %d after attempt %d", id, s.Attempt, starts[len(starts)-1].Attempt)
			}
			starts = append(starts, s)
		case event.ToolStarted:
			if len(starts) == 0 {
				t.Fatalf("run %s: tool.started before run.started", id)
			}
			tools[[2]any{starts[len(starts)-1].Attempt, e2etest.Payload[event.ToolStartedPayload](t, e).ToolCallID}]++
		}
	}
	if len(starts) == 0 {
		t.Fatalf("run %s has no run.started:\n%s", id, e2etest.Summarize(evs))
	}
	for k, n := range tools {
		if n != 1 {
			t.Errorf("run %s: tool call %v started %d times in attempt %v", id, k[1], n, k[0])
		}
	}
	return starts
}

// checkSideFile checks that side.txt names each of the n jobs prefix00...
// exactly once.
func checkSideFile(t *testing.T, ws, prefix string, n int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(ws, "side.txt"))
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, l := range strings.Fields(string(b)) {
		if strings.HasPrefix(l, prefix) {
			count[l]++
		}
	}
	for i := range n {
		if name := fmt.Sprintf("%s%02d", prefix, i); count[name] != 1 {
			t.Errorf("side.txt names %s %d times, want once", name, count[name])
		}
	}
	if len(count) != n {
		t.Errorf("side.txt names %d %s jobs, want %d", len(count), prefix, n)
	}
}
