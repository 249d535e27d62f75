package api

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/config"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
)

// onDefaults undoes the harness's test settings: the built-in demo script
// and the default approval mode, as `caduceus serve` runs with no flags.
func onDefaults(c *config.Config) {
	c.DemoScript = ""
	c.ApprovalMode = ""
}

// TestREADMEWalkthrough follows README.md's curl walkthrough on default
// settings: "please run a command" must leave a pending approval request,
// answering "once" must run the command and complete the run, and the demo
// model's help must name every way to configure a real provider.
func TestREADMEWalkthrough(t *testing.T) {
	s := e2etest.StartServer(t, demo.Script{}, onDefaults)
	sid := s.NewSession(t)
	st := e2etest.OpenStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
	r := s.Send(t, sid, "please run a command")

	st.Until(t, "approval.requested", e2etest.IsType(event.ApprovalRequested))
	s.WaitStatus(t, r.ID, "awaiting_approval")
	pend := s.Pending(t)
	if len(pend) != 1 || pend[0].RunID != r.ID || pend[0].Kind != "approval" {
		t.Fatalf("pending = %+v", pend)
	}
	var prompt struct {
		Action  string   `json:"action"`
		Choices []string `json:"choices"`
	}
	if err := json.Unmarshal(pend[0].Prompt, &prompt); err != nil || prompt.Action != "$ "+demo.RunCommand ||
		!slices.Contains(prompt.Choices, "once") {
		t.Fatalf("prompt %s (%v): want the command %q with the choice once", pend[0].Prompt, err, demo.RunCommand)
	}
	if c := e2etest.Do(t, "POST", s.URL+"/api/requests/"+pend[0].ID+"/respond", map[string]string{"choice": "once"}, nil); c != http.StatusOK {
		t.Fatalf("respond once: %d", c)
	}
	seen := st.Until(t, "run.done", e2etest.IsDone(r.ID))
	ran := false
	for _, e := range seen {
		if e.Type == event.ToolDone {
			td := e2etest.Payload[event.ToolDonePayload](t, e)
			if td.Status != event.ToolOK {
				t.Fatalf("tool.done = %+v", td)
			}
			ran = true
		}
	}
	if !ran {
		t.Fatal("no tool.done after approving")
	}
	if done := e2etest.Payload[event.RunDonePayload](t, seen[len(seen)-1]); done.Status != "completed" {
		t.Fatalf("run.done = %+v", done)
	}
	if p := s.Pending(t); len(p) != 0 {
		t.Fatalf("still pending: %+v", p)
	}

	// The help text names every provider setting.
	r2 := s.Send(t, sid, "hello")
	s.WaitStatus(t, r2.ID, "completed")
	var msgs struct {
		Items []struct {
			Kind string `json:"kind"`
			Text string `json:"text"`
		} `json:"items"`
	}
	e2etest.Do(t, "GET", s.URL+"/api/sessions/"+sid+"/messages", nil, &msgs)
	var last string
	for _, it := range msgs.Items {
		if it.Kind == "assistant" {
			last = it.Text
		}
	}
	for _, want := range []string{"OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "OLLAMA_HOST", "config.json"} {
		if !strings.Contains(last, want) {
			t.Errorf("help text does not name %s:\n%s", want, last)
		}
	}
}

// TestREADMEWalkthroughLeavesWorkspace checks the approved command is as
// harmless as the README says: the workspace ends as it began.
func TestREADMEWalkthroughLeavesWorkspace(t *testing.T) {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "keep.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := e2etest.StartServer(t, demo.Script{}, onDefaults, e2etest.WithWorkspace(ws))
	sid := s.NewSession(t)
	r := s.Send(t, sid, "run something")
	s.WaitStatus(t, r.ID, "awaiting_approval")
	pend := s.Pending(t)
	if len(pend) != 1 {
		t.Fatalf("pending = %+v", pend)
	}
	e2etest.Do(t, "POST", s.URL+"/api/requests/"+pend[0].ID+"/respond", map[string]string{"choice": "once"}, nil)
	s.WaitStatus(t, r.ID, "completed")
	entries, err := os.ReadDir(ws)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "keep.txt" {
		t.Fatalf("workspace after the demo: %v", entries)
	}
}
