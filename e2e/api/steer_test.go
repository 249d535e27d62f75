package api

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
)

// TestSteerReachesTheNextModelCall: a message sent with if_busy "steer"
// while the run's tool call executes lands after that call's result, in
// the same run, and the model's next request carries it as the person's
// message; nothing is cancelled and no other run starts.
func TestSteerReachesTheNextModelCall(t *testing.T) {
	t.Parallel()
	f := newOpenAIFake(t, openaiTestKey, openaiTestKey)
	// The command waits for a file the test writes once it has steered,
	// so the steer arrives while the call runs, without sleeping.
	f.stream(f.tools(fakeCall{"call_SteerWait01", "run_command", `{"command":"while [ ! -f go.flag ]; do sleep 0.05; done; echo waited"}`}))
	f.stream(f.text("Understood, ", "using tabs."))
	ws := newWorkspace(t)
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("the demo model answered"))),
		e2etest.WithEnv(f.env), e2etest.WithWorkspace(ws), e2etest.WithApprovalMode("off"))
	sid := s.NewSession(t)
	st := e2etest.OpenStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
	defer st.Close()
	r := sendModel(t, s, sid, "format the files", f.ref())
	st.Until(t, "the command started", func(e event.Event) bool { return e.RunID == r.ID && e.Type == event.ToolStarted })

	const steer = "use tabs, not spaces"
	var got struct {
		e2etest.RunJSON
		Steered bool `json:"steered"`
	}
	if c := e2etest.Do(t, "POST", s.URL+"/api/sessions/"+sid+"/messages", map[string]any{"content": steer, "if_busy": "steer"}, &got); c != http.StatusAccepted {
		t.Fatalf("steer: %d", c)
	}
	if !got.Steered || got.ID != r.ID {
		t.Fatalf("steer answered %+v, want steered into %s", got, r.ID)
	}
	// Before its step boundary the steer shows at once as pending, last,
	// live (message.steered) and after a reload.
	st.Until(t, "message.steered", func(e event.Event) bool {
		return e.RunID == r.ID && e.Type == event.MessageSteered && e2etest.Payload[event.MessageSteeredPayload](t, e).Content == steer
	})
	var pend struct {
		Items []struct {
			Text    string `json:"text"`
			Steer   bool   `json:"steer"`
			Pending bool   `json:"pending"`
		} `json:"items"`
	}
	e2etest.Do(t, "GET", s.URL+"/api/sessions/"+sid+"/messages", nil, &pend)
	if n := len(pend.Items); n == 0 || !pend.Items[n-1].Pending || !pend.Items[n-1].Steer || pend.Items[n-1].Text != steer {
		t.Fatalf("before delivery the transcript ends %+v, want the pending steer", pend.Items)
	}
	if err := os.WriteFile(filepath.Join(ws, "go.flag"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	evs := st.Until(t, "run.done", e2etest.IsDone(r.ID))
	if d := summarise(t, evs, r.ID).done; d.Status != "completed" {
		t.Fatalf("run.done = %+v", d)
	}
	if runs := s.Runs(t, sid); len(runs) != 1 {
		t.Fatalf("%d runs, want the one run steered", len(runs))
	}

	// The journal: the steer is a message.user of the run, after the
	// command's result and before the second model call.
	var order []string
	for _, e := range s.Journal(t, r.ID) {
		switch e.Type {
		case event.ToolDone, event.TurnStarted:
			order = append(order, string(e.Type))
		case event.MessageUser:
			p := e2etest.Payload[event.MessageUserPayload](t, e)
			if p.Steer {
				if p.Content != steer || p.ControlID == "" {
					t.Fatalf("steer message.user = %+v", p)
				}
				order = append(order, "steer")
			}
		}
	}
	if want := "turn.started tool.done steer turn.started"; strings.Join(order, " ") != want {
		t.Fatalf("journal order %q, want %q", strings.Join(order, " "), want)
	}

	// The model: the first request knows nothing of it, the second ends
	// with it, after the tool result.
	bodies := f.bodies()
	if len(bodies) != 2 {
		t.Fatalf("the fake got %d model requests, want 2", len(bodies))
	}
	if strings.Contains(string(bodies[0]), steer) {
		t.Fatal("the first model call already had the steer")
	}
	roles, last := lastMessages(t, bodies[1])
	if n := len(roles); n < 2 || roles[n-2] != "tool" || roles[n-1] != "user" || last != steer {
		t.Fatalf("second request ends with roles %v, last %q; want tool then the steer", roles, last)
	}

	// After a reload the transcript shows it where it landed.
	var msgs struct {
		Items []struct {
			Kind    string `json:"kind"`
			Text    string `json:"text"`
			Steer   bool   `json:"steer"`
			Pending bool   `json:"pending"`
		} `json:"items"`
	}
	e2etest.Do(t, "GET", s.URL+"/api/sessions/"+sid+"/messages", nil, &msgs)
	var kinds []string
	for _, it := range msgs.Items {
		k := it.Kind
		if it.Steer {
			k += "(steer)"
		}
		if it.Pending {
			k += "(pending)"
		}
		kinds = append(kinds, k)
	}
	joined := strings.Join(kinds, " ")
	if !strings.Contains(joined, "tool_call user(steer) assistant") {
		t.Fatalf("transcript kinds %q: want the steer between the tool and the answer", joined)
	}
}

// lastMessages returns the roles of an OpenAI request's messages and the
// text of the last one.
func lastMessages(t *testing.T, raw []byte) ([]string, string) {
	t.Helper()
	var body struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range body.Messages {
		roles = append(roles, m.Role)
	}
	if len(body.Messages) == 0 {
		return nil, ""
	}
	c := body.Messages[len(body.Messages)-1].Content
	var s string
	if json.Unmarshal(c, &s) != nil {
		var parts []struct {
			Text string `json:"text"`
		}
		_ = json.Unmarshal(c, &parts)
		for _, p := range parts {
			s += p.Text
		}
	}
	return roles, s
}
