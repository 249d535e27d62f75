package api

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

// Versions of a conversation (issue 15): retry, edit, undo and restore
// through the real server, asserting what the model is sent on a fake
// OpenAI-compatible server that records every request.

// versionsItem is the part of a transcript item these tests read.
type versionsItem struct {
	ID       string `json:"id"`
	Kind     string `json:"kind"`
	RunID    string `json:"run_id"`
	Text     string `json:"text"`
	Versions *struct {
		Index int      `json:"index"`
		Count int      `json:"count"`
		Runs  []string `json:"runs"`
	} `json:"versions"`
}

func transcriptOf(t *testing.T, s *e2etest.Server, sid string) []versionsItem {
	t.Helper()
	var out struct {
		Items []versionsItem `json:"items"`
	}
	if c := e2etest.Do(t, "GET", s.URL+"/api/sessions/"+sid+"/messages", nil, &out); c != http.StatusOK {
		t.Fatalf("messages: %d", c)
	}
	return out.Items
}

// texts returns the texts of the items of kind, in order.
func texts(items []versionsItem, kind string) []string {
	var out []string
	for _, it := range items {
		if it.Kind == kind {
			out = append(out, it.Text)
		}
	}
	return out
}

// sentTo returns the texts the model was sent in request body, by role
// (system left out).
func sentTo(t *testing.T, body []byte) (users, assistants []string) {
	t.Helper()
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	for _, m := range req.Messages {
		var text string
		if json.Unmarshal(m.Content, &text) != nil {
			var parts []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}
			_ = json.Unmarshal(m.Content, &parts)
			for _, p := range parts {
				text += p.Text
			}
		}
		switch m.Role {
		case "user":
			users = append(users, text)
		case "assistant":
			assistants = append(assistants, text)
		}
	}
	return users, assistants
}

// versionsSession is a server on a fake OpenAI model with one session and
// its stream, and a way to queue an answer and wait for the run it answers.
type versionsSession struct {
	s   *e2etest.Server
	oa  *llmFake
	sid string
	st  *e2etest.Stream
}

func newVersionsSession(t *testing.T) *versionsSession {
	t.Helper()
	oa := newOpenAIFake(t, openaiTestKey, openaiTestKey)
	s := startWith(t, oa)
	sid := s.NewSession(t)
	return &versionsSession{s: s, oa: oa, sid: sid, st: e2etest.OpenStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)}
}

// answered waits for run to complete (the fake answering answer).
func (v *versionsSession) wait(t *testing.T, runID string) {
	t.Helper()
	got := summarise(t, v.st.Until(t, "run.done", e2etest.IsDone(runID)), runID)
	if got.done.Status != "completed" {
		t.Fatalf("run %s ended %+v", runID, got.done)
	}
}

func (v *versionsSession) send(t *testing.T, content, answer string) string {
	t.Helper()
	v.oa.stream(v.oa.text(answer))
	r := sendModel(t, v.s, v.sid, content, v.oa.ref())
	v.wait(t, r.ID)
	return r.ID
}

// post sends body to path and expects want, returning the run it queued
// (if any) after waiting for it when answer is set.
func (v *versionsSession) post(t *testing.T, path string, body any, want int, answer string) string {
	t.Helper()
	if answer != "" {
		v.oa.stream(v.oa.text(answer))
	}
	var out struct {
		ID string `json:"id"`
	}
	if c := e2etest.Do(t, "POST", v.s.URL+path, body, &out); c != want {
		t.Fatalf("POST %s: %d, want %d", path, c, want)
	}
	if answer != "" {
		v.wait(t, out.ID)
	}
	return out.ID
}

func (v *versionsSession) lastSent(t *testing.T) (users, assistants []string) {
	t.Helper()
	b := v.oa.bodies()
	return sentTo(t, b[len(b)-1])
}

