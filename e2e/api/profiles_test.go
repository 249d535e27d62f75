package api

// Profiles (issue 16, h16-profiles), acceptance: two profiles with
// different instructions and models; each session's requests to a fake
// provider carry its profile's instructions and model, and run.started
// keeps a snapshot of the profile that survives its deletion.

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
)

// modelRequest is what the test reads of a Chat Completions request.
type modelRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
}

func (m modelRequest) system() string {
	var b strings.Builder
	for _, msg := range m.Messages {
		if msg.Role == "system" || msg.Role == "developer" {
			b.Write(msg.Content)
		}
	}
	return b.String()
}

func TestProfilesReachTheModel(t *testing.T) {
	oa := newOpenAIFake(t, openaiTestKey, openaiTestKey)
	s := startWith(t, oa)

	mkProfile := func(body map[string]any) string {
		t.Helper()
		var out struct {
			ID string `json:"id"`
		}
		if c := e2etest.Do(t, "POST", s.URL+"/api/profiles", body, &out); c != http.StatusCreated {
			t.Fatalf("create profile: %d", c)
		}
		return out.ID
	}
	ada := mkProfile(map[string]any{"name": "Ada", "color": "#aa3366", "instructions": "You are Ada. Sign every answer ADA-7.",
		"model": "openai/gpt-4o-mini", "tools": []string{"read_file", "grep"}, "approval_mode": "off"})
	bob := mkProfile(map[string]any{"name": "Bob", "color": "#3366aa", "instructions": "You are Bob. Sign every answer BOB-9.",
		"model": "nowhere/model-x", "fallbacks": []string{"openai/gpt-4o"}})

	newSession := func(profileID string) string {
		t.Helper()
		var out struct {
			ID        string `json:"id"`
			ProfileID string `json:"profile_id"`
		}
		if c := e2etest.Do(t, "POST", s.URL+"/api/sessions", map[string]any{"profile_id": profileID}, &out); c != http.StatusCreated || out.ProfileID != profileID {
			t.Fatalf("create session: %d %+v", c, out)
		}
		return out.ID
	}
	// run sends one message in the session and returns its run.started and
	// the model request it made.
	run := func(sid string) (event.RunStartedPayload, modelRequest) {
		t.Helper()
		oa.stream(oa.fixture("text"))
		before := len(oa.bodies())
		st := e2etest.OpenStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
		r := s.Send(t, sid, "who are you?")
		got := summarise(t, st.Until(t, "run.done", e2etest.IsDone(r.ID)), r.ID)
		if got.done.Status != "completed" {
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
		return got.started, req
	}

	sa, sb := newSession(ada), newSession(bob)
	startedA, reqA := run(sa)
	startedB, reqB := run(sb)

	if reqA.Model != "gpt-4o-mini" || !strings.Contains(reqA.system(), "ADA-7") || strings.Contains(reqA.system(), "BOB-9") {
		t.Fatalf("Ada's request: model %q, system %q", reqA.Model, reqA.system())
	}
	// Bob's model is served by no provider: its fallback answers.
	if reqB.Model != "gpt-4o" || !strings.Contains(reqB.system(), "BOB-9") || strings.Contains(reqB.system(), "ADA-7") {
		t.Fatalf("Bob's request: model %q, system %q", reqB.Model, reqB.system())
	}
	// Ada enables two tools; Bob all of them.
	var toolsA []string
	for _, tl := range reqA.Tools {
		toolsA = append(toolsA, tl.Function.Name)
	}
	if strings.Join(toolsA, ",") != "grep,read_file" || len(reqB.Tools) <= 2 {
		t.Fatalf("tools: Ada %v, Bob %d", toolsA, len(reqB.Tools))
	}

	// run.started: the session state of seed 004 (the e2e server asks
	// before every command: Bob, with no mode of his own, runs under that).
	if p := startedA.Profile; p == nil || p.ID != ada || p.Name != "Ada" || !strings.Contains(p.Instructions, "ADA-7") ||
		len(p.InstructionsSHA256) != 64 || startedA.ApprovalMode != "off" || startedA.Model != "gpt-4o-mini" {
		t.Fatalf("Ada's run.started = %+v (profile %+v)", startedA, startedA.Profile)
	}
	if p := startedB.Profile; p == nil || p.ID != bob || startedB.Model != "gpt-4o" || startedB.ApprovalMode != "manual" {
		t.Fatalf("Bob's run.started = %+v (profile %+v)", startedB, startedB.Profile)
	}

	// Deleting Ada leaves her session working, without her instructions,
	// and her earlier run's snapshot as it was.
	if c := e2etest.Do(t, "DELETE", s.URL+"/api/profiles/"+ada, nil, nil); c != http.StatusNoContent {
		t.Fatalf("delete profile: %d", c)
	}
	after, reqAfter := run(sa)
	if after.Profile != nil || strings.Contains(reqAfter.system(), "ADA-7") {
		t.Fatalf("after delete: run.started %+v, system %q", after, reqAfter.system())
	}
	runs := s.Runs(t, sa)
	first := s.Journal(t, runs[0].ID)
	for _, e := range first {
		if e.Type == event.RunStarted {
			if p := e2etest.Payload[event.RunStartedPayload](t, e).Profile; p == nil || p.Name != "Ada" {
				t.Fatalf("first run's snapshot after delete = %+v", p)
			}
		}
	}
}
