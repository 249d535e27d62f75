package browser

// Browser tests of issue 5 in the workbench: the web tier runs without a
// runner (in-process, Runner "none") and `caduceus runner` processes on the
// same data dir execute. The page must say when no runner is alive while
// runs wait, show a run whose runner died (interrupted, or recovering until
// its retry) and resume it with a click, without losing or repeating text.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/config"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
)

// runnerWait bounds waits that include a runner's lease running out and a
// runner process starting (a -race binary, next to other browsers).
const runnerWait = 45 * time.Second

// splitDeploy is a web tier in this process with no runner of its own, on
// fresh data and workspace directories that runner processes share.
type splitDeploy struct {
	srv             *e2etest.Server
	dataDir, ws, sp string
}

// startSplit starts the web tier for script s. maxRetries and backoff are
// the automatic retry policy of the runs it queues.
func startSplit(t *testing.T, s demo.Script, maxRetries int, backoff time.Duration, opts ...e2etest.ServerOpt) *splitDeploy {
	t.Helper()
	d := &splitDeploy{dataDir: t.TempDir(), ws: t.TempDir(), sp: e2etest.WriteScript(t, s)}
	d.srv = e2etest.StartServer(t, s, append(opts, func(c *config.Config) {
		c.DataDir, c.Workspace, c.DemoScript = d.dataDir, d.ws, d.sp
		c.Runner = config.RunnerNone
		c.MaxRetries, c.RetryBackoff = maxRetries, backoff
		c.Lease = 2 * time.Second // the runners' --lease: a dead one is noticed soon
	})...)
	return d
}

// runner starts a `caduceus runner` process on the deployment's data;
// extra flags come last.
func (d *splitDeploy) runner(t *testing.T, extra ...string) *e2etest.RunnerProc {
	t.Helper()
	return e2etest.StartRunner(t, binary(t), d.dataDir, d.ws, d.sp, extra...)
}

const (
	bannerSel    = "[data-testid=runner-banner]"
	resumeSel    = "[data-testid=resume-run]"
	resumeBarSel = "[data-testid=resume-bar]"
)

// waitFreshHealth waits until the page has an answer from /api/health to a
// request it sent after now, so what it shows reflects the server's state
// from then on.
func (b *browser) waitFreshHealth() {
	b.t.Helper()
	b.waitJS("the debug hooks", "window.caduceus")
	n := eval[int](b, "window.caduceus.stats().healthSeq.started")
	// A tab becoming visible is one of the page's own reasons to look.
	eval[bool](b, `(document.dispatchEvent(new Event("visibilitychange")), true)`)
	b.waitJS("a fresh health answer", fmt.Sprintf("window.caduceus.stats().healthSeq.answered > %d", n))
}

// assistantTexts are the texts of the transcript's assistant items, with
// whether each is marked cut short.
func (b *browser) assistantTexts() []string {
	b.t.Helper()
	return eval[[]string](b, qa(itemSel("assistant"))+`.map(e => (e.querySelector("[data-superseded]") ? "[superseded] " : "") + (e.querySelector(".cut-note") ? "[cut] " : "") + (e.querySelector(".md")?.textContent ?? "").trim())`)
}

