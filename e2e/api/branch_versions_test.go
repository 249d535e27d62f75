package api

import (
	"net/http"
	"slices"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

// A branch of a session with versions inherits the conversation that was
// on screen at the branch point, not the versions put aside: its
// transcript and its first model request hold the retried answer only,
// and the parent keeps all its versions (issue 15).
func TestBranchInheritsTheVisibleVersion(t *testing.T) {
	t.Parallel()
	v := newVersionsSession(t)
	v.send(t, "name a colour", "red")
	r2 := v.send(t, "name a fruit", "stone")
	v.post(t, "/api/runs/"+r2+"/retry", map[string]any{}, http.StatusAccepted, "apple")
	v.send(t, "name a tree", "oak")

	items := transcriptOf(t, v.s, v.sid)
	var at string
	for _, it := range items {
		if it.Kind == "assistant" && it.Text == "apple" {
			at = it.ID
		}
	}
	if at == "" {
		t.Fatalf("no retried answer on screen: %+v", items)
	}
	var br struct {
		ID string `json:"id"`
	}
	if c := e2etest.Do(t, "POST", v.s.URL+"/api/sessions/"+v.sid+"/branch", map[string]any{"item_id": at}, &br); c != http.StatusCreated {
		t.Fatalf("branch: %d", c)
	}
	bitems := transcriptOf(t, v.s, br.ID)
	if u, a := texts(bitems, "user"), texts(bitems, "assistant"); !slices.Equal(u, []string{"name a colour", "name a fruit"}) ||
		!slices.Equal(a, []string{"red", "apple"}) {
		t.Fatalf("branch transcript users %q assistants %q, want the visible path up to the retried answer", u, a)
	}

	v.oa.stream(v.oa.text("cherry"))
	r := sendModel(t, v.s, br.ID, "another fruit", v.oa.ref())
	v.s.WaitStatus(t, r.ID, "completed")
	users, as := v.lastSent(t)
	if !slices.Equal(users, []string{"name a colour", "name a fruit", "another fruit"}) || !slices.Equal(as, []string{"red", "apple"}) {
		t.Fatalf("the branch's model request: users %q assistants %q, want only the visible path", users, as)
	}

	// The parent is unchanged: the retried message keeps both versions.
	after := transcriptOf(t, v.s, v.sid)
	if a := texts(after, "assistant"); !slices.Equal(a, []string{"red", "apple", "oak"}) {
		t.Fatalf("parent after the branch shows %q", a)
	}
	if u := after[2]; u.Kind != "user" || u.Versions == nil || u.Versions.Count != 2 {
		t.Fatalf("parent's retried message lost its versions: %+v", u)
	}
}
