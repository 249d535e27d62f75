package browser

// The composer and the transcript's scrolling: queued messages, slash
// commands, and the sticky-bottom scroll with its "↓ N new" pill.

import (
	"fmt"

	"github.com/chromedp/chromedp"
	"slices"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

func TestUIQueue(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Scenarios(
		// The first run waits on a question, so the queue stays put for as
		// long as the test needs.
		e2etest.Scenario("hold on", e2etest.Turn(e2etest.Call("clarify", `{"question":"Shall I continue?","choices":["Yes","No"]}`)), e2etest.Turn(e2etest.Text("First done."))),
		e2etest.Scenario("second queued", e2etest.Turn(e2etest.Text("Second answer."))),
		e2etest.Scenario("third queued", e2etest.Turn(e2etest.Text("Third answer."))),
	))
	b := openBrowser(t, s)
	sid := s.NewSession(t)
	b.navigate("/s/" + sid)
	b.sendMessage("hold on")
	b.waitVisible("[data-testid=clarify-card] [data-testid=clarify-input]")

	b.sendMessage("second queued")
	b.sendMessage("third queued")
	b.waitJS("two queued rows", qa("[data-testid=queued-item]")+".length === 2")
	rows := eval[[]map[string]string](b, qa("[data-testid=queued-item]")+".map(e => ({id: e.dataset.runId, text: e.textContent}))")
	var second, third string
	for _, r := range rows {
		switch {
		case strings.Contains(r["text"], "second queued"):
			second = r["id"]
		case strings.Contains(r["text"], "third queued"):
			third = r["id"]
		}
	}
	if second == "" || third == "" {
		t.Fatalf("queued rows = %v, want one per message with its run id", rows)
	}
	if rows[0]["id"] != second {
		t.Errorf("queued rows out of order: %v", rows)
	}
	if n := b.count(itemSel("user")); n != 1 {
		t.Errorf("%d user items in the transcript while two messages are queued, want 1 (queued ones show above the composer)", n)
	}

	b.click("[data-testid=queued-item][data-run-id=" + second + "] [data-testid=queued-remove]")
	b.waitJS("one queued row", qa("[data-testid=queued-item]")+".length === 1")
	if got := b.attr("[data-testid=queued-item]", "data-run-id"); got != third {
		t.Errorf("remaining queued row is %s, want %s", got, third)
	}
	s.WaitStatus(t, second, "cancelled")

	// A free-text answer lets the first run finish; the third follows.
	b.typeInto("[data-testid=clarify-input]", "Yes, go on")
	b.click("[data-testid=clarify-submit]")
	b.waitJS("the third answer", qa(itemSel("assistant"))+".some(e => e.textContent.includes('Third answer.'))")
	b.waitIdle()
	b.waitJS("no queued rows", qa("[data-testid=queued-item]")+".length === 0")
	if body := b.text("[data-testid=transcript]"); strings.Contains(body, "Second answer.") {
		t.Errorf("the removed message was answered")
	}
	texts := eval[[]string](b, qa(itemSel("assistant"))+".map(e => e.textContent.trim())")
	if i, j := slices.IndexFunc(texts, func(s string) bool { return strings.Contains(s, "First done.") }),
		slices.IndexFunc(texts, func(s string) bool { return strings.Contains(s, "Third answer.") }); i < 0 || j < i {
		t.Errorf("assistant items = %q, want First done. before Third answer.", texts)
	}

	runs := s.Runs(t, sid)
	var statuses []string
	for _, r := range runs {
		statuses = append(statuses, r.Status)
	}
	if !slices.Equal(statuses, []string{"completed", "cancelled", "completed"}) {
		t.Fatalf("run statuses = %v, want [completed cancelled completed]", statuses)
	}
	var req struct {
		Requests []e2etest.RequestJSON `json:"requests"`
	}
	e2etest.Do(t, "GET", s.URL+"/api/requests?session_id="+sid, nil, &req)
	if len(req.Requests) != 1 {
		t.Fatalf("requests = %+v", req.Requests)
	}
	var full struct {
		Response string `json:"response"`
	}
	e2etest.Do(t, "GET", s.URL+"/api/requests/"+req.Requests[0].ID, nil, &full)
	if full.Response != "Yes, go on" {
		t.Errorf("clarify response = %q, want the free text", full.Response)
	}
}