// The whole life of a run whose runner dies: queued with no runner (the
// banner), streamed by a runner, SIGKILLed mid-stream (interrupted, Resume),
// resumed by a click on a new runner, and complete — once, whole.
func TestUIRunnerInterruptAndResume(t *testing.T) {
	t.Parallel()
	words := numberedWords(160)
	d := startSplit(t, e2etest.Scenarios(e2etest.Scenario("", e2etest.Turn(e2etest.Paced(words, 5, 40)))), 0, 0)
	b := openBrowser(t, d.srv)
	dir := screenshotDir(t)

	b.navigate("/")
	sid := b.newSessionUI()
	b.waitJS("connection live", q("[data-testid=connection][data-state=live]"))
	b.waitFreshHealth()
	if b.visible(bannerSel) {
		t.Fatalf("runner banner shown with nothing waiting: %q", b.text(bannerSel))
	}

	// No runner: the message waits, and the page says why and what to do.
	b.sendMessage("Tell me something long")
	b.waitVisible(bannerSel)
	if txt := b.text(bannerSel); !strings.Contains(txt, "No runner is running") || !strings.Contains(txt, "1 run is waiting") ||
		!strings.Contains(txt, "caduceus runner") {
		t.Fatalf("banner = %q", txt)
	}
	if c := b.text(bannerSel + " code"); c != "caduceus runner" {
		t.Errorf("banner command = %q, want it code-formatted", c)
	}
	b.waitJS("run-status queued", q(runStatusSel+"[data-status=queued]"))
	t.Logf("screenshot: %s", b.screenshot(dir, "runner-banner"))
	runs := d.srv.Runs(t, sid)
	if len(runs) != 1 || runs[0].Status != "queued" {
		t.Fatalf("runs = %+v, want one queued", runs)
	}
	runID := runs[0].ID

	// A runner starts: the banner goes and the run streams.
	r1 := d.runner(t)
	b.waitGone(bannerSel)
	open := itemSel("assistant") + "[data-open=true]"
	b.waitJSFor("text streaming from the runner", q(open)+"?.textContent.includes('w020')", runnerWait)

	// SIGKILL mid-stream: after the lease the run is interrupted (no
	// automatic retries here) and offers Resume.
	if err := r1.Stop(t, syscall.SIGKILL); err == nil {
		t.Fatal("a SIGKILLed runner exited cleanly")
	}
	b.waitJSFor("run-status interrupted", q(runStatusSel+"[data-status=interrupted]"), runnerWait)
	b.waitVisible(resumeSel)
	if st := b.attr(resumeBarSel, "data-status"); st != "interrupted" {
		t.Errorf("resume bar status = %q", st)
	}
	// The button sits under the diagnostic that says the worker stopped.
	if !eval[bool](b, qa(itemSel("notice"))+`.some(e => e.querySelector("[data-code=worker_stopped]") && e.querySelector("[data-testid=resume-run]"))`) {
		t.Errorf("the Resume button is not on the worker_stopped notice\n%s", b.describe())
	}
	// The cut text is no longer streaming and says so.
	b.waitGone(open)
	cut := b.assistantTexts()
	if len(cut) != 1 || !strings.HasPrefix(cut[0], "[cut] w001") {
		t.Fatalf("assistant items after the kill = %q, want one cut short", cut)
	}
	if got := strings.TrimPrefix(cut[0], "[cut] "); !strings.HasPrefix(words, got) {
		t.Fatalf("cut text %q is not a prefix of the script", got)
	}
	// An interrupted run waits for a person, not a runner: no banner.
	b.waitFreshHealth()
	if b.visible(bannerSel) {
		t.Errorf("banner shown for an interrupted run: %q", b.text(bannerSel))
	}
	b.waitVisible("[data-testid=composer]")
	t.Logf("screenshot: %s", b.screenshot(dir, "runner-interrupted-resume"))

	// A new runner, then Resume: the run completes on it.
	r2 := d.runner(t)
	b.click(resumeSel)
	b.waitGone(resumeBarSel)
	b.waitJSFor("the resumed run to finish", q(runStatusSel+"[data-status=idle]")+" && !"+q(open), runnerWait)
	if b.visible("[data-testid=toast]") {
		t.Errorf("toast after resume: %q", b.text("[data-testid=toast]"))
	}
	got := d.srv.Run(t, runID)
	if got.Status != "completed" {
		t.Fatalf("run status %s after resume, want completed", got.Status)
	}

	// The text is whole, once: the cut attempt is folded away (the answer
	// does not read twice), one click from view.
	texts := b.assistantTexts()
	if len(texts) != 2 || texts[0] != "[superseded] " || texts[1] != words {
		t.Fatalf("assistant items = %q, want the cut one folded then the whole text once", texts)
	}
	if n := b.count(itemSel("user")); n != 1 {
		t.Errorf("%d user items, want 1", n)
	}
	if n := b.count(itemSel("run_end")); n != 0 {
		t.Errorf("%d run_end items for a completed run", n)
	}
	// The activity panel marks where the run picked up again.
	b.openActivity()
	b.waitJS("the resumed marker", qa("[data-testid=activity-node][data-type=marker]")+`.some(e => e.textContent.includes("Resumed (attempt 2)"))`)
	t.Logf("screenshot: %s", b.screenshot(dir, "runner-resumed"))

	// The journal agrees: two executions, the second resumed by r2.
	evs := d.srv.Journal(t, runID)
	e2etest.CheckOnce(t, evs, "completed")
	starts := e2etest.OfType[e2etest.StartedJSON](t, evs, event.RunStarted)
	if len(starts) != 2 || starts[0].RunnerID != r1.ID || !starts[1].Resumed || starts[1].RunnerID != r2.ID {
		t.Fatalf("run.started = %+v, want r1 then a resumed one on r2", starts)
	}

	// A reload shows what the live view showed.
	b.navigate("/s/" + sid)
	if again := b.assistantTexts(); strings.Join(again, "\n") != strings.Join(texts, "\n") {
		t.Fatalf("after reload the assistant items are %q, live they were %q", again, texts)
	}
	b.waitIdle()
	if b.visible(resumeSel) || b.visible(bannerSel) {
		t.Errorf("after reload: resume visible %v, banner visible %v", b.visible(resumeSel), b.visible(bannerSel))
	}
}

