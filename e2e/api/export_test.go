package api

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

// exportedItem is what must survive an export and an import: everything
// of a transcript item but its ids, times and event cursors.
type exportedItem struct {
	Kind   string `json:"kind"`
	Text   string `json:"text"`
	Status string `json:"status"`
	Tool   *struct {
		Name   string          `json:"name"`
		Args   json.RawMessage `json:"args"`
		Status string          `json:"status"`
		Output string          `json:"output"`
	} `json:"tool"`
}

func exportedTranscript(t *testing.T, s *e2etest.Server, sid string) []exportedItem {
	t.Helper()
	var out struct {
		Items []exportedItem `json:"items"`
	}
	if c := e2etest.Do(t, "GET", s.URL+"/api/sessions/"+sid+"/messages", nil, &out); c != http.StatusOK {
		t.Fatalf("GET messages: %d", c)
	}
	return out.Items
}

func getBody(t *testing.T, url string) (int, string, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), b
}

// Export → import → the same transcript, for a branch too (its file holds
// the inherited history); Markdown reads as the conversation; bad imports
// are refused with stable codes and write nothing.
func TestExportImportRoundTrip(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Scenarios(
		e2etest.Scenario("look", e2etest.Turn(e2etest.Call("read_file", `{"path":"README.md"}`)), e2etest.Turn(e2etest.Text("It is the **readme**."))),
		e2etest.Scenario("", e2etest.Turn(e2etest.Text("Plain answer."))),
	), e2etest.WithWorkspace(newWorkspace(t)))
	sid := s.NewSession(t)
	for _, m := range []string{"Please look at the readme", "Thanks"} {
		s.WaitStatus(t, s.Send(t, sid, m).ID, "completed")
	}
	orig := exportedTranscript(t, s, sid)
	if len(orig) < 5 {
		t.Fatalf("transcript = %+v, want two exchanges with a tool call", orig)
	}

	code, ctype, raw := getBody(t, s.URL+"/api/sessions/"+sid+"/export?format=json")
	if code != http.StatusOK || !strings.HasPrefix(ctype, "application/json") {
		t.Fatalf("export json: %d %s %s", code, ctype, raw)
	}
	var imported e2etest.SessionJSON
	if c := e2etest.Do(t, "POST", s.URL+"/api/sessions/import", json.RawMessage(raw), &imported); c != http.StatusCreated || imported.ID == sid {
		t.Fatalf("import: %d %+v", c, imported)
	}
	if got := exportedTranscript(t, s, imported.ID); !reflect.DeepEqual(got, orig) {
		t.Fatalf("imported transcript\n%+v\nwant\n%+v", got, orig)
	}

	code, ctype, md := getBody(t, s.URL+"/api/sessions/"+sid+"/export?format=md")
	if code != http.StatusOK || !strings.HasPrefix(ctype, "text/markdown") {
		t.Fatalf("export md: %d %s", code, ctype)
	}
	for _, want := range []string{"# Please look at the readme", "## You\n\nPlease look at the readme", "> Tool `read_file`", "## Assistant\n\nIt is the **readme**.", "## You\n\nThanks", "Plain answer."} {
		if !strings.Contains(string(md), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}

	// A branch's export holds its inherited history.
	var br e2etest.SessionJSON
	e2etest.Do(t, "POST", s.URL+"/api/sessions/"+sid+"/branch", map[string]any{"item_id": lastAssistantID(t, s, sid)}, &br)
	_, _, braw := getBody(t, s.URL+"/api/sessions/"+br.ID+"/export?format=json")
	var bimp e2etest.SessionJSON
	if c := e2etest.Do(t, "POST", s.URL+"/api/sessions/import", json.RawMessage(braw), &bimp); c != http.StatusCreated {
		t.Fatalf("import of a branch: %d", c)
	}
	if got, want := exportedTranscript(t, s, bimp.ID), exportedTranscript(t, s, br.ID); !reflect.DeepEqual(got, want) || len(got) == 0 {
		t.Fatalf("imported branch transcript\n%+v\nwant\n%+v", got, want)
	}

	sessions := len(s.Sessions(t))
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	with := func(k string, v any) map[string]any {
		c := map[string]any{}
		for kk, vv := range doc {
			c[kk] = vv
		}
		c[k] = v
		return c
	}
	badEvent := with("runs", []any{map[string]any{"status": "completed", "events": []any{map[string]any{"type": "no.such.type", "payload": map[string]any{}}}}})
	for _, tc := range []struct {
		name string
		body any
		code int
		want string
	}{
		{"unknown version", with("version", 99), http.StatusBadRequest, "unsupported_version"},
		{"not an export", with("format", "something.else"), http.StatusBadRequest, "invalid_input"},
		{"unknown field", with("surprise", 1), http.StatusBadRequest, "invalid_input"},
		{"unknown event type", badEvent, http.StatusBadRequest, "invalid_input"},
		{"too large", with("session", map[string]any{"title": strings.Repeat("x", 65<<20)}), http.StatusRequestEntityTooLarge, "body_too_large"},
	} {
		var e e2etest.ErrorJSON
		if c := e2etest.Do(t, "POST", s.URL+"/api/sessions/import", tc.body, &e); c != tc.code || e.Error.Code != tc.want {
			t.Errorf("%s: %d %q, want %d %q", tc.name, c, e.Error.Code, tc.code, tc.want)
		}
	}
	if n := len(s.Sessions(t)); n != sessions {
		t.Errorf("%d sessions after refused imports, want %d", n, sessions)
	}
	var e e2etest.ErrorJSON
	if c := e2etest.Do(t, "GET", s.URL+"/api/sessions/"+sid+"/export?format=pdf", nil, &e); c != http.StatusBadRequest || e.Error.Code != "invalid_input" {
		t.Errorf("format=pdf: %d %+v", c, e)
	}
}

func lastAssistantID(t *testing.T, s *e2etest.Server, sid string) string {
	t.Helper()
	var out struct {
		Items []struct {
			ID   string `json:"id"`
			Kind string `json:"kind"`
		} `json:"items"`
	}
	e2etest.Do(t, "GET", s.URL+"/api/sessions/"+sid+"/messages", nil, &out)
	for i := len(out.Items) - 1; i >= 0; i-- {
		if out.Items[i].Kind == "assistant" {
			return out.Items[i].ID
		}
	}
	t.Fatal("no assistant message")
	return ""
}
