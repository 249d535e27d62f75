package browser

// Browser acceptance tests of the workbench (issue 4): the full flow, reload
// and reconnect without loss or duplication, stop, and the event-type
// contract between the UI and the server.

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
)

// numberedWords is "w001 w002 … wNNN" (each word 4 runes plus a space).
func numberedWords(n int) string {
	var sb strings.Builder
	for i := 1; i <= n; i++ {
		if i > 1 {
			sb.WriteByte(' ')
		}
		fmt.Fprintf(&sb, "w%03d", i)
	}
	return sb.String()
}

// newSessionUI creates a session with the sidebar's button and returns its
// id (from the URL the app navigates to).
func (b *browser) newSessionUI() string {
	b.t.Helper()
	before := eval[string](b, "location.pathname")
	b.click("[data-testid=new-session]")
	b.waitJS("a new session URL", "location.pathname.startsWith('/s/') && location.pathname !== "+js(before))
	id := b.sessionIDFromURL()
	b.waitSessionLoaded()
	return id
}

// recordConnection starts recording every state the connection indicator
// shows (the element must stay mounted; the shell header keeps it).
func (b *browser) recordConnection() {
	b.t.Helper()
	eval[bool](b, `(() => { const el = document.querySelector("[data-testid=connection]"); window.__conn = [el.dataset.state];
		new MutationObserver(() => { const s = el.dataset.state; if (window.__conn.at(-1) !== s) window.__conn.push(s); })
			.observe(el, { attributes: true, attributeFilter: ["data-state"] }); return true; })()`)
}

// connectionStates are the states seen since recordConnection.
func (b *browser) connectionStates() []string {
	b.t.Helper()
	return eval[[]string](b, "window.__conn || []")
}

// openActivity shows the activity panel if it is hidden.
func (b *browser) openActivity() {
	b.t.Helper()
	if !b.visible("[data-testid=activity]") {
		b.click("[data-testid=activity-toggle]")
	}
	b.waitVisible("[data-testid=activity]")
}

