package api

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/transcript"
)

// TestMessagesMatchFullFold: GET /messages skips the streamed fragments of
// finished runs; what it serves must equal the fold of the whole journal,
// and a run still streaming must show its text so far.
func TestMessagesMatchFullFold(t *testing.T) {
	t.Parallel()
	srv := e2etest.StartServer(t, e2etest.Scenarios(
		e2etest.Scenario("done", e2etest.Turn(e2etest.Reasoning("let me think about it"), e2etest.Text("first part, "), e2etest.Call("list_dir", `{"path":"."}`)),
			e2etest.Turn(e2etest.Text("and the end of the answer"))),
		e2etest.Scenario("slow", e2etest.Turn(e2etest.Reasoning("slowly"), e2etest.SlowText(150, 20))),
	), e2etest.WithApprovalMode("off"))
	sid := srv.NewSession(t)
	r1 := srv.Send(t, sid, "done please")
	srv.WaitStatus(t, r1.ID, "completed")
	st := e2etest.OpenStream(t, srv.URL+"/api/sessions/"+sid+"/events", nil)
	defer st.Close()
	r2 := srv.Send(t, sid, "slow please")
	journal := st.Until(t, "some fragments of the slow run", func(e event.Event) bool {
		return e.RunID == r2.ID && e.Type == event.MessageDelta && e.Seq > 12
	})

	messages := func() []transcript.Item {
		var got struct {
			Items []transcript.Item `json:"items"`
		}
		e2etest.Do(t, "GET", srv.URL+"/api/sessions/"+sid+"/messages", nil, &got)
		return got.Items
	}
	// created_at of a finished segment is when it closed (its first
	// fragment is not read); everything else must be equal.
	asJSON := func(items []transcript.Item) string {
		c := make([]transcript.Item, len(items))
		for i, it := range items {
			c[i] = it
			if it.Kind == transcript.KindAssistant || it.Kind == transcript.KindReasoning {
				c[i].CreatedAt = event.Time{}
			}
		}
		b, _ := json.Marshal(c)
		return string(b)
	}

	// Mid-stream: the finished run exactly as the full fold has it, the
	// streaming answer open with its text so far.
	mid := messages()
	var firstRun []transcript.Item
	var open *transcript.Item
	for i, it := range mid {
		switch {
		case it.RunID == r1.ID:
			firstRun = append(firstRun, it)
		case it.Kind == transcript.KindAssistant:
			open = &mid[i]
		}
	}
	if want := transcript.Fold(srv.Journal(t, r1.ID)); asJSON(firstRun) != asJSON(want) {
		t.Fatalf("finished run: /messages differs from the full fold\n got %s\nwant %s", asJSON(firstRun), asJSON(want))
	}
	if open == nil || !open.Open || open.CreatedAt.IsZero() || !strings.HasPrefix(strings.Repeat("tok ", 150), open.Text) || len(open.Text) < 8 {
		t.Fatalf("streaming answer mid-run = %+v", open)
	}

	journal = append(journal, st.Until(t, "the slow run's end", e2etest.IsDone(r2.ID))...)
	all := append(srv.Journal(t, r1.ID), srv.Journal(t, r2.ID)...)
	if got, want := messages(), transcript.FoldRuns(all, []string{r1.ID, r2.ID}, ""); asJSON(got) != asJSON(want) {
		t.Fatalf("finished: /messages differs from the full fold\n got %s\nwant %s", asJSON(got), asJSON(want))
	}
	_ = journal
}
