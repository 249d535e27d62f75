package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

// branchItem is what the branch tests read of a transcript item.
type branchItem struct {
	ID     string `json:"id"`
	Kind   string `json:"kind"`
	Text   string `json:"text"`
	Queued bool   `json:"queued"`
}

func branchMessages(t *testing.T, s *e2etest.Server, sid string) []branchItem {
	t.Helper()
	var out struct {
		Items []branchItem `json:"items"`
	}
	if c := e2etest.Do(t, "GET", s.URL+"/api/sessions/"+sid+"/messages", nil, &out); c != http.StatusOK {
		t.Fatalf("GET messages of %s: %d", sid, c)
	}
	var msgs []branchItem
	for _, it := range out.Items {
		if it.Kind == "user" || it.Kind == "assistant" {
			msgs = append(msgs, it)
		}
	}
	return msgs
}

// modelTurns is the conversation of one Chat Completions request: role
// and text of every message but the system prompt.
func modelTurns(t *testing.T, body []byte) []string {
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
	var out []string
	for _, m := range req.Messages {
		if m.Role == "system" {
			continue
		}
		var text string
		if json.Unmarshal(m.Content, &text) != nil {
			var parts []struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal(m.Content, &parts)
			for _, p := range parts {
				text += p.Text
			}
		}
		out = append(out, m.Role+": "+text)
	}
	return out
}

// Issue 15's acceptance: branch at message 3 of 10. The branch's model
// history is exactly messages 1–3 (then the branch's own message), its
// lineage points back, and the parent is unchanged, also for the model.
func TestBranchAtMessageThreeOfTen(t *testing.T) {
	t.Parallel()
	oa := newOpenAIFake(t, openaiTestKey, openaiTestKey)
	s := startWith(t, oa)
	parent := s.NewSession(t)
	var want []string
	for i := 1; i <= 5; i++ {
		q, a := fmt.Sprintf("question %d", i), fmt.Sprintf("answer %d", i)
		oa.stream(oa.text(a))
		r := sendModel(t, s, parent, q, oa.ref())
		s.WaitStatus(t, r.ID, "completed")
		want = append(want, "user: "+q, "assistant: "+a)
	}
	before := branchMessages(t, s, parent)
	if len(before) != 10 {
		t.Fatalf("parent has %d messages, want 10: %+v", len(before), before)
	}

	var br struct {
		ID                  string `json:"id"`
		ParentSessionID     string `json:"parent_session_id"`
		BranchedFromEventID int64  `json:"branched_from_event_id"`
	}
	if c := e2etest.Do(t, "POST", s.URL+"/api/sessions/"+parent+"/branch", map[string]any{"item_id": before[2].ID}, &br); c != http.StatusCreated {
		t.Fatalf("branch: %d", c)
	}
	if br.ID == "" || br.ID == parent || br.ParentSessionID != parent || br.BranchedFromEventID == 0 {
		t.Fatalf("branch = %+v, want a new session whose lineage is %s", br, parent)
	}
	var got struct {
		ParentSessionID string `json:"parent_session_id"`
	}
	e2etest.Do(t, "GET", s.URL+"/api/sessions/"+br.ID, nil, &got)
	if got.ParentSessionID != parent {
		t.Fatalf("GET branch: parent_session_id %q, want %q", got.ParentSessionID, parent)
	}
	msgs := branchMessages(t, s, br.ID)
	if len(msgs) != 3 || msgs[2].Text != "question 2" || msgs[2].Queued {
		t.Fatalf("branch transcript = %+v, want messages 1-3, none queued", msgs)
	}

	oa.stream(oa.text("branch answer"))
	r := sendModel(t, s, br.ID, "in the branch", oa.ref())
	s.WaitStatus(t, r.ID, "completed")
	bodies := oa.bodies()
	if h, w := modelTurns(t, bodies[len(bodies)-1]), append(slices.Clone(want[:3]), "user: in the branch"); !slices.Equal(h, w) {
		t.Fatalf("the branch's model history = %q, want %q", h, w)
	}

	if after := branchMessages(t, s, parent); !slices.Equal(after, before) {
		t.Fatalf("parent changed by the branch:\n%+v\nwas\n%+v", after, before)
	}
	oa.stream(oa.text("parent answer"))
	r = sendModel(t, s, parent, "in the parent", oa.ref())
	s.WaitStatus(t, r.ID, "completed")
	bodies = oa.bodies()
	if h, w := modelTurns(t, bodies[len(bodies)-1]), append(slices.Clone(want), "user: in the parent"); !slices.Equal(h, w) {
		t.Fatalf("the parent's model history = %q, want %q", h, w)
	}

	for _, tc := range []struct {
		name string
		body map[string]any
		code int
	}{
		{"no item", map[string]any{}, http.StatusBadRequest},
		{"unknown item", map[string]any{"item_id": "msg_nope"}, http.StatusNotFound},
	} {
		var e e2etest.ErrorJSON
		if c := e2etest.Do(t, "POST", s.URL+"/api/sessions/"+parent+"/branch", tc.body, &e); c != tc.code || e.Error.Code == "" {
			t.Errorf("%s: %d %+v, want %d with a code", tc.name, c, e, tc.code)
		}
	}
	if n := len(s.Sessions(t)); n != 2 {
		t.Errorf("%d sessions after refused branches, want 2", n)
	}
}

