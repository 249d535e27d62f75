package browser

// Screenshots of a session with every card type, for a person to look at
// (written by the test run, not committed): desktop and phone, light and
// dark.

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
)

const cardsMarkdown = "## Port change\n\nThe server listens on **8080**, which clashes with the proxy. Plan:\n\n" +
	"1. Change `port` in `config.yaml`.\n2. Run the tests.\n3. Report back.\n\n" +
	"- keeps the old default for `dev`\n- no restart needed\n\n" +
	"```go\nfunc listen(cfg Config) error {\n\taddr := fmt.Sprintf(\":%d\", cfg.Port) // 9090 now\n\treturn http.ListenAndServe(addr, nil)\n}\n```\n\n" +
	"See [the docs](https://example.invalid/docs) for the other settings."

// cardsScript plays one run per card type.
func cardsScript() demo.Script {
	return e2etest.Scenarios(
		e2etest.Scenario("fix the port",
			e2etest.Turn(e2etest.Reasoning("The config sets port 8080; the proxy uses it too. Change it to 9090 and run the tests."),
				e2etest.Text(cardsMarkdown),
				e2etest.Call("edit_file", `{"path":"config.yaml","old_string":"port: 8080","new_string":"port: 9090"}`)),
			e2etest.Turn(e2etest.Call("run_command", `{"command":"echo ok: 12 tests passed"}`)),
			e2etest.Turn(e2etest.Text("The port is **9090** now and the tests pass."))),
		e2etest.Scenario("which database",
			e2etest.Turn(e2etest.Call("clarify", `{"question":"Which database should the service use?","choices":["SQLite","PostgreSQL"]}`)),
			e2etest.Turn(e2etest.Text("SQLite it is."))),
		e2etest.Scenario("long job", e2etest.Turn(e2etest.Text("Starting the long job…"), e2etest.Delay(60000))),
		e2etest.Scenario("flaky", e2etest.Turn(e2etest.Text("Calling the model…"), demo.Step{Kind: demo.KindError, Code: "overloaded", Message: "the provider is overloaded"})),
		e2etest.Scenario("clean the build",
			e2etest.Turn(e2etest.Text("I'll remove the build directory first."), e2etest.Call("run_command", `{"command":"rm -rf build"}`)),
			e2etest.Turn(e2etest.Call("clarify", `{"question":"Also remove the download cache (1.2 GB)?","choices":["Yes, remove it","Keep it"]}`)),
			e2etest.Turn(e2etest.Text("Cleaned."))),
	)
}

// seedCards drives the API to leave a session with every card type, the
// last one a pending approval.
func seedCards(t *testing.T, s *e2etest.Server) string {
	t.Helper()
	sid := s.NewSession(t)
	r := s.Send(t, sid, "Please fix the port clash")
	s.WaitStatus(t, r.ID, "completed")

	r = s.Send(t, sid, "Set up storage: which database?")
	r = s.WaitStatus(t, r.ID, "awaiting_clarify")
	if c := e2etest.Do(t, "POST", s.URL+"/api/requests/"+r.PendingRequestIDs[0]+"/respond", map[string]any{"answer": "SQLite"}, nil); c != 200 {
		t.Fatalf("answer: %d", c)
	}
	s.WaitStatus(t, r.ID, "completed")

	r = s.Send(t, sid, "Run the long job")
	s.WaitStatus(t, r.ID, "running")
	e2etest.Do(t, "POST", s.URL+"/api/runs/"+r.ID+"/cancel", nil, nil)
	s.WaitStatus(t, r.ID, "cancelled")

	r = s.Send(t, sid, "Try the flaky call")
	s.WaitStatus(t, r.ID, "failed")

	r = s.Send(t, sid, "Now clean the build")
	s.WaitStatus(t, r.ID, "awaiting_approval")
	return sid
}

