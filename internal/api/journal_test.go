package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/control"
)

type journalJSON struct {
	RunID  string `json:"run_id"`
	Events []struct {
		ID      int64           `json:"id"`
		RunID   string          `json:"run_id"`
		Type    string          `json:"type"`
		Payload json.RawMessage `json:"payload"`
	} `json:"events"`
	Next int64 `json:"next"`
	More bool  `json:"more"`
}

// A run's journal comes whole, raw payloads included, page by page.
func TestRunJournal(t *testing.T) {
	e := newEnv(t, withRunner(script(turn(call("run_command", `{"command":"echo journal-me"}`)), turn(text("done")))))
	s := e.session(t)
	ru := e.send(t, s.ID, "go")
	waiting := e.waitRun(t, ru.ID, "awaiting_approval", status("awaiting_approval"))
	e.req("POST", "/api/requests/"+waiting.PendingRequestIDs[0]+"/respond", `{"choice":"once"}`).want(t, 200, "")
	e.waitRun(t, ru.ID, "completed", status("completed"))

	r := e.req("GET", "/api/runs/"+ru.ID+"/journal", "")
	r.want(t, http.StatusOK, "")
	var all journalJSON
	r.decode(t, &all)
	if all.RunID != ru.ID || all.More || len(all.Events) < 4 {
		t.Fatalf("journal %+v", all)
	}
	types := map[string]bool{}
	for _, ev := range all.Events {
		if ev.RunID != ru.ID || len(ev.Payload) == 0 {
			t.Errorf("event %+v", ev)
		}
		types[ev.Type] = true
	}
	for _, want := range []string{"run.started", "tool.started", "approval.requested", "run.done"} {
		if !types[want] {
			t.Errorf("no %s in %v", want, types)
		}
	}

	var paged []int64
	after := int64(0)
	for range 100 {
		var p journalJSON
		r := e.req("GET", fmt.Sprintf("/api/runs/%s/journal?limit=2&after=%d", ru.ID, after), "")
		r.want(t, http.StatusOK, "")
		r.decode(t, &p)
		for _, ev := range p.Events {
			paged = append(paged, ev.ID)
		}
		after = p.Next
		if !p.More {
			break
		}
		if len(p.Events) != 2 {
			t.Fatalf("a page with more after it holds %d events", len(p.Events))
		}
	}
	if len(paged) != len(all.Events) || paged[len(paged)-1] != all.Events[len(all.Events)-1].ID {
		t.Errorf("paged %v, whole %d events", paged, len(all.Events))
	}

	e.runErrCases(t, []errCase{
		{name: "unknown run", method: "GET", path: "/api/runs/run_nothere0000000000000000/journal", status: 404, code: control.CodeNotFound},
		{name: "bad run id", method: "GET", path: "/api/runs/x/journal", status: 404, code: control.CodeNotFound},
		{name: "bad limit", method: "GET", path: "/api/runs/" + ru.ID + "/journal?limit=1001", status: 400, code: control.CodeInvalidInput},
		{name: "bad after", method: "GET", path: "/api/runs/" + ru.ID + "/journal?after=x", status: 400, code: control.CodeInvalidCursor},
	})
}
