package browser

// Budgets and health (issue 16, h16-budgets): a run that reaches its
// session's 500-token budget pauses; the transcript says why and offers
// to raise the limit (at double) or stop; the session needs a person;
// resumed with 5,000 the run completes. The Budgets section of Settings
// shows the day's spending and the limits.

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
)

// setNumber sets a number field as typing would end up (a number input
// has no selection to type over) and tells the page.
func setNumber(b *browser, sel, v string) {
	b.t.Helper()
	b.waitVisible(sel)
	eval[chromedp.Void](b, "(() => { const e = "+q(sel)+"; e.value = "+js(v)+"; e.dispatchEvent(new Event('input', {bubbles: true})); })()")
}

func TestUIBudgetPauseAndResume(t *testing.T) {
	t.Parallel()
	use := func(in, out int64) demo.Step {
		return demo.Step{Kind: demo.KindUsage, InputTokens: in, OutputTokens: out}
	}
	s := e2etest.StartServer(t, e2etest.Scenarios(e2etest.Scenario("",
		e2etest.Turn(e2etest.Call("run_command", `{"command":"echo one"}`), use(300, 12)),
		e2etest.Turn(e2etest.Call("run_command", `{"command":"echo two"}`), use(200, 12)),
		e2etest.Turn(e2etest.Text("All done within budget."), use(250, 5)),
	)), e2etest.WithApprovalMode("off"))
	dir := screenshotDir(t)
	sid := s.NewSession(t)
	if c := e2etest.Do(t, "PUT", s.URL+"/api/budgets", map[string]any{"scope": "session", "target": sid,
		"limits": map[string]any{"max_tokens": 500}}, nil); c != http.StatusOK {
		t.Fatalf("set the session's budget: %d", c)
	}
	if c := e2etest.Do(t, "PUT", s.URL+"/api/budgets", map[string]any{"scope": "day",
		"limits": map[string]any{"max_tokens": 1000000, "max_cost_usd": 5}}, nil); c != http.StatusOK {
		t.Fatalf("set the day's budget: %d", c)
	}
	b := openBrowser(t, s)
	b.navigate("/s/" + sid)
	b.sendMessage("work through the list")
	b.waitVisible("[data-testid=paused-bar][data-code=budget_exceeded]")
	if got := b.text("[data-testid=paused-reason]"); got != "token budget of this session of 500 reached: 524 used" {
		t.Errorf("paused reason %q", got)
	}
	if got := eval[string](b, q("[data-testid=paused-limit]")+".value"); got != "1000" {
		t.Errorf("raised limit offered %q, want 1000 (double)", got)
	}
	b.waitJS("the header to say paused", q("[data-testid=run-status]")+".dataset.status === 'paused'")
	b.waitVisible("[data-testid=session-needs-you]")
	b.waitJS("the bell to count the paused session", q("[data-testid=needs-you]")+".dataset.count === '1'")

	// Screenshots of the paused run: desktop and phone, light and dark.
	for _, w := range []struct {
		name string
		w, h int
	}{{"desktop", 1280, 800}, {"phone", 375, 812}} {
		for _, scheme := range []string{"light", "dark"} {
			p := openBrowser(t, s, withWindow(w.w, w.h))
			p.setColorScheme(scheme)
			p.navigate("/s/" + sid)
			p.waitVisible("[data-testid=paused-bar]")
			eval[chromedp.Void](p, q("[data-testid=paused-bar]")+".scrollIntoView({block: 'center'})")
			shootGoals(t, p, dir, "budget-paused-"+w.name+"-"+scheme)
		}
	}

	// A limit no higher than the one reached is refused in place.
	setNumber(b, "[data-testid=paused-limit]", "400")
	b.click("[data-testid=resume-run]")
	b.waitVisible("[data-testid=paused-error]")

	setNumber(b, "[data-testid=paused-limit]", "5000")
	b.click("[data-testid=resume-run]")
	b.waitGone("[data-testid=paused-bar]")
	b.waitJS("the answer", q("[data-testid=transcript]")+".textContent.includes('All done within budget.')")
	b.waitIdle()

	// Settings → Budgets: today's spending and the day's limits.
	for _, w := range []struct {
		name string
		w, h int
	}{{"desktop", 1280, 800}, {"phone", 375, 812}} {
		for _, scheme := range []string{"light", "dark"} {
			p := openBrowser(t, s, withWindow(w.w, w.h))
			p.setColorScheme(scheme)
			p.navigate("/#settings/budgets")
			p.waitVisible("[data-testid=budgets-page] [data-testid=budget-today]")
			if got := eval[string](p, q("[data-testid=budget-form-day] [data-testid=budget-max_cost_usd]")+".value"); got != "5" {
				t.Errorf("day cost limit shown %q, want 5", got)
			}
			shootGoals(t, p, dir, "budget-settings-"+w.name+"-"+scheme)
		}
	}

	// An admin sets the day's tool calls there; an empty field clears a limit.
	b.navigate("/#settings/budgets")
	form := "[data-testid=budget-form-day] "
	b.waitVisible(form + "[data-testid=budget-max_tool_calls]")
	setNumber(b, form+"[data-testid=budget-max_tool_calls]", "50")
	setNumber(b, form+"[data-testid=budget-max_cost_usd]", "")
	b.click(form + "[data-testid=budget-save]")
	var got struct {
		Budgets []struct {
			Scope  string             `json:"scope"`
			Limits map[string]float64 `json:"limits"`
		} `json:"budgets"`
	}
	waitAPI(t, "the day's limits saved", func() bool {
		got.Budgets = nil // a map decoded into keeps its old keys
		e2etest.Do(t, "GET", s.URL+"/api/budgets?scope=day", nil, &got)
		return len(got.Budgets) == 1 && got.Budgets[0].Limits["max_tool_calls"] == 50
	})
	if l := got.Budgets[0].Limits; l["max_tokens"] != 1000000 || l["max_cost_usd"] != 0 {
		t.Errorf("day limits after saving %v, want tokens kept and cost cleared", l)
	}
}