func TestUIFullFlow(t *testing.T) {
	t.Parallel()
	filler := strings.Repeat("Streaming makes the wait visible. ", 12)
	s := e2etest.StartServer(t, e2etest.Scenarios(e2etest.Scenario("full flow",
		e2etest.Turn(e2etest.Reasoning("The person wants the whole flow: a command, then a question."),
			e2etest.Paced("I will run a command first, then ask you something. "+filler, 6, 20),
			e2etest.Call("run_command", `{"command":"echo hello-from-the-browser"}`)),
		e2etest.Turn(e2etest.Text("The command printed hello."),
			e2etest.Call("clarify", `{"question":"Which option do you prefer?","choices":["Option A","Option B"]}`)),
		e2etest.Turn(e2etest.Text("You picked **Option B**. All done.")),
	)), e2etest.WithApprovalMode("manual"))
	b := openBrowser(t, s)

	b.navigate("/")
	sid := b.newSessionUI()
	b.waitJS("connection live", q("[data-testid=connection][data-state=live]"))
	b.recordConnection()
	b.sendMessage("Show me the full flow, please")

	// The user's message, then assistant text streaming into an open item.
	b.waitJS("the user item", qa(itemSel("user"))+".some(e => e.textContent.includes('full flow'))")
	open := itemSel("assistant") + "[data-open=true]"
	b.waitVisible(open)
	// Token by token: the open item grows while it streams.
	n0 := eval[int](b, "("+q(open)+"?.textContent.length ?? 0)")
	b.waitJS("the open item to grow", q(open)+" && "+q(open)+".textContent.length > "+fmt.Sprint(n0))
	b.waitJS("a busy run status", q(runStatusSel)+"?.dataset.status !== 'idle'")
	b.waitVisible("[data-testid=stop]")

	// The command needs approval: tool card and approval card.
	tool := "[data-testid=tool-card][data-tool=run_command]"
	b.waitVisible(tool)
	if l := b.text(tool + " [data-testid=tool-label]"); !strings.Contains(l, "echo hello-from-the-browser") {
		t.Errorf("tool label = %q, want the command", l)
	}
	b.waitVisible("[data-testid=approval-card] button[data-choice=once]")
	b.waitJS("run-status awaiting_approval", q(runStatusSel+"[data-status=awaiting_approval]"))
	var choices []string
	for _, c := range []string{"once", "session", "always", "deny"} {
		if b.count("[data-testid=approval-card] button[data-choice="+c+"]") == 1 {
			choices = append(choices, c)
		}
	}
	if len(choices) != 4 {
		t.Errorf("approval choices = %v, want once, session, always, deny", choices)
	}
	if a := b.text("[data-testid=approval-card]"); !strings.Contains(a, "echo hello-from-the-browser") {
		t.Errorf("approval card does not show the exact command: %q", a)
	}
	b.click("[data-testid=approval-card] button[data-choice=once]")
	b.waitVisible(tool + "[data-status=ok]")
	b.waitJS("the resolved approval card without buttons", qa("[data-testid=approval-card] button[data-choice]")+".length === 0")

	// Then a question: pick a choice.
	b.waitVisible(`[data-testid=clarify-card] button[data-choice="Option B"]`)
	if c := b.text("[data-testid=clarify-card]"); !strings.Contains(c, "Which option do you prefer?") {
		t.Errorf("clarify card = %q, want the question", c)
	}
	b.click(`[data-testid=clarify-card] button[data-choice="Option B"]`)

	// The run completes with the final text.
	b.waitIdle()
	b.waitJS("the final assistant text", qa(itemSel("assistant"))+".at(-1)?.textContent.includes('You picked Option B. All done.')")
	b.waitGone(itemSel("assistant") + "[data-open=true]")
	if got := strings.TrimSpace(b.lastText(itemSel("assistant") + " .md")); got != "You picked Option B. All done." {
		t.Errorf("final assistant text = %q", got)
	}
	if n := b.count("[data-testid=clarify-card] button[data-choice]"); n != 0 {
		t.Errorf("resolved clarify card still has %d choice buttons", n)
	}
	if b.visible("[data-testid=stop]") {
		t.Errorf("stop button still visible after the run completed")
	}
	if n := b.count(itemSel("reasoning")); n != 1 {
		t.Errorf("%d reasoning items, want 1", n)
	}
	if n := b.count("select[data-testid=model-picker] option"); n < 1 {
		t.Errorf("the model picker offers no model")
	}
	if u := b.text("[data-testid=usage]"); !strings.ContainsAny(u, "0123456789") {
		t.Errorf("usage shows no numbers: %q", u)
	}

	// The activity tree: turns, reasoning and tools, all done.
	b.openActivity()
	node := func(typ string) string {
		return "[data-testid=activity] [data-testid=activity-node][data-type=" + typ + "][data-state=done]"
	}
	b.waitJS("3 done turn nodes", qa(node("turn"))+".length >= 3")
	b.waitJS("a done think node", qa(node("think"))+".length >= 1")
	b.waitJS("2 done tool nodes", qa(node("tool"))+".length >= 2")
	if n := b.count("[data-testid=activity-node][data-state=running]"); n != 0 {
		t.Errorf("%d activity nodes still running after the run completed", n)
	}
	if n := b.count("[data-testid=activity-node][data-replay=true]"); n != 0 {
		t.Errorf("%d activity nodes marked as replayed history, but the whole run was watched live", n)
	}

	// No false "connection lost" on a healthy network.
	if states := b.connectionStates(); !slices.Equal(states, []string{"live"}) {
		t.Errorf("connection indicator went through %v during a healthy run, want it to stay live", states)
	}

	// The server saw the same answers.
	var out struct {
		Requests []struct {
			Kind     string `json:"kind"`
			Status   string `json:"status"`
			Response string `json:"response"`
		} `json:"requests"`
	}
	e2etest.Do(t, "GET", s.URL+"/api/requests?session_id="+sid, nil, &out)
	var got []string
	for _, r := range out.Requests {
		got = append(got, r.Kind+":"+r.Status+":"+r.Response)
	}
	want := []string{"approval:resolved:once", "clarify:resolved:Option B"}
	if !slices.Equal(got, want) {
		t.Errorf("requests = %v, want %v", got, want)
	}
	if runs := s.Runs(t, sid); len(runs) != 1 || runs[0].Status != "completed" {
		t.Errorf("runs = %+v, want one completed", runs)
	}
}