// A runner dies with automatic retries left: the run is recovering, the
// header says which retry comes when, the sidebar badges it, the banner
// counts it once the dead runner is gone, and "Resume now" skips the wait.
func TestUIRunnerRecovering(t *testing.T) {
	t.Parallel()
	words := numberedWords(60)
	// A long backoff keeps the run recovering for the whole test.
	d := startSplit(t, e2etest.Scenarios(e2etest.Scenario("", e2etest.Turn(e2etest.Paced(words, 5, 60)))), 2, time.Hour)
	b := openBrowser(t, d.srv)
	dir := screenshotDir(t)

	b.navigate("/")
	sid := b.newSessionUI()
	r1 := d.runner(t)
	b.sendMessage("Say sixty words")
	open := itemSel("assistant") + "[data-open=true]"
	b.waitJSFor("text streaming from the runner", q(open)+"?.textContent.includes('w005')", runnerWait)
	if err := r1.Stop(t, syscall.SIGKILL); err == nil {
		t.Fatal("a SIGKILLed runner exited cleanly")
	}

	b.waitJSFor("run-status recovering", q(runStatusSel+"[data-status=recovering]"), runnerWait)
	// The header says Recovering; the status line under the composer (and
	// the badge's tooltip) say which retry comes when.
	status := b.text("[data-testid=composer-status]")
	if !strings.HasPrefix(status, "Recovering — retry 1 of 2 at ") {
		t.Errorf("status line = %q, want \"Recovering — retry 1 of 2 at <time>\"", status)
	}
	if h, tip := b.text(runStatusSel), b.attr(runStatusSel, "title"); h != "Recovering" || !strings.HasPrefix(status, tip) {
		t.Errorf("header badge %q with title %q", h, tip)
	}
	b.waitJS("the sidebar badge", q("[data-testid=session-item][data-session-id="+js(sid)+"] [data-testid=session-badge][data-status=recovering]"))
	if l := b.text(resumeSel); !strings.Contains(l, "Resume now") {
		t.Errorf("resume button of a recovering run = %q", l)
	}
	// A recovering run keeps the session busy: Stop is offered.
	b.waitVisible("[data-testid=stop]")

	// A reload reads the same from the run view.
	b.navigate("/s/" + sid)
	b.waitJS("run-status recovering after reload", q(runStatusSel+"[data-status=recovering]"))
	if again := b.text("[data-testid=composer-status]"); again != status {
		t.Errorf("status line after reload = %q, live it was %q", again, status)
	}
	// The dead runner drops out of /api/health within three leases; then
	// the waiting run has no runner and the page says so (the 15 s poll
	// brings it, or anything that makes the page look again).
	b.waitJSFor("the banner for the recovering run", visibleJS(bannerSel)+" && "+q(bannerSel)+".textContent.includes('1 run is waiting')", runnerWait)
	t.Logf("screenshot: %s", b.screenshot(dir, "runner-recovering"))

	d.runner(t)
	// Nothing the runner claims (the retry is an hour away): the page
	// learns of it when it looks again.
	b.waitFreshHealth()
	b.waitGone(bannerSel)
	b.click(resumeSel)
	b.waitGone(resumeBarSel)
	b.waitJSFor("the resumed run to finish", q(runStatusSel+"[data-status=idle]")+" && !"+q(open), runnerWait)
	texts := b.assistantTexts()
	if len(texts) == 0 || texts[len(texts)-1] != words {
		t.Fatalf("assistant items = %q, want the whole text last", texts)
	}
	for _, s := range texts[:len(texts)-1] {
		if s != "[superseded] " {
			t.Errorf("an earlier assistant item is not folded away as superseded: %q", s)
		}
	}
}

