package browser

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

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
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

// expandActivityJS opens the "Earlier runs" group and every run in it, so
// the captured text covers every node.
const expandActivityJS = `(async () => {
	const frame = () => new Promise((r) => requestAnimationFrame(() => r()));
	const group = document.querySelector("[data-testid=activity] .act-group-row[aria-expanded=false]");
	if (group) { group.click(); await frame(); }
	for (const row of document.querySelectorAll("[data-testid=activity] [data-type=run] > .act-row[aria-expanded=false]")) row.click();
	await frame();
	return true;
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

// thousands formats n as toLocaleString does in en-US: 1,234.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func TestUIReloadParity(t *testing.T) {
	t.Parallel()
	thinking := demo.Step{Kind: demo.KindReasoning, Text: "First a plan, then the command, then a question.", ChunkSize: 6, ChunkDelayMS: 25}
	s := e2etest.StartServer(t, e2etest.Scenarios(e2etest.Scenario("parity",
		e2etest.Turn(thinking,
			e2etest.Paced("I'll keep a list, run a command and ask you one thing.", 8, 10),
			e2etest.Call("todo", `{"items":[{"content":"Run the command","status":"in_progress"},{"content":"Ask which option","status":"pending"}]}`),
			e2etest.Call("run_command", `{"command":"echo parity"}`)),
		e2etest.Turn(e2etest.Paced("The command printed parity.", 6, 10),
			e2etest.Call("clarify", `{"question":"Which option do you prefer?","choices":["Option A","Option B"]}`)),
		e2etest.Turn(demo.Step{Kind: demo.KindReasoning, Text: "They chose.", ChunkSize: 4, ChunkDelayMS: 25},
			e2etest.Paced("You picked **Option B**. Done.", 6, 10)),
	), e2etest.Scenario("", e2etest.Turn(e2etest.Paced("An answer that is long enough to be worth summarising later on.", 8, 5)))),
		e2etest.WithApprovalMode("manual"))
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

	// What the live view shows of the first run.
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
	runs := s.Runs(t, sid)
	if len(runs) != 1 {
		t.Fatalf("runs = %+v", runs)
	}
	for _, e := range s.Journal(t, runs[0].ID) {
		if e.Type != event.ToolDone {
			continue
		}
		if p := e2etest.Payload[event.ToolDonePayload](t, e); p.Name == "run_command" && (p.WaitMS < 1200 || p.DurationMS >= p.WaitMS) {
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

	// Two more exchanges, then /compact: the meter shows the compacted size.
	for _, m := range []string{"second question", "third question"} {
		b.sendMessage(m)
		b.waitJS("the answer to "+m, qa(itemSel("assistant"))+".length >= 3 && "+q(itemSel("assistant")+"[data-open=true]")+" === null && "+
			qa(itemSel("user"))+".at(-1)?.textContent.includes("+js(m)+")")
		b.waitIdle()
	}
	b.sendMessage("/compact")
	b.waitVisible(itemSel("compaction"))
	b.waitIdle()
	b.waitGone("[data-testid=activity-node][data-state=running]")
	runs = s.Runs(t, sid)
	var after int64 = -1
	for _, e := range s.Journal(t, runs[len(runs)-1].ID) {
		if e.Type == event.ContextCompacted {
			after = e2etest.Payload[event.ContextCompactedPayload](t, e).TokensAfter
		}
	}
	wantCtx := fmt.Sprintf("Context %s of ", thousands(after))
	b.waitJS("the meter to show the compacted size", q("[data-testid=usage]")+".title.includes("+js(wantCtx)+")")

	eval[bool](b, expandActivityJS)
	live = eval[parityView](b, parityViewJS)
	if !strings.Contains(live.Activity, "allowed once by you") || !strings.Contains(live.Activity, "Compact context") {
		t.Errorf("the expanded activity panel lacks the first run or the compaction:\n%s", live.Activity)
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
		eval[bool](b, expandActivityJS)
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