// checkWordsExactlyOnce compares the final assistant text with the script.
func checkWordsExactlyOnce(t *testing.T, b *browser, want string) {
	t.Helper()
	if n := b.count(itemSel("assistant")); n != 1 {
		t.Errorf("%d assistant items, want 1", n)
	}
	if n := b.count(itemSel("user")); n != 1 {
		t.Errorf("%d user items, want 1", n)
	}
	got := words(b.lastText(itemSel("assistant") + " .md"))
	w := words(want)
	if slices.Equal(got, w) {
		return
	}
	i := 0
	for i < len(got) && i < len(w) && got[i] == w[i] {
		i++
	}
	ctx := func(ws []string) string { return strings.Join(ws[max(0, i-2):min(len(ws), i+3)], " ") }
	t.Errorf("final text differs: %d words, want %d; first difference at word %d: got %q, want %q", len(got), len(w), i+1, ctx(got), ctx(w))
}

func TestUIReloadMidStream(t *testing.T) {
	t.Parallel()
	long := numberedWords(400)
	// Two words per fragment every 20 ms: about four seconds of streaming.
	s := e2etest.StartServer(t, e2etest.Scenarios(e2etest.Scenario("stream", e2etest.Turn(e2etest.Paced(long, 10, 20)))))
	b := openBrowser(t, s)
	sid := s.NewSession(t)
	b.navigate("/s/" + sid)
	b.sendMessage("stream the numbers")
	b.waitJS("streaming to pass w040", qa(itemSel("assistant")+"[data-open=true]")+".some(e => e.textContent.includes('w040'))")

	b.must("reload", chromedp.Reload())
	b.waitMounted()
	b.waitSessionLoaded()
	// Still streaming after the reload: the resumed stream must join the
	// snapshot without a seam.
	if ok, _ := evalJS[bool](b, "!!"+q(itemSel("assistant")+"[data-open=true]")); !ok {
		t.Logf("note: the stream had ended before the page came back; the check covers the snapshot only")
	}
	b.waitJSFor("the run to finish", q(runStatusSel+"[data-status=idle]")+" && "+qa(itemSel("assistant"))+".at(-1)?.textContent.includes('w400') && !"+q(itemSel("assistant")+"[data-open=true]"), 30*time.Second)
	checkWordsExactlyOnce(t, b, long)
	b.openActivity()
	t.Logf("activity after the reload: %v", eval[[]string](b, qa("[data-testid=activity-node]")+".map(e => e.dataset.type + ':' + e.dataset.state + ':replay=' + e.dataset.replay)"))
	// One stream per tab, no reconnect churn on a healthy network.
	if n := eval[int](b, "window.caduceus.stats().streamOpens"); n != 1 {
		t.Errorf("the page opened its event stream %d times, want 1", n)
	}
}

// TestUIReconnectAfterDrop cuts the tab's connections mid-stream (through a
// proxy that resets them and refuses new ones for a while) and checks the
// view resumes from its cursor: every token exactly once. Chromium's
// offline emulation does not break an open EventSource, so it cannot stand
// in for a network drop here.
func TestUIReconnectAfterDrop(t *testing.T) {
	t.Parallel()
	long := numberedWords(400)
	s := e2etest.StartServer(t, e2etest.Scenarios(e2etest.Scenario("stream", e2etest.Turn(e2etest.Paced(long, 10, 20)))))
	p := newDropProxy(t, s.URL)
	b := openBrowser(t, s)
	b.base = p.URL
	sid := s.NewSession(t)
	b.navigate("/s/" + sid)
	b.waitJS("connection live", q("[data-testid=connection][data-state=live]"))
	b.sendMessage("stream the numbers")
	b.waitJS("streaming to pass w040", qa(itemSel("assistant")+"[data-open=true]")+".some(e => e.textContent.includes('w040'))")

	b.recordConnection()
	before := len(b.consoleMatching("/api/events"))
	p.drop(1500 * time.Millisecond) // the server keeps streaming meanwhile
	// Chromium logs the broken stream (ERR_CONNECTION_RESET) in the console.
	waitAPI(t, "the page to notice the drop", func() bool {
		return len(b.consoleMatching("/api/events")) > before
	})
	b.waitJSFor("the run to finish", q(runStatusSel+"[data-status=idle]")+" && "+qa(itemSel("assistant"))+".at(-1)?.textContent.includes('w400') && !"+q(itemSel("assistant")+"[data-open=true]"), 30*time.Second)
	b.waitJS("connection live again", q("[data-testid=connection][data-state=live]"))
	t.Logf("connection indicator states after the drop: %v", b.connectionStates())
	checkWordsExactlyOnce(t, b, long)
	if p.drops() == 0 {
		t.Errorf("the proxy cut no connection: the test did not exercise a drop")
	}
}