// A tool call cut off by its runner's death is closed when the run resumes,
// never run twice, and its card says "Interrupted" (amber, with the
// server's explanation) rather than showing a failure.
func TestUIRunnerInterruptedToolCall(t *testing.T) {
	t.Parallel()
	// $$ (the shell) writes one line per execution and is the handle to
	// kill the command, which outlives its runner.
	command := `echo $$ >> pids.txt; sleep 3`
	d := startSplit(t, e2etest.Scenarios(e2etest.Scenario("",
		e2etest.Turn(e2etest.Text("Running it."), e2etest.Call("run_command", fmt.Sprintf(`{"command":%q}`, command))),
		e2etest.Turn(e2etest.Text("Finished after the interruption.")),
	)), 0, 0, e2etest.WithApprovalMode("off"))
	pids := filepath.Join(d.ws, "pids.txt")
	e2etest.KillPidFile(t, pids)
	b := openBrowser(t, d.srv)
	dir := screenshotDir(t)

	b.navigate("/")
	sid := b.newSessionUI()
	r1 := d.runner(t, "--approval-mode", "off")
	b.sendMessage("run the slow command")
	card := "[data-testid=tool-card][data-tool=run_command]"
	b.waitJSFor("the command running", q(card+"[data-status=running]"), runnerWait)
	e2etest.WaitFile(t, pids)
	if err := r1.Stop(t, syscall.SIGKILL); err == nil {
		t.Fatal("a SIGKILLed runner exited cleanly")
	}
	b.waitJSFor("run-status interrupted", q(runStatusSel+"[data-status=interrupted]"), runnerWait)
	b.waitVisible(resumeSel)

	d.runner(t, "--approval-mode", "off")
	b.click(resumeSel)
	b.waitJSFor("the resumed run to finish", q(runStatusSel+"[data-status=idle]")+" && "+
		qa(itemSel("assistant"))+".some(e => e.textContent.includes('Finished after the interruption.'))", runnerWait)

	if n := b.count(card); n != 1 {
		t.Fatalf("%d run_command cards, want the one call once", n)
	}
	b.waitJS("the interrupted card", q(card+"[data-interrupted=true] [data-testid=tool-status].t-pill-interrupted"))
	if pill := b.text(card + " [data-testid=tool-status]"); pill != "Interrupted" {
		t.Errorf("pill = %q, want Interrupted", pill)
	}
	if note := b.text(card + " [data-testid=tool-interrupted]"); !strings.HasPrefix(note, "The worker stopped") {
		t.Errorf("interrupted note = %q", note)
	}
	if b.count(card+" .tool-error") != 0 {
		t.Errorf("the interrupted call is shown as an error too")
	}
	t.Logf("screenshot: %s", b.screenshot(dir, "runner-interrupted-tool"))
	if got, _ := os.ReadFile(pids); len(strings.Fields(string(got))) != 1 {
		t.Fatalf("the command started %d times, want once", len(strings.Fields(string(got))))
	}

	// After a reload the card reads the same.
	b.navigate("/s/" + sid)
	b.waitJS("the interrupted card after reload", q(card+"[data-interrupted=true] [data-testid=tool-status].t-pill-interrupted"))
}