// Every 5 model calls the run's health shows in the Activity panel, live
// and after a reload at the same place.
func TestUIRunHealthInActivity(t *testing.T) {
	t.Parallel()
	var turns []demo.Turn
	for i := range 5 {
		turns = append(turns, e2etest.Turn(e2etest.Call("run_command", fmt.Sprintf(`{"command":"echo %d"}`, i))))
	}
	turns = append(turns, e2etest.Turn(e2etest.Text("Checked.")))
	s := e2etest.StartServer(t, e2etest.Scenarios(e2etest.Scenario("", turns...)), e2etest.WithApprovalMode("off"))
	b := openBrowser(t, s)
	b.navigate("/")
	sid := b.newSessionUI()
	b.sendMessage("check five things")
	health := "[data-testid=activity] [data-testid=activity-node][data-node-id^=hlt_]"
	b.waitVisible(health)
	live := b.text(health)
	if !strings.HasPrefix(live, "Health after 5 model calls:") {
		t.Errorf("health node %q", live)
	}
	b.waitIdle()
	order := func(p *browser) string {
		return eval[string](p, qa("[data-testid=activity] [data-type=run] > ul > [data-testid=activity-node]")+".map(e => e.dataset.type).join(' ')")
	}
	liveOrder := order(b)
	if !strings.Contains(liveOrder, "turn marker turn") {
		t.Errorf("the run's steps live are %q: want the health marker between turns", liveOrder)
	}
	b.navigate("/s/" + sid)
	// Older runs fold; open the run to see its steps.
	eval[chromedp.Void](b, `for (const r of document.querySelectorAll("[data-testid=activity] [data-type=run] > .act-row[aria-expanded=false]")) r.click()`)
	b.waitVisible(health)
	if got := b.text(health); got != live {
		t.Errorf("after reload the health node says %q, live %q", got, live)
	}
	if got := order(b); got != liveOrder {
		t.Errorf("after reload the run's steps are %q, live %q", got, liveOrder)
	}
}

// /pause pauses the running run at its next step; Resume continues it.
func TestUIPauseCommand(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Scenarios(e2etest.Scenario("",
		e2etest.Turn(e2etest.Delay(1500), e2etest.Call("run_command", `{"command":"echo after the pause"}`)),
		e2etest.Turn(e2etest.Text("Resumed and done.")),
	)), e2etest.WithApprovalMode("off"))
	b := openBrowser(t, s)
	b.navigate("/")
	b.newSessionUI()
	b.sendMessage("take your time")
	b.waitVisible("[data-testid=steer]")
	b.sendMessage("/pause")
	b.waitVisible("[data-testid=paused-bar][data-code=paused_by_person]")
	if n := b.count("[data-testid=paused-limit]"); n != 0 {
		t.Errorf("a person's pause offers %d limits to raise", n)
	}
	b.click("[data-testid=resume-run]")
	b.waitGone("[data-testid=paused-bar]")
	b.waitJS("the answer", q("[data-testid=transcript]")+".textContent.includes('Resumed and done.')")
}
