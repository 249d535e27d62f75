package browser

// The operator's console (issue 16, h16-ops): a scripted background
// process appears in Settings → Processes with its live output and is
// killed from there (really: its pid is gone); Settings → Logs shows a line
// the server logged and filters by level and text; a run's journal viewer
// shows its raw events.

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

func TestUIOperatorsConsole(t *testing.T) {
	t.Parallel()
	const cmd = `echo ops-started; i=0; while true; do echo tick-$i; i=$((i+1)); sleep 0.2; done`
	s := authServer(t, e2etest.Scenarios(e2etest.Scenario("",
		e2etest.Turn(e2etest.Call("run_command", `{"command":`+strconv.Quote(cmd)+`,"background":true}`)),
		e2etest.Turn(e2etest.Text("started it")))),
		e2etest.WithApprovalMode("off"))
	dir := screenshotDir(t)

	b := openBrowser(t, s)
	b.signIn("ada", adminPW)
	b.sendMessage("start the ticker")
	b.waitIdle()
	session := "/s/" + b.sessionIDFromURL()

	// Processes: the process, running, with its live output.
	b.click("[data-testid=open-settings]")
	b.click("[data-testid=settings-nav-processes]")
	row := "[data-testid=process-row][data-status=running]"
	b.waitVisible(row)
	if n := b.count("[data-testid=process-row]"); n != 1 {
		t.Fatalf("%d processes listed, want 1", n)
	}
	pid, err := strconv.Atoi(b.attr(row, "data-pid"))
	if err != nil || pid <= 1 || !alive(pid) {
		t.Fatalf("listed pid %q (%v) does not run", b.attr(row, "data-pid"), err)
	}
	if got := b.text(row + " .proc-cmd code"); got != cmd {
		t.Errorf("command shown %q", got)
	}
	b.click(row + " [data-testid=process-output-toggle]")
	b.waitJS("the first output", q("[data-testid=process-output]")+".textContent.includes('ops-started')")
	// Live: lines the process writes after the tail opened arrive.
	first := b.text("[data-testid=process-output]")
	n := strings.Count(first, "tick-")
	b.waitJS("more output, live", q("[data-testid=process-output]")+".textContent.includes('tick-"+strconv.Itoa(n+3)+"')")

	for _, w := range []struct {
		name string
		w, h int
	}{{"desktop", 1280, 800}, {"phone", 375, 812}} {
		sb := openBrowser(t, s, withWindow(w.w, w.h))
		sb.signIn("ada", adminPW)
		for _, scheme := range []string{"light", "dark"} {
			sb.setColorScheme(scheme)
			sb.must("open processes", chromedp.Navigate(s.URL+"/#settings/processes"))
			sb.waitMounted()
			sb.waitVisible(row)
			if sb.count("[data-testid=process-output]") == 0 {
				sb.click(row + " [data-testid=process-output-toggle]")
			}
			sb.waitJS("output", q("[data-testid=process-output]")+".textContent.includes('tick-')")
			sb.frames(3)
			t.Logf("screenshot: %s", sb.screenshot(dir, "processes-"+w.name+"-"+scheme))
			if sw := eval[[]int](sb, "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"); sw[0] > sw[1] {
				t.Errorf("processes %s %s: the page scrolls sideways (%d px in %d)", w.name, scheme, sw[0], sw[1])
			}
		}
	}

	// A viewer sees the process but may not kill it, and is not offered
	// the server's log.
	v := openBrowser(t, s)
	v.signIn("vera", viewerPW)
	v.must("open processes", chromedp.Navigate(s.URL+"/#settings/processes"))
	v.waitMounted()
	v.waitVisible(row)
	if n := v.count("[data-testid=process-kill]") + v.count("[data-testid=settings-nav-logs]"); n != 0 {
		t.Errorf("a viewer is offered a kill or the logs (%d elements)", n)
	}

	// Kill, after a confirmation: the row says killed and the pid is gone.
	b.click(row + " [data-testid=process-kill]")
	b.click("[data-testid=confirm-kill]")
	b.waitVisible("[data-testid=process-row][data-status=killed]")
	b.waitJS("the tail to say it ended", q("[data-testid=process-tail]")+".dataset.state === 'ended'")
	if alive(pid) {
		t.Errorf("pid %d still runs after the kill", pid)
	}
	if got := b.text("[data-testid=process-exit]"); !strings.HasPrefix(got, "exit ") {
		t.Errorf("exit shown %q", got)
	}

	// Logs: the kill the server logged, then the level and text filters.
	b.click("[data-testid=settings-nav-logs]")
	line := "[data-testid=log-line]"
	b.waitJS("the kill's log line", qa(line)+".some(e => e.textContent.includes('process killed from the console'))")
	if n := eval[int](b, qa(line+"[data-level=INFO]")+".length"); n == 0 {
		t.Fatal("no INFO line at level info")
	}
	chooseLevel(b, "warn")
	b.waitJS("INFO lines gone at level warn", qa(line+"[data-level=INFO]")+".length === 0")
	chooseLevel(b, "info")
	b.typeInto("[data-testid=logs-search]", "killed from the console")
	b.waitJS("only matching lines", qa(line)+".length > 0 && "+qa(line)+".every(e => e.textContent.includes('killed from the console'))")
	for _, w := range []struct {
		name string
		w, h int
	}{{"desktop", 1280, 800}, {"phone", 375, 812}} {
		sb := openBrowser(t, s, withWindow(w.w, w.h))
		sb.signIn("ada", adminPW)
		for _, scheme := range []string{"light", "dark"} {
			sb.setColorScheme(scheme)
			sb.must("open logs", chromedp.Navigate(s.URL+"/#settings/logs"))
			sb.waitMounted()
			sb.waitVisible(line)
			sb.frames(3)
			t.Logf("screenshot: %s", sb.screenshot(dir, "logs-"+w.name+"-"+scheme))
			if sw := eval[[]int](sb, "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"); sw[0] > sw[1] {
				t.Errorf("logs %s %s: the page scrolls sideways (%d px in %d)", w.name, scheme, sw[0], sw[1])
			}
		}
	}

	// The journal viewer, from the run's end line: its raw events.
	b.navigate(session)
	b.click(itemSel("assistant") + " [data-testid=view-journal]")
	b.waitVisible("[data-testid=journal-dialog] [data-testid=journal-event][data-type='run.started']")
	ev := "[data-testid=journal-event][data-type='tool.started']"
	b.waitVisible(ev)
	b.click(ev + " summary")
	if got := b.text(ev + " [data-testid=journal-payload]"); !strings.Contains(got, "ops-started") {
		t.Errorf("tool.started payload %q does not hold the command", got)
	}
	if n := b.count("[data-testid=journal-event][data-type='run.done']"); n != 1 {
		t.Errorf("%d run.done events, want 1", n)
	}
	for _, w := range []struct {
		name string
		w, h int
	}{{"desktop", 1280, 800}, {"phone", 375, 812}} {
		sb := openBrowser(t, s, withWindow(w.w, w.h))
		sb.signIn("ada", adminPW)
		for _, scheme := range []string{"light", "dark"} {
			sb.setColorScheme(scheme)
			sb.navigate(session)
			if sb.count("[data-testid=journal-dialog]") == 0 {
				sb.click(itemSel("assistant") + " [data-testid=view-journal]")
			}
			sb.waitVisible(ev)
			if !eval[bool](sb, q(ev+" details")+".open") {
				sb.click(ev + " summary")
			}
			sb.frames(3)
			t.Logf("screenshot: %s", sb.screenshot(dir, "journal-"+w.name+"-"+scheme))
		}
	}
}

// alive reports whether pid runs (a zombie does not).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && i+2 < len(b) && b[i+2] != 'Z' && b[i+2] != 'X'
}

// chooseLevel picks a level in the Logs section's select, as a person's
// choice would (a change event).
func chooseLevel(b *browser, level string) {
	b.t.Helper()
	eval[bool](b, "(() => { const s = "+q("[data-testid=logs-level]")+"; s.value = "+js(level)+"; return s.dispatchEvent(new Event('change', {bubbles: true})); })()")
}