func TestUIStop(t *testing.T) {
	t.Parallel()
	sc := e2etest.Scenarios(
		e2etest.Scenario("wait for me", e2etest.Turn(e2etest.Text("Starting a long job."), e2etest.Delay(30000), e2etest.Text("never shown"))),
		e2etest.Scenario("stream slowly", e2etest.Turn(e2etest.SlowText(400, 30))),
		e2etest.Scenario("after stop", e2etest.Turn(e2etest.Text("Back to work."))),
	)
	for _, tc := range []struct{ name, message string }{
		{"button", "wait for me"},   // cancelled while waiting in a delay step
		{"escape", "stream slowly"}, // cancelled mid-stream, with Esc in the composer
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := e2etest.StartServer(t, sc)
			b := openBrowser(t, s)
			sid := s.NewSession(t)
			b.navigate("/s/" + sid)
			b.sendMessage(tc.message)
			b.waitJS("run-status running", q(runStatusSel+"[data-status=running]"))
			b.waitVisible("[data-testid=stop]")
			if tc.name == "button" {
				b.waitJS("the first text", qa(itemSel("assistant"))+".some(e => e.textContent.includes('Starting a long job.'))")
				b.click("[data-testid=stop]")
			} else {
				b.waitVisible(itemSel("assistant") + "[data-open=true]")
				b.must("focus the composer", chromedp.Focus(chromedp.CSS(composerSel)))
				b.press("Escape")
			}
			b.waitVisible("[data-testid=run-end][data-status=cancelled]")
			b.waitIdle()
			b.waitGone("[data-testid=stop]")
			b.waitJS("the composer enabled", q(composerSel)+" && !"+q(composerSel)+".disabled && !"+q(composerSel)+".readOnly")
			if n := b.count(itemSel("assistant") + "[data-open=true]"); n != 0 {
				t.Errorf("%d assistant items still open after cancel", n)
			}

			// The composer works again.
			b.sendMessage("after stop")
			b.waitJS("the next answer", qa(itemSel("assistant"))+".at(-1)?.textContent.includes('Back to work.')")
			b.waitIdle()
			if n := b.count(itemSel("run_end")); n != 1 {
				t.Errorf("%d run_end items, want 1", n)
			}
			if n := b.count("[data-testid=run-end][data-status=cancelled]"); n != 1 {
				t.Errorf("%d cancelled run-end markers, want 1", n)
			}
			if b.text("[data-testid=run-end]") == "" {
				t.Errorf("run-end marker has no text")
			}
			var statuses []string
			for _, r := range s.Runs(t, sid) {
				statuses = append(statuses, r.Status)
			}
			if !slices.Equal(statuses, []string{"cancelled", "completed"}) {
				t.Errorf("run statuses = %v, want [cancelled completed]", statuses)
			}
			// In the activity feed the stopped run is neither done (green)
			// nor failed (red).
			b.openActivity()
			b.click(".act-group-row") // earlier runs are folded
			b.waitJS("the activity feed's runs", qa("[data-testid=activity-node][data-type=run]")+".length === 2")
			if got := eval[[]string](b, qa("[data-testid=activity-node][data-type=run]")+".map(e => e.dataset.state)"); !slices.Equal(got, []string{"cancelled", "done"}) {
				t.Errorf("activity run states = %v, want [cancelled done]", got)
			}
		})
	}
}

func TestUIContractEventTypes(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("hi"))))
	b := openBrowser(t, s)
	b.navigate("/")
	b.waitJS("window.caduceus.handledEventTypes", "typeof window.caduceus?.handledEventTypes === 'function'")
	got := eval[[]string](b, "window.caduceus.handledEventTypes()")
	slices.Sort(got)
	var want []string
	for _, info := range event.Catalog() {
		want = append(want, string(info.Type))
	}
	slices.Sort(want)
	var missing, extra []string
	for _, w := range want {
		if !slices.Contains(got, w) {
			missing = append(missing, w)
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			extra = append(extra, g)
		}
	}
	if len(missing) > 0 || len(extra) > 0 || len(got) != len(want) {
		t.Errorf("UI handles %d event types, the server emits %d\n  not handled by the UI: %v\n  handled but never emitted: %v", len(got), len(want), missing, extra)
	}
	if v := eval[string](b, "String(window.caduceus.version ?? '')"); v == "" {
		t.Errorf("window.caduceus.version is empty")
	}
}
