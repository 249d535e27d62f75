package api

// Memory (issue 16, h16-memory), acceptance: an entry a person adds to a
// profile's memory appears in the system prompt of that profile's next
// run; deleted, it is gone; another profile's runs never see it.

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

func TestMemoryReachesTheSystemPrompt(t *testing.T) {
	oa := newOpenAIFake(t, openaiTestKey, openaiTestKey)
	s := startWith(t, oa)

	mkProfile := func(name string) string {
		t.Helper()
		var out struct {
			ID string `json:"id"`
		}
		if c := e2etest.Do(t, "POST", s.URL+"/api/profiles", map[string]any{"name": name, "model": "openai/gpt-4o-mini"}, &out); c != http.StatusCreated {
			t.Fatalf("create profile: %d", c)
		}
		return out.ID
	}
	ada, bob := mkProfile("Ada"), mkProfile("Bob")
	newSession := func(profileID string) string {
		t.Helper()
		var out struct {
			ID string `json:"id"`
		}
		if c := e2etest.Do(t, "POST", s.URL+"/api/sessions", map[string]any{"profile_id": profileID}, &out); c != http.StatusCreated {
			t.Fatalf("create session: %d", c)
		}
		return out.ID
	}
	// system sends one message in the session and returns the system
	// prompt of the model request it made.
	system := func(sid string) string {
		t.Helper()
		oa.stream(oa.fixture("text"))
		before := len(oa.bodies())
		st := e2etest.OpenStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
		r := s.Send(t, sid, "hello")
		if got := summarise(t, st.Until(t, "run.done", e2etest.IsDone(r.ID)), r.ID); got.done.Status != "completed" {
			t.Fatalf("run.done %+v", got.done)
		}
		bodies := oa.bodies()
		if len(bodies) != before+1 {
			t.Fatalf("%d new model requests, want 1", len(bodies)-before)
		}
		var req modelRequest
		if err := json.Unmarshal(bodies[len(bodies)-1], &req); err != nil {
			t.Fatal(err)
		}
		var text string
		if err := json.Unmarshal([]byte(req.system()), &text); err != nil {
			t.Fatalf("system content %s: %v", req.system(), err)
		}
		return text
	}
	const fact = "The staging host is called heron-7."
	sa, sb := newSession(ada), newSession(bob)
	if got := system(sa); strings.Contains(got, fact) {
		t.Fatalf("before adding, the prompt has the fact: %q", got)
	}

	var added struct {
		Entry struct {
			ID string `json:"id"`
		} `json:"entry"`
	}
	if c := e2etest.Do(t, "POST", s.URL+"/api/profiles/"+ada+"/memory", map[string]any{"target": "notes", "text": fact}, &added); c != http.StatusCreated {
		t.Fatalf("add memory: %d", c)
	}
	var prompt struct {
		Text string `json:"text"`
	}
	if c := e2etest.Do(t, "GET", s.URL+"/api/profiles/"+ada+"/memory/prompt", nil, &prompt); c != http.StatusOK || !strings.Contains(prompt.Text, "- "+fact+"\n") {
		t.Fatalf("memory prompt: %d %q", c, prompt.Text)
	}
	// The next run has exactly what the prompt route shows.
	if got := system(sa); !strings.Contains(got, prompt.Text) {
		t.Fatalf("Ada's system prompt lacks her memory %q:\n%s", prompt.Text, got)
	}
	if got := system(sb); strings.Contains(got, fact) || strings.Contains(got, "## Memory") {
		t.Fatalf("Bob's system prompt has Ada's memory:\n%s", got)
	}

	if c := e2etest.Do(t, "DELETE", s.URL+"/api/profiles/"+ada+"/memory/"+added.Entry.ID, nil, nil); c != http.StatusOK {
		t.Fatalf("delete memory: %d", c)
	}
	if got := system(sa); strings.Contains(got, fact) {
		t.Fatalf("after deleting, Ada's prompt still has it:\n%s", got)
	}
}

// TestMemoryToolWritesItsProfilesMemory: the model's memory tool keeps
// what it learns in the memory of the run's profile, where the console
// shows it, and not in another profile's.
func TestMemoryToolWritesItsProfilesMemory(t *testing.T) {
	oa := newOpenAIFake(t, openaiTestKey, openaiTestKey)
	s := startWith(t, oa)
	var ada, bob struct {
		ID string `json:"id"`
	}
	for _, p := range []struct {
		name string
		out  any
	}{{"Ada", &ada}, {"Bob", &bob}} {
		body := map[string]any{"name": p.name, "model": "openai/gpt-4o-mini", "approval_mode": "off"}
		if c := e2etest.Do(t, "POST", s.URL+"/api/profiles", body, p.out); c != http.StatusCreated {
			t.Fatalf("create profile: %d", c)
		}
	}
	var ses struct {
		ID string `json:"id"`
	}
	if c := e2etest.Do(t, "POST", s.URL+"/api/sessions", map[string]any{"profile_id": ada.ID}, &ses); c != http.StatusCreated {
		t.Fatalf("create session: %d", c)
	}
	oa.stream(oa.tools(fakeCall{id: "call_mem", name: "memory", args: `{"action":"add","target":"user","text":"Drinks tea, not coffee."}`}))
	oa.stream(oa.text("Noted."))
	st := e2etest.OpenStream(t, s.URL+"/api/sessions/"+ses.ID+"/events", nil)
	r := s.Send(t, ses.ID, "remember that I drink tea")
	if got := summarise(t, st.Until(t, "run.done", e2etest.IsDone(r.ID)), r.ID); got.done.Status != "completed" {
		t.Fatalf("run.done %+v", got.done)
	}
	bodies := oa.bodies()
	if res := oa.results(t, bodies[len(bodies)-1]); !strings.Contains(res["call_mem"], "Saved to user") {
		t.Fatalf("memory tool result = %q", res["call_mem"])
	}
	users := func(pid string) []string {
		t.Helper()
		var m struct {
			Targets []struct {
				Target  string `json:"target"`
				Entries []struct {
					Text string `json:"text"`
				} `json:"entries"`
			} `json:"targets"`
		}
		if c := e2etest.Do(t, "GET", s.URL+"/api/profiles/"+pid+"/memory", nil, &m); c != http.StatusOK {
			t.Fatalf("get memory: %d", c)
		}
		var out []string
		for _, tg := range m.Targets {
			for _, e := range tg.Entries {
				out = append(out, tg.Target+": "+e.Text)
			}
		}
		return out
	}
	if got := users(ada.ID); len(got) != 1 || got[0] != "user: Drinks tea, not coffee." {
		t.Fatalf("Ada's memory = %q", got)
	}
	if got := users(bob.ID); len(got) != 0 {
		t.Fatalf("Bob's memory = %q", got)
	}
}