func TestUIScreenshots(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "config.yaml"), []byte("name: demo\nport: 8080\nlog: info\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// smart: the edit and the echo run without asking, rm -rf asks.
	s := e2etest.StartServer(t, cardsScript(), e2etest.WithWorkspace(ws), e2etest.WithApprovalMode("smart"))
	sid := seedCards(t, s)
	dir := screenshotDir(t)
	type view struct {
		name string
		b    *browser
	}
	views := []view{
		{"desktop", openBrowser(t, s, withWindow(1280, 800))},
		{"phone", openBrowser(t, s, withWindow(375, 812))},
	}
	shoot := func(b *browser, name string) {
		b.frames(3)
		t.Logf("screenshot: %s", b.screenshot(dir, name))
	}

	// Everything from history, and an approval waiting at the bottom.
	for _, v := range views {
		b := v.b
		for _, scheme := range []string{"light", "dark"} {
			b.setColorScheme(scheme)
			b.navigate("/s/" + sid)
			b.waitVisible("[data-testid=approval-card] button[data-choice=once]")
			edit := "[data-testid=tool-card][data-tool=edit_file]"
			b.waitVisible(edit + "[data-status=ok]")
			if !b.visible(edit+" [data-testid=diff]") && b.attr(edit+" [data-testid=tool-toggle]", "aria-expanded") != "true" {
				b.click(edit + " [data-testid=tool-toggle]")
			}
			b.waitVisible(edit + " [data-testid=diff]")
			b.waitVisible("[data-testid=run-end][data-status=cancelled]")
			b.waitVisible("[data-testid=run-end][data-status=failed]")
			b.waitVisible("[data-testid=tool-card][data-tool=clarify]")
			b.waitVisible("[data-testid=tool-card][data-tool=run_command][data-status=ok]")
			b.waitVisible(itemSel("reasoning"))
			b.waitJS("the markdown code block", q(itemSel("assistant")+" .md pre code"))
			shoot(b, "session-"+v.name+"-"+scheme+"-bottom")
			if w := eval[[]int](b, "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"); w[0] > w[1] {
				t.Errorf("%s: the page scrolls sideways (%d px wide in a %d px viewport)", v.name, w[0], w[1])
			}
			// The top of the session: markdown, reasoning, the diff.
			eval[any](b, q("[data-testid=transcript]")+".scrollTop = 0")
			shoot(b, "session-"+v.name+"-"+scheme+"-top")
			b.openActivity()
			shoot(b, "session-"+v.name+"-"+scheme+"-activity")
		}
	}

	// Approve: the run goes on to a question, live in both tabs.
	var pend []e2etest.RequestJSON
	waitAPI(t, "the pending approval", func() bool { pend = s.Pending(t); return len(pend) == 1 })
	if c := e2etest.Do(t, "POST", s.URL+"/api/requests/"+pend[0].ID+"/respond", map[string]any{"choice": "once"}, nil); c != 200 {
		t.Fatalf("approve: %d", c)
	}
	for _, v := range views {
		b := v.b
		b.waitVisible(`[data-testid=clarify-card] button[data-choice="Keep it"]`)
		b.waitVisible("[data-testid=clarify-card] [data-testid=clarify-input]")
		b.waitJS("the approval card resolved", qa("[data-testid=approval-card] button[data-choice]")+".length === 0")
		// The earlier shots left the view at the top: the new content shows
		// the pill; follow it down.
		if v.name == "phone" {
			b.click(`[aria-label="Close panel"]`) // the drawer covers the transcript
		}
		b.click("[data-testid=new-pill]")
		b.waitJS("the view at the bottom", q("[data-testid=transcript]")+".scrollHeight - "+q("[data-testid=transcript]")+".scrollTop - "+q("[data-testid=transcript]")+".clientHeight < 4")
		for _, scheme := range []string{"dark", "light"} {
			b.setColorScheme(scheme)
			shoot(b, "session-"+v.name+"-"+scheme+"-clarify")
		}
	}
}