// Each answer carries the tokens and cost of the model call that wrote it,
// in GET messages (what a reload shows), and they add up to the run's.
func TestPerMessageUsage(t *testing.T) {
	t.Parallel()
	oa := newOpenAIFake(t, openaiTestKey, openaiTestKey)
	s := startWith(t, oa)
	sid := s.NewSession(t)
	oa.stream(oa.tools(fakeCall{id: "call_1", name: "read_file", args: `{"path":"README.md"}`}))
	oa.stream(oa.text("The readme ", "is short."))
	r := sendModel(t, s, sid, "read the readme", oa.ref())
	s.WaitStatus(t, r.ID, "completed")

	var msgs struct {
		Items []struct {
			Kind  string `json:"kind"`
			Usage *struct {
				InputTokens  int64   `json:"input_tokens"`
				OutputTokens int64   `json:"output_tokens"`
				CostUSD      float64 `json:"cost_usd"`
			} `json:"usage"`
		} `json:"items"`
	}
	e2etest.Do(t, "GET", s.URL+"/api/sessions/"+sid+"/messages", nil, &msgs)
	var run struct {
		Usage struct {
			InputTokens  int64   `json:"input_tokens"`
			OutputTokens int64   `json:"output_tokens"`
			CostUSD      float64 `json:"cost_usd"`
		} `json:"usage"`
	}
	e2etest.Do(t, "GET", s.URL+"/api/runs/"+r.ID, nil, &run)
	var in, out int64
	var cost float64
	var priced []string
	for _, it := range msgs.Items {
		if it.Usage == nil {
			continue
		}
		priced = append(priced, it.Kind)
		in, out, cost = in+it.Usage.InputTokens, out+it.Usage.OutputTokens, cost+it.Usage.CostUSD
		if it.Usage.CostUSD <= 0 {
			t.Errorf("%s item without a cost: %+v", it.Kind, it.Usage)
		}
	}
	// Two model calls: the tool call's turn (on its tool item), the answer.
	if !slices.Equal(priced, []string{"tool_call", "assistant"}) {
		t.Fatalf("items with usage: %v, want the tool call's and the answer's", priced)
	}
	if in != run.Usage.InputTokens || out != run.Usage.OutputTokens || fmt.Sprintf("%.9f", cost) != fmt.Sprintf("%.9f", run.Usage.CostUSD) {
		t.Fatalf("items add up to %d/%d/$%f, the run says %+v", in, out, cost, run.Usage)
	}
}

// A message that has no end yet cannot be a branch point: the text still
// streaming, a message whose run waits behind it. Nothing is written.
func TestBranchRefusesUnfinished(t *testing.T) {
	t.Parallel()
	oa := newOpenAIFake(t, openaiTestKey, openaiTestKey)
	s := startWith(t, oa)
	sid := s.NewSession(t)
	oa.slow(oa.text("one ", "two ", "three ", "four ", "five ", "six"), 300*time.Millisecond)
	first := sendModel(t, s, sid, "a long answer please", oa.ref())
	s.WaitStatus(t, first.ID, "running")
	second := sendModel(t, s, sid, "and then this", oa.ref())

	var items struct {
		Items []struct {
			ID     string `json:"id"`
			Kind   string `json:"kind"`
			RunID  string `json:"run_id"`
			Open   bool   `json:"open"`
			Queued bool   `json:"queued"`
		} `json:"items"`
	}
	var open, queued string
	deadline := time.Now().Add(15 * time.Second)
	for ready := func() bool {
		e2etest.Do(t, "GET", s.URL+"/api/sessions/"+sid+"/messages", nil, &items)
		open, queued = "", ""
		for _, it := range items.Items {
			if it.Kind == "assistant" && it.Open {
				open = it.ID
			}
			if it.Kind == "user" && it.RunID == second.ID && it.Queued {
				queued = it.ID
			}
		}
		return open != "" && queued != ""
	}; !ready(); {
		if time.Now().After(deadline) {
			t.Fatalf("no streaming answer and queued message: %+v", items.Items)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for name, item := range map[string]string{"streaming": open, "queued": queued} {
		var e e2etest.ErrorJSON
		if c := e2etest.Do(t, "POST", s.URL+"/api/sessions/"+sid+"/branch", map[string]any{"item_id": item}, &e); c != http.StatusConflict || e.Error.Code != "conflict" {
			t.Errorf("branch at the %s message: %d %+v, want 409 conflict", name, c, e)
		}
	}
	if n := len(s.Sessions(t)); n != 1 {
		t.Errorf("%d sessions after refused branches, want 1", n)
	}
	oa.stream(oa.text("done"))
	s.WaitStatus(t, second.ID, "completed")
}
