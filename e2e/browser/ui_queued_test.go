package browser

// Browser tests of what waits (issue 11): a message whose run no runner has
// taken shows at once, marked queued with what it waits for, live and after
// a reload, and Stop takes it back; a run answered while no runner is alive
// says so, and a new runner finishes it with its command run exactly once.

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/config"
	"github.com/caduceus-dev/caduceus/internal/event"
)

const queuedNoteSel = "[data-testid=queued-note]"

func TestUIQueuedWithoutRunner(t *testing.T) {
	t.Parallel()
	d := startSplit(t, e2etest.Scenarios(e2etest.Scenario("", e2etest.Turn(e2etest.Text("Hello there.")))), 0, 0)
	b := openBrowser(t, d.srv)
	dir := screenshotDir(t)
	b.navigate("/")
	sid := b.newSessionUI()
	b.waitJS("connection live", q("[data-testid=connection][data-state=live]"))

	b.sendMessage("Is anyone there?")
	b.waitJS("the message in the transcript", qa(itemSel("user"))+".some(e => e.textContent.includes('Is anyone there?'))")
	b.waitJS("the queued note says no runner is running", q(queuedNoteSel+"[data-reason=runner]"))
	if txt := b.text(queuedNoteSel); !strings.Contains(txt, "Queued") || !strings.Contains(txt, "none is running") {
		t.Fatalf("queued note = %q", txt)
	}
	if !b.visible("[data-testid=stop]") {
		t.Fatalf("no Stop button for a queued run\n%s", b.describe())
	}
	t.Logf("screenshot: %s", b.screenshot(dir, "queued-no-runner"))
	live := b.text("[data-testid=transcript]")

	// A reload shows the same: the message, marked queued, with the reason.
	b.navigate("/s/" + sid)
	b.waitSessionLoaded()
	b.waitJS("the queued note after reload", q(queuedNoteSel+"[data-reason=runner]"))
	if got := b.text("[data-testid=transcript]"); got != live {
		t.Errorf("transcript after reload = %q, live it was %q", got, live)
	}
	var items struct {
		Items []struct {
			Kind   string `json:"kind"`
			Queued bool   `json:"queued"`
		} `json:"items"`
	}
	e2etest.Do(t, "GET", d.srv.URL+"/api/sessions/"+sid+"/messages", nil, &items)
	if len(items.Items) != 1 || items.Items[0].Kind != "user" || !items.Items[0].Queued {
		t.Fatalf("GET messages = %+v, want one user message marked queued", items.Items)
	}

	// Stop takes it back.
	b.click("[data-testid=stop]")
	b.waitGone(queuedNoteSel)
	runs := d.srv.Runs(t, sid)
	if len(runs) != 1 || runs[0].Status != "cancelled" {
		t.Fatalf("runs after Stop = %+v, want one cancelled", runs)
	}
	b.waitGone("[data-testid=stop]")
}

func TestUIQueuedPositionWhenRunnerFull(t *testing.T) {
	t.Parallel()
	srv := e2etest.StartServer(t, e2etest.Scenarios(
		e2etest.Scenario("long", e2etest.Turn(e2etest.SlowText(400, 25))),
		e2etest.Scenario("", e2etest.Turn(e2etest.Text("Short answer."))),
	), func(c *config.Config) { c.MaxConcurrent = 1 })
	// The only slot is busy, and another session's message waits ahead.
	busy := srv.Send(t, srv.NewSession(t), "long one")
	srv.WaitStatus(t, busy.ID, "running")
	ahead := srv.Send(t, srv.NewSession(t), "short one")

	b := openBrowser(t, srv)
	b.navigate("/")
	b.newSessionUI()
	b.waitJS("connection live", q("[data-testid=connection][data-state=live]"))
	b.sendMessage("me too")
	b.waitJS("the queued note with a place in line", q(queuedNoteSel+"[data-reason=runner_slot][data-position='2']"))
	if txt := b.text(queuedNoteSel); !strings.Contains(txt, "2nd in line for a runner") {
		t.Fatalf("queued note = %q", txt)
	}
	t.Logf("screenshot: %s", b.screenshot(screenshotDir(t), "queued-position"))
	// The line moves: the long run is stopped, the one ahead runs, ours is next.
	if c := e2etest.Do(t, "POST", srv.URL+"/api/runs/"+busy.ID+"/cancel", nil, nil); c >= 300 {
		t.Fatalf("cancel: %d", c)
	}
	srv.WaitStatus(t, ahead.ID, "completed")
	b.waitJSFor("our message answered", qa(itemSel("assistant"))+".some(e => e.textContent.includes('Short answer.'))", 20*time.Second)
	b.waitGone(queuedNoteSel)
}

