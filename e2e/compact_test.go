package e2e

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
)

// POST /api/sessions/{id}/compact runs a compaction: the journal gets a
// context.compacted event, the transcript keeps every message and marks
// the point, and the session goes on working.
func TestManualCompaction(t *testing.T) {
	s := startServer(t, script(turn(text("An answer that is long enough to be worth summarising later on."))))
	sid := s.newSession(t)
	st := openStream(t, s.URL+"/api/sessions/"+sid+"/events", nil)
	for _, msg := range []string{"first question", "second question", "third question"} {
		r := s.send(t, sid, msg)
		st.until(t, "run done", isDone(r.ID))
	}

	var compact runJSON
	if c := do(t, "POST", s.URL+"/api/sessions/"+sid+"/compact", nil, &compact); c != http.StatusAccepted {
		t.Fatalf("compact: %d", c)
	}
	evs := st.until(t, "compaction done", isDone(compact.ID))
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
	if r := s.run(t, compact.ID); r.Status != "completed" {
		t.Fatalf("compact run %s", r.Status)
	}

	var msgs struct {
		Items []struct{ Kind string } `json:"items"`
	}
	do(t, "GET", s.URL+"/api/sessions/"+sid+"/messages", nil, &msgs)
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
	r := s.send(t, sid, "fourth question")
	st.until(t, "run after compaction", isDone(r.ID))
	if got := s.run(t, r.ID).Status; got != "completed" {
		t.Fatalf("run after compaction: %s", got)
	}
}