func TestRetrySwitchAndReload(t *testing.T) {
	t.Parallel()
	v := newVersionsSession(t)
	r1 := v.send(t, "name a colour", "red")
	r2 := v.post(t, "/api/runs/"+r1+"/retry", map[string]any{}, http.StatusAccepted, "green")
	if users, as := v.lastSent(t); !slices.Equal(users, []string{"name a colour"}) || len(as) != 0 {
		t.Fatalf("a retry sent users %q assistants %q, want only the question", users, as)
	}
	// A retry of the newest version hangs beside the same first one.
	r3 := v.post(t, "/api/runs/"+r2+"/retry", nil, http.StatusAccepted, "blue")

	items := transcriptOf(t, v.s, v.sid)
	if got := texts(items, "assistant"); !slices.Equal(got, []string{"blue"}) {
		t.Fatalf("after two retries the page shows %q, want only the newest answer", got)
	}
	u := items[0]
	if u.Kind != "user" || u.Versions == nil || u.Versions.Index != 3 || u.Versions.Count != 3 ||
		!slices.Equal(u.Versions.Runs, []string{r1, r2, r3}) {
		t.Fatalf("the message's versions: %+v", u.Versions)
	}
	for i, want := range []string{"red", "green", "blue", "green"} {
		n := i%3 + 1
		if i == 3 {
			n = 2
		}
		var sel struct {
			Leaf string `json:"leaf_run_id"`
		}
		if c := e2etest.Do(t, "POST", v.s.URL+"/api/sessions/"+v.sid+"/versions", map[string]any{"item_id": transcriptOf(t, v.s, v.sid)[0].ID, "version": n}, &sel); c != http.StatusOK {
			t.Fatalf("select %d: %d", n, c)
		}
		items := transcriptOf(t, v.s, v.sid) // a reload
		if got := texts(items, "assistant"); !slices.Equal(got, []string{want}) || items[0].Versions.Index != n {
			t.Fatalf("version %d shows %q (index %d), want %q", n, got, items[0].Versions.Index, want)
		}
	}
	// The next turn's model history has only the version on screen.
	v.send(t, "and another", "yellow")
	users, as := v.lastSent(t)
	if !slices.Equal(users, []string{"name a colour", "and another"}) || !slices.Equal(as, []string{"green"}) {
		t.Fatalf("the next turn sent users %q assistants %q, want the chosen answer only", users, as)
	}
	if got := texts(transcriptOf(t, v.s, v.sid), "assistant"); !slices.Equal(got, []string{"green", "yellow"}) {
		t.Fatalf("page after the next turn: %q", got)
	}

	// Bad input changes nothing.
	for _, tc := range []struct {
		path string
		body any
		want int
	}{
		{"/api/sessions/" + v.sid + "/versions", map[string]any{"item_id": u.ID, "version": 4}, http.StatusBadRequest},
		{"/api/sessions/" + v.sid + "/versions", map[string]any{"item_id": "msg_nope", "version": 1}, http.StatusNotFound},
		{"/api/sessions/" + v.sid + "/edit", map[string]any{"item_id": u.ID, "content": "  "}, http.StatusBadRequest},
		{"/api/runs/run_doesnotexist0000000000/retry", nil, http.StatusNotFound},
		{"/api/sessions/" + v.sid + "/undo", map[string]any{"turns": 3}, http.StatusConflict},
		{"/api/sessions/" + v.sid + "/undo", map[string]any{"restore": true}, http.StatusConflict},
	} {
		v.post(t, tc.path, tc.body, tc.want, "")
	}
	if got := texts(transcriptOf(t, v.s, v.sid), "assistant"); !slices.Equal(got, []string{"green", "yellow"}) {
		t.Fatalf("page after refused requests: %q", got)
	}
}

func TestEditUndoRestore(t *testing.T) {
	t.Parallel()
	v := newVersionsSession(t)
	qs := []string{"q1", "q2", "q3", "q4", "q5"}
	for i, q := range qs {
		v.send(t, q, "a"+string(rune('1'+i)))
	}
	first := transcriptOf(t, v.s, v.sid)[0]

	// Edit the first of five: the new branch has one message.
	v.post(t, "/api/sessions/"+v.sid+"/edit", map[string]any{"item_id": first.ID, "content": "q1 edited"}, http.StatusAccepted, "e1")
	if users, as := v.lastSent(t); !slices.Equal(users, []string{"q1 edited"}) || len(as) != 0 {
		t.Fatalf("the edit sent users %q assistants %q", users, as)
	}
	items := transcriptOf(t, v.s, v.sid)
	if got := texts(items, "user"); !slices.Equal(got, []string{"q1 edited"}) || items[0].Versions == nil || items[0].Versions.Index != 2 {
		t.Fatalf("after the edit the page shows %q (%+v)", got, items[0].Versions)
	}
	// The old five are one click away.
	v.post(t, "/api/sessions/"+v.sid+"/versions", map[string]any{"item_id": items[0].ID, "version": 1}, http.StatusOK, "")
	if got := texts(transcriptOf(t, v.s, v.sid), "user"); !slices.Equal(got, qs) {
		t.Fatalf("version 1 shows %q", got)
	}

	// Undo two turns, then restore them.
	v.post(t, "/api/sessions/"+v.sid+"/undo", map[string]any{"turns": 2}, http.StatusOK, "")
	if got := texts(transcriptOf(t, v.s, v.sid), "user"); !slices.Equal(got, qs[:3]) {
		t.Fatalf("after undoing two turns: %q", got)
	}
	v.post(t, "/api/sessions/"+v.sid+"/undo", map[string]any{"restore": true}, http.StatusOK, "")
	if got := texts(transcriptOf(t, v.s, v.sid), "assistant"); !slices.Equal(got, []string{"a1", "a2", "a3", "a4", "a5"}) {
		t.Fatalf("after restoring: %q", got)
	}
	v.post(t, "/api/sessions/"+v.sid+"/undo", map[string]any{"restore": true}, http.StatusConflict, "")

	// After an undo the model does not see the undone turns; a message
	// sent then forks, and the undone turns stay a version away.
	v.post(t, "/api/sessions/"+v.sid+"/undo", map[string]any{"turns": 2}, http.StatusOK, "")
	v.send(t, "q4 instead", "b4")
	if users, _ := v.lastSent(t); !slices.Equal(users, []string{"q1", "q2", "q3", "q4 instead"}) {
		t.Fatalf("after undo the model was sent %q", users)
	}
	items = transcriptOf(t, v.s, v.sid)
	if it := items[len(items)-2]; it.Kind != "user" || it.Versions == nil || it.Versions.Count != 2 {
		t.Fatalf("the message sent after an undo: %+v", it)
	}
	v.post(t, "/api/sessions/"+v.sid+"/undo", map[string]any{"restore": true}, http.StatusConflict, "")
}

