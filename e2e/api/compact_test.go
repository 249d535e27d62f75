package api

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
)

// POST /api/sessions/{id}/compact runs a compaction: the journal gets a
// context.compacted event, the transcript keeps every message and marks
// the point, and the session goes on working.
func TestManualCompaction(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("An answer that is long enough to be worth summarising later on."))))
	sid := s.NewSession(t)
	st := e2etest.OpenStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
	for _, msg := range []string{"first question", "second question", "third question"} {
		r := s.Send(t, sid, msg)
		st.Until(t, "run done", e2etest.IsDone(r.ID))
	}

	var compact e2etest.RunJSON
	if c := e2etest.Do(t, "POST", s.URL+"/api/sessions/"+sid+"/compact", nil, &compact); c != http.StatusAccepted {
		t.Fatalf("compact: %d", c)
	}
	evs := st.Until(t, "compaction done", e2etest.IsDone(compact.ID))
	var got *event.ContextCompactedPayload
	for _, e := range evs {
		if e.Type == event.ContextCompacted {
			var p event.ContextCompactedPayload
			if err := json.Unmarshal(e.Payload, &p); err != nil {
				t.Fatal(err)
			}
			got = &p
		}
	}
	if got == nil || got.Reason != "manual" || got.Covered == 0 || got.Summary == "" || got.PreservedCount == 0 {
		t.Fatalf("context.compacted = %+v", got)
	}
	if r := s.Run(t, compact.ID); r.Status != "completed" {
		t.Fatalf("compact run %s", r.Status)
	}

	var msgs struct {
		Items []struct{ Kind string } `json:"items"`
	}
	e2etest.Do(t, "GET", s.URL+"/api/sessions/"+sid+"/messages", nil, &msgs)
	users, marks := 0, 0
	for _, it := range msgs.Items {
		switch it.Kind {
		case "user":
			users++
		case "compaction":
			marks++
		}
	}
	if users != 3 || marks != 1 {
		t.Fatalf("transcript has %d user messages and %d compaction marks", users, marks)
	}

	// The session goes on from the summary.
	r := s.Send(t, sid, "fourth question")
	st.Until(t, "run after compaction", e2etest.IsDone(r.ID))
	if got := s.Run(t, r.ID).Status; got != "completed" {
		t.Fatalf("run after compaction: %s", got)
	}
}
