package api

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

// A session made in a project takes its model, and the model receives the
// project's instructions in the system prompt of every run, read afresh
// at each run; a session that leaves the project no longer gets them.
func TestProjectDefaultsReachTheModel(t *testing.T) {
	t.Parallel()
	oa := newOpenAIFake(t, openaiTestKey, openaiTestKey)
	s := startWith(t, oa)

	var p struct {
		ID string `json:"id"`
	}
	if c := e2etest.Do(t, "POST", s.URL+"/api/projects", map[string]any{"name": "Docs",
		"model": oa.ref(), "instructions": "Always answer in French."}, &p); c != http.StatusCreated {
		t.Fatalf("create project: %d", c)
	}
	var sess struct {
		ID    string `json:"id"`
		Model string `json:"model"`
	}
	if c := e2etest.Do(t, "POST", s.URL+"/api/sessions", map[string]any{"project_id": p.ID}, &sess); c != http.StatusCreated {
		t.Fatalf("create session: %d", c)
	}
	if sess.Model != oa.ref() {
		t.Fatalf("session model %q, want the project's %q", sess.Model, oa.ref())
	}

	// system sends a message without a model and returns the model and
	// system prompt the provider received.
	system := func(content string) (model, prompt string) {
		t.Helper()
		oa.stream(oa.fixture("text"))
		before := len(oa.bodies())
		st := e2etest.OpenStream(t, s.URL+"/api/sessions/"+sess.ID+"/events", nil)
		var r e2etest.RunJSON
		if c := e2etest.Do(t, "POST", s.URL+"/api/sessions/"+sess.ID+"/messages", map[string]any{"content": content}, &r); c != http.StatusAccepted {
			t.Fatalf("send: %d", c)
		}
		got := summarise(t, st.Until(t, "run.done", e2etest.IsDone(r.ID)), r.ID)
		if got.done.Status != "completed" {
			t.Fatalf("run %+v", got.done)
		}
		bodies := oa.bodies()
		if len(bodies) != before+1 {
			t.Fatalf("%d model requests, want 1", len(bodies)-before)
		}
		var body struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(bodies[len(bodies)-1], &body); err != nil {
			t.Fatal(err)
		}
		for _, m := range body.Messages {
			if m.Role == "system" {
				b, _ := json.Marshal(m.Content)
				prompt += string(b)
			}
		}
		return body.Model, prompt
	}

	model, prompt := system("hello")
	if model != oa.model || !strings.Contains(prompt, "## Project: Docs") || !strings.Contains(prompt, "Always answer in French.") {
		t.Fatalf("first run: model %q, system prompt %s", model, prompt)
	}
	if c := e2etest.Do(t, "PATCH", s.URL+"/api/projects/"+p.ID, map[string]any{"instructions": "Always answer in Latin."}, nil); c != http.StatusOK {
		t.Fatalf("edit project: %d", c)
	}
	if _, prompt = system("again"); !strings.Contains(prompt, "Always answer in Latin.") || strings.Contains(prompt, "French") {
		t.Fatalf("after the edit: system prompt %s", prompt)
	}
	if c := e2etest.Do(t, "PATCH", s.URL+"/api/sessions/"+sess.ID, map[string]any{"project_id": nil}, nil); c != http.StatusOK {
		t.Fatalf("leave project: %d", c)
	}
	if _, prompt = system("once more"); strings.Contains(prompt, "## Project") {
		t.Fatalf("outside the project: system prompt %s", prompt)
	}
}