// Continue: the cut answer is the last message the model is sent.
func TestContinueCutAnswer(t *testing.T) {
	t.Parallel()
	v := newVersionsSession(t)
	r1 := v.send(t, "write a long story", "Once upon a time")
	v.post(t, "/api/runs/"+r1+"/continue", nil, http.StatusAccepted, " there was a fox.")
	users, as := v.lastSent(t)
	if !slices.Equal(users, []string{"write a long story"}) || !slices.Equal(as, []string{"Once upon a time"}) {
		t.Fatalf("continue sent users %q assistants %q", users, as)
	}
	b := v.oa.bodies()
	var req struct {
		Messages []struct {
			Role string `json:"role"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(b[len(b)-1], &req); err != nil || req.Messages[len(req.Messages)-1].Role != "assistant" {
		t.Fatalf("the cut answer is not the last message sent (%v)", err)
	}
	if got := texts(transcriptOf(t, v.s, v.sid), "assistant"); !slices.Equal(got, []string{"Once upon a time", " there was a fox."}) {
		t.Fatalf("page after continue: %q", got)
	}
	// Only the end of the conversation can be continued.
	v.send(t, "again", "fine")
	v.post(t, "/api/runs/"+r1+"/continue", nil, http.StatusConflict, "")
}

// A retry with another model: that model answers the same question alone.
func TestRetryWithAnotherModel(t *testing.T) {
	t.Parallel()
	oa := newOpenAIFake(t, openaiTestKey, openaiTestKey)
	an := newAnthropicFake(t, anthropicTestKey, anthropicTestKey)
	s := startWith(t, oa, an)
	sid := s.NewSession(t)
	st := e2etest.OpenStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
	oa.stream(oa.text("from openai"))
	r1 := sendModel(t, s, sid, "which model?", oa.ref())
	st.Until(t, "run.done", e2etest.IsDone(r1.ID))

	an.stream(an.text("from anthropic"))
	before := len(an.bodies())
	var r2 e2etest.RunJSON
	if c := e2etest.Do(t, "POST", s.URL+"/api/runs/"+r1.ID+"/retry", map[string]any{"model": an.ref()}, &r2); c != http.StatusAccepted {
		t.Fatalf("retry: %d", c)
	}
	got := summarise(t, st.Until(t, "run.done", e2etest.IsDone(r2.ID)), r2.ID)
	if got.done.Status != "completed" || got.started.Provider != an.name {
		t.Fatalf("the retry ran on %q: %+v", got.started.Provider, got.done)
	}
	if n := len(an.bodies()) - before; n != 1 {
		t.Fatalf("anthropic got %d requests", n)
	}
	if got := texts(transcriptOf(t, s, sid), "assistant"); !slices.Equal(got, []string{"from anthropic"}) {
		t.Fatalf("page after the retry: %q", got)
	}
	// The request carries only the question, not the other model's answer.
	b := an.bodies()
	if strings.Contains(string(b[len(b)-1]), "from openai") {
		t.Fatal("the retry's model was sent the answer it replaces")
	}
}