func TestUISlashCommands(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("hi"))))
	b := openBrowser(t, s)
	sid := s.NewSession(t)
	b.navigate("/s/" + sid)

	b.typeInto(composerSel, "/")
	b.waitVisible("[data-testid=slash-menu]")
	for _, c := range []string{"new", "stop", "model", "help"} {
		if n := b.count("[data-testid=slash-menu] [data-testid=slash-item][data-command=" + c + "]"); n != 1 {
			t.Errorf("slash menu: %d items for /%s, want 1", n, c)
		}
	}
	// Typing narrows the menu.
	b.typeInto(composerSel, "he")
	b.waitJS("the menu narrowed to /help", qa("[data-testid=slash-item]")+".filter(e => e.getClientRects().length > 0).map(e => e.dataset.command).join() === 'help'")
	b.clearInput(composerSel)
	b.waitGone("[data-testid=slash-menu]")

	// /help shows help (the commands and what they do) and sends nothing.
	b.typeInto(composerSel, "/help")
	b.press("Enter")
	b.waitJS("help text listing the commands", `(() => {
		const menu = document.querySelector("[data-testid=slash-menu]");
		const t = document.body.innerText;
		return (!menu || menu.getClientRects().length === 0) && t.includes("/stop") && t.includes("/model") && t.includes("/new");
	})()`)

	// An unknown command is an error, not a message.
	b.clearInput(composerSel)
	b.typeInto(composerSel, "/nope")
	b.press("Enter")
	b.waitVisible("[data-testid=composer-error]")
	if e := b.text("[data-testid=composer-error]"); !strings.Contains(e, "/nope") {
		t.Errorf("composer error = %q, want it to name /nope", e)
	}

	// Shift+Enter is a new line, Enter sends both lines as one message.
	b.clearInput(composerSel)
	b.waitGone("[data-testid=composer-error]")
	b.typeInto(composerSel, "first line")
	b.pressTyping("Enter", "\r", chromedp.ModifierShift)
	b.typeInto(composerSel, "second line")
	if v := eval[string](b, q(composerSel)+".value"); v != "first line\nsecond line" {
		t.Errorf("composer after Shift+Enter = %q, want two lines", v)
	}
	b.press("Enter")
	b.waitJS("the two-line message", qa(itemSel("user"))+".some(e => e.textContent.includes('second line'))")
	b.waitIdle()
	if runs := s.Runs(t, sid); len(runs) != 1 || runs[0].Status != "completed" {
		t.Errorf("runs after sending = %+v, want one completed (slash commands send nothing)", runs)
	} else {
		var r struct {
			Input string `json:"input"`
		}
		e2etest.Do(t, "GET", s.URL+"/api/runs/"+runs[0].ID, nil, &r)
		if r.Input != "first line\nsecond line" {
			t.Errorf("sent message = %q, want both lines", r.Input)
		}
	}

	// /new opens a new session.
	b.typeInto(composerSel, "/new")
	b.press("Enter")
	b.waitJS("a new session", "location.pathname.startsWith('/s/') && location.pathname !== "+js("/s/"+sid))
	if n := len(s.Sessions(t)); n != 2 {
		t.Errorf("%d sessions after /new, want 2", n)
	}
	if runs := s.Runs(t, sid); len(runs) != 1 {
		t.Errorf("%d runs in the first session, want 1 (slash commands send nothing)", len(runs))
	}
}

func TestUIStickyScroll(t *testing.T) {
	t.Parallel()
	var long strings.Builder
	for i := 1; i <= 60; i++ {
		fmt.Fprintf(&long, "Paragraph %d of a long answer, long enough to wrap once or twice in a normal window so that the transcript needs scrolling.\n\n", i)
	}
	s := e2etest.StartServer(t, e2etest.Scenarios(
		e2etest.Scenario("long answer", e2etest.Turn(e2etest.Paced(long.String(), 400, 0))),
		e2etest.Scenario("more please", e2etest.Turn(e2etest.Paced(numberedWords(150), 10, 30))),
	))
	sid := s.NewSession(t)
	r := s.Send(t, sid, "long answer please")
	s.WaitStatus(t, r.ID, "completed")

	b := openBrowser(t, s)
	b.navigate("/s/" + sid)
	tr := q("[data-testid=transcript]")
	b.waitJS("the long answer", qa(itemSel("assistant"))+".some(e => e.textContent.includes('Paragraph 60'))")
	b.waitJS("the transcript to scroll", tr+".scrollHeight > "+tr+".clientHeight * 2")
	b.waitJS("the view at the bottom on open", tr+".scrollHeight - "+tr+".scrollTop - "+tr+".clientHeight < 4")
	// The run finished before the page opened: the activity feed shows it
	// as replayed history.
	b.openActivity()
	b.waitJS("the earlier run in the activity feed", q("[data-testid=activity-node][data-type=run]"))
	if n := b.count("[data-testid=activity-node][data-replay=false]"); n != 0 {
		t.Errorf("%d activity nodes of a run loaded from history are not marked data-replay=true: %v", n,
			eval[[]string](b, qa("[data-testid=activity-node]")+".map(e => e.dataset.type + ':replay=' + e.dataset.replay)"))
	}

	// The person scrolls up to read.
	eval[any](b, tr+".scrollTop = Math.floor(("+tr+".scrollHeight - "+tr+".clientHeight) / 2)")
	b.frames(3) // the scroll event lands before new content does
	top := eval[float64](b, tr+".scrollTop")

	r2 := s.Send(t, sid, "more please")
	b.waitVisible("[data-testid=new-pill]")
	if p := b.text("[data-testid=new-pill]"); !strings.Contains(strings.ToLower(p), "new") {
		t.Errorf("new-pill text = %q, want it to say new", p)
	}
	b.waitJS("streaming to add text below", qa(itemSel("assistant")+"[data-open=true]")+".some(e => e.textContent.includes('w050'))")
	if now := eval[float64](b, tr+".scrollTop"); now < top-2 || now > top+2 {
		t.Errorf("the view moved while the person read: scrollTop %.0f -> %.0f", top, now)
	}
	b.click("[data-testid=new-pill]")
	b.waitJS("the view at the bottom", tr+".scrollHeight - "+tr+".scrollTop - "+tr+".clientHeight < 4")
	b.waitGone("[data-testid=new-pill]")
	// And it stays stuck to the bottom while the stream goes on.
	s.WaitStatus(t, r2.ID, "completed")
	b.waitJS("the end of the stream", qa(itemSel("assistant"))+".at(-1)?.textContent.includes('w150')")
	b.waitJS("still at the bottom", tr+".scrollHeight - "+tr+".scrollTop - "+tr+".clientHeight < 4")
	if b.visible("[data-testid=new-pill]") {
		t.Errorf("new-pill shown while stuck to the bottom")
	}
}
