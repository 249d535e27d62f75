package e2e

// Issue 11: a reload shows exactly what the live view showed. The live view
// reduces events in the browser; a reload folds the journal on the server
// (GET .../messages). Both must give the same durations, approval outcomes,
// todo list and context meter.

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
)

// parityView is the text a person reads: transcript, activity panel (with
// the todo list) and the context meter with its detail.
type parityView struct {
	Transcript string `json:"transcript"`
	Activity   string `json:"activity"`
	Todos      string `json:"todos"`
	Usage      string `json:"usage"`
	UsageTitle string `json:"usage_title"`
}

const parityViewJS = `(() => {
	const text = (sel) => document.querySelector(sel)?.innerText ?? "";
	return {
		transcript: text("[data-testid=transcript]"),
		activity: text("[data-testid=activity]"),
		todos: text("[data-testid=todos]"),
		usage: text("[data-testid=usage]"),
		usage_title: document.querySelector("[data-testid=usage]")?.title ?? "",
	};
})()`

func (v parityView) diff(o parityView) []string {
	var out []string
	cmp := func(name, a, b string) {
		if a == b {
			return
		}
		al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
		for i := 0; i < max(len(al), len(bl)); i++ {
			var x, y string
			if i < len(al) {
				x = al[i]
			}
			if i < len(bl) {
				y = bl[i]
			}
			if x != y {
				out = append(out, fmt.Sprintf("%s line %d: live %q, after reload %q", name, i+1, x, y))
				return
			}
		}
	}
	cmp("transcript", v.Transcript, o.Transcript)
	cmp("activity", v.Activity, o.Activity)
	cmp("todos", v.Todos, o.Todos)
	cmp("usage", v.Usage, o.Usage)
	cmp("usage title", v.UsageTitle, o.UsageTitle)
	return out
}

func TestUIReloadParity(t *testing.T) {
	t.Parallel()
	thinking := demo.Step{Kind: demo.KindReasoning, Text: "First a plan, then the command, then a question.", ChunkSize: 6, ChunkDelayMS: 25}
	s := startServer(t, scenarios(scenario("parity",
		turn(thinking,
			paced("I'll keep a list, run a command and ask you one thing.", 8, 10),
			call("todo", `{"items":[{"content":"Run the command","status":"in_progress"},{"content":"Ask which option","status":"pending"}]}`),
			call("run_command", `{"command":"echo parity"}`)),
		turn(paced("The command printed parity.", 6, 10),
			call("clarify", `{"question":"Which option do you prefer?","choices":["Option A","Option B"]}`)),
		turn(demo.Step{Kind: demo.KindReasoning, Text: "They chose.", ChunkSize: 4, ChunkDelayMS: 25},
			paced("You picked **Option B**. Done.", 6, 10)),
	)), withApprovalMode("manual"))
	b := openBrowser(t, s)

	b.navigate("/")
	sid := b.newSessionUI()
	b.openActivity()
	b.sendMessage("Show me parity, please")

	// Approve through the card after a noticeable wait, then answer.
	b.waitVisible("[data-testid=approval-card] button[data-choice=once]")
	time.Sleep(1200 * time.Millisecond)
	b.click("[data-testid=approval-card] button[data-choice=once]")
	b.waitVisible(`[data-testid=clarify-card] button[data-choice="Option B"]`)
	b.click(`[data-testid=clarify-card] button[data-choice="Option B"]`)
	b.waitIdle()
	b.waitJS("the final answer", qa(itemSel("assistant"))+".at(-1)?.textContent.includes('Done.')")
	b.waitGone("[data-testid=activity-node][data-state=running]")

	live := eval[parityView](b, parityViewJS)

	// What the live view shows, before comparing it with the reload.
	cmd := "[data-testid=tool-card][data-tool=run_command]"
	// At least the 1.2s before the click; more on a busy machine.
	if a := b.text(cmd + " [data-testid=tool-approval]"); !regexp.MustCompile(`^Allowed once by you · waited (\d\.\d|\d\d)s for approval$`).MatchString(a) {
		t.Errorf("command's approval line = %q, want the outcome and the wait of over a second", a)
	}
	if a := b.text("[data-testid=tool-card][data-tool=clarify] [data-testid=tool-approval]"); !strings.HasPrefix(a, "Waited ") || !strings.HasSuffix(a, " for an answer") {
		t.Errorf("clarify's wait line = %q", a)
	}
	if n := eval[int](b, qa("[data-testid=activity-approval]")+".filter(e => e.textContent.startsWith('allowed once by you')).length"); n != 1 {
		t.Errorf("%d activity nodes say 'allowed once by you', want the command's", n)
	}
	// The command's own time leaves the wait out; the journal says so too.
	runs := s.runs(t, sid)
	if len(runs) != 1 {
		t.Fatalf("runs = %+v", runs)
	}
	for _, e := range s.journal(t, runs[0].ID) {
		if e.Type != event.ToolDone {
			continue
		}
		if p := payload[event.ToolDonePayload](t, e); p.Name == "run_command" && (p.WaitMS < 1200 || p.DurationMS >= p.WaitMS) {
			t.Errorf("run_command's tool.done: duration_ms %d, wait_ms %d; want the 1.2s+ wait apart", p.DurationMS, p.WaitMS)
		}
	}
	if n := eval[int](b, qa(itemSel("reasoning"))+".filter(e => /Thought for \\d/.test(e.innerText)).length"); n != 2 {
		t.Errorf("%d reasoning items say how long they thought, want 2:\n%s", n, live.Transcript)
	}
	if n := eval[int](b, qa("[data-testid=activity-node][data-type=turn] > .act-row .act-dur")+".length"); n != 3 {
		t.Errorf("%d turn nodes show a duration, want 3:\n%s", n, live.Activity)
	}
	if !strings.Contains(live.Todos, "Run the command") || !strings.Contains(live.Todos, "Ask which option") {
		t.Errorf("todo panel = %q", live.Todos)
	}
	if !strings.Contains(live.Usage, "% ctx") {
		t.Errorf("context meter = %q, want a context share", live.Usage)
	}

	b.must("reload", chromedp.Reload())
	b.waitMounted()
	b.waitSessionLoaded()
	b.openActivity()
	// The snapshot renders in one go; give it a moment to settle, then
	// compare.
	deadline := time.Now().Add(waitTimeout)
	var reloaded parityView
	for {
		reloaded = eval[parityView](b, parityViewJS)
		if reloaded == live || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, d := range live.diff(reloaded) {
		t.Error(d)
	}
	if t.Failed() {
		t.Logf("live:\n%+v\nafter reload:\n%+v", live, reloaded)
	}
	if n := b.count("[data-testid=activity-node][data-replay=true]"); n == 0 {
		t.Errorf("after the reload the activity tree is not the snapshot's (no replayed nodes)")
	}

	dir := screenshotDir(t)
	for _, size := range [][2]int64{{1280, 800}, {375, 812}} {
		b.must("viewport", chromedp.EmulateViewport(size[0], size[1]))
		for _, scheme := range []string{"light", "dark"} {
			b.setColorScheme(scheme)
			b.frames(2)
			t.Logf("screenshot: %s", b.screenshot(dir, fmt.Sprintf("parity-%d-%s", size[0], scheme)))
		}
	}
}