// A runner dies while its run waits for approval (the run is parked, so
// nothing is lost); the person approves with no runner alive: the page says
// the run was answered and waits for a runner, the banner counts it, and a
// new runner finishes it with the command run exactly once.
func TestUIAnsweredWhileNoRunner(t *testing.T) {
	t.Parallel()
	d := startSplit(t, e2etest.Scenarios(e2etest.Scenario("",
		e2etest.Turn(e2etest.Call("run_command", `{"command":"echo once >> ran.txt"}`)),
		e2etest.Turn(e2etest.Text("Appended.")),
	)), 0, 0, e2etest.WithApprovalMode("manual"))
	r1 := d.runner(t, "--approval-mode=manual")
	b := openBrowser(t, d.srv)
	dir := screenshotDir(t)
	b.navigate("/")
	sid := b.newSessionUI()
	b.waitJS("connection live", q("[data-testid=connection][data-state=live]"))
	b.sendMessage("append a line")
	b.waitJSFor("the approval card", q("[data-testid=approval-card] button[data-choice=once]"), runnerWait)

	if err := r1.Stop(t, syscall.SIGKILL); err == nil {
		t.Fatal("a SIGKILLed runner exited cleanly")
	}
	// The web tier's watchdog forgets the dead runner; until then health
	// would still count it.
	deadline := time.Now().Add(runnerWait)
	for {
		h, _ := d.srv.Health(t)
		if len(h.Runners) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dead runner is still listed: %+v", h.Runners)
		}
		time.Sleep(100 * time.Millisecond)
	}

	b.click("[data-testid=approval-card] button[data-choice=once]")
	b.waitJS("header says answered", q(runStatusSel+"[data-status=answered]"))
	b.waitJS("the sidebar says answered too", q("[data-testid=session-item][aria-current=page]")+`?.textContent.includes("Answered")`)
	b.waitFreshHealth()
	b.waitVisible(bannerSel)
	if txt := b.text(bannerSel); !strings.Contains(txt, "No runner is running") || !strings.Contains(txt, "1 run is waiting") {
		t.Fatalf("banner = %q", txt)
	}
	b.waitJS("the badge says why it waits", q(runStatusSel)+`.title.includes("none is running")`)
	t.Logf("screenshot: %s", b.screenshot(dir, "answered-no-runner"))

	d.runner(t, "--approval-mode=manual")
	b.waitJSFor("the run completes", qa(itemSel("assistant"))+".some(e => e.textContent.includes('Appended.'))", runnerWait)
	b.waitGone(bannerSel)
	out, err := os.ReadFile(filepath.Join(d.ws, "ran.txt"))
	if err != nil || string(out) != "once\n" {
		t.Fatalf("ran.txt = %q, %v: the command must run exactly once", out, err)
	}
	runs := d.srv.Runs(t, sid)
	if len(runs) != 1 {
		t.Fatalf("runs = %+v", runs)
	}
	d.srv.WaitStatus(t, runs[0].ID, "completed")
	evs := d.srv.Journal(t, runs[0].ID)
	e2etest.CheckJournal(t, evs)
	if n := e2etest.CountType(evs, event.ToolDone); n != 1 {
		t.Errorf("%d tool.done, want 1", n)
	}
}
