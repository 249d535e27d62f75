package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

// Search through the real server (issue 15): an answer the model streams
// in fragments is found once complete, once (the fragments are not
// indexed), in its session only, and the hit names the transcript item the
// workbench scrolls to.
func TestSearchFindsAStreamedAnswer(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Scenarios(
		e2etest.Scenario("where", e2etest.Turn(e2etest.Paced("The ocelot sleeps in the server room, by the rack.", 3, 1))),
		e2etest.Scenario("", e2etest.Turn(e2etest.Text("Noted."))),
	))
	target, other := s.NewSession(t), s.NewSession(t)
	s.WaitStatus(t, s.Send(t, other, "hello").ID, "completed")
	s.WaitStatus(t, s.Send(t, target, "where is the cat?").ID, "completed")

	var got struct {
		Hits []struct {
			SessionID string `json:"session_id"`
			ItemID    string `json:"item_id"`
			Kind      string `json:"kind"`
			Snippet   string `json:"snippet"`
		} `json:"hits"`
	}
	if c := e2etest.Do(t, "GET", s.URL+"/api/search?q=ocelot", nil, &got); c != http.StatusOK {
		t.Fatalf("search: %d", c)
	}
	if len(got.Hits) != 1 || got.Hits[0].SessionID != target || got.Hits[0].Kind != "message.done" ||
		!strings.Contains(got.Hits[0].Snippet, "\x02ocelot\x03") {
		t.Fatalf("hits = %+v, want the one answer of %s", got.Hits, target)
	}
	var msgs struct {
		Items []struct{ ID, Kind, Text string } `json:"items"`
	}
	e2etest.Do(t, "GET", s.URL+"/api/sessions/"+target+"/messages", nil, &msgs)
	found := false
	for _, it := range msgs.Items {
		if it.ID == got.Hits[0].ItemID {
			found = strings.Contains(it.Text, "ocelot")
		}
	}
	if !found {
		t.Errorf("hit item %q is not the transcript's answer: %+v", got.Hits[0].ItemID, msgs.Items)
	}
}
