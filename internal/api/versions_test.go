package api_test

import "testing"

// Bad input to the versions routes (issue 15) gets a stable code and
// changes nothing; a session with a run in progress refuses them all.
func TestVersionsErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t) // no runner: a sent message stays queued, so busy
	s := e.session(t)
	busy := e.send(t, s.ID, "hi")
	idle := e.session(t)
	ses := "/api/sessions/" + s.ID

	e.runErrCases(t, []errCase{
		{name: "retry: malformed id", method: "POST", path: "/api/runs/x/retry", status: 404, code: "not_found"},
		{name: "retry: unknown run", method: "POST", path: "/api/runs/" + noRun + "/retry", status: 404, code: "not_found"},
		{name: "retry: unknown field", method: "POST", path: "/api/runs/" + busy.ID + "/retry", body: `{"modle":"x"}`, status: 400, code: "invalid_input"},
		{name: "retry: busy session", method: "POST", path: "/api/runs/" + busy.ID + "/retry", status: 409, code: "session_busy"},
		{name: "continue: unknown run", method: "POST", path: "/api/runs/" + noRun + "/continue", status: 404, code: "not_found"},
		{name: "continue: busy session", method: "POST", path: "/api/runs/" + busy.ID + "/continue", status: 409, code: "session_busy"},
		{name: "edit: no body", method: "POST", path: ses + "/edit", status: 400, code: "invalid_input"},
		{name: "edit: empty content", method: "POST", path: ses + "/edit", body: `{"item_id":"msg_x","content":" "}`, status: 400, code: "invalid_input"},
		{name: "edit: busy session", method: "POST", path: ses + "/edit", body: `{"item_id":"msg_x","content":"again"}`, status: 409, code: "session_busy"},
		{name: "edit: unknown message", method: "POST", path: "/api/sessions/" + idle.ID + "/edit", body: `{"item_id":"msg_x","content":"again"}`, status: 404, code: "not_found"},
		{name: "edit: unknown session", method: "POST", path: "/api/sessions/ses_00000000000000000000000000/edit", body: `{"item_id":"msg_x","content":"again"}`, status: 404, code: "not_found"},
		{name: "undo: zero turns", method: "POST", path: ses + "/undo", body: `{"turns":0}`, status: 400, code: "invalid_input"},
		{name: "undo: turns and restore", method: "POST", path: ses + "/undo", body: `{"turns":1,"restore":true}`, status: 400, code: "invalid_input"},
		{name: "undo: busy session", method: "POST", path: ses + "/undo", body: `{"turns":1}`, status: 409, code: "session_busy"},
		{name: "undo: nothing to undo", method: "POST", path: "/api/sessions/" + idle.ID + "/undo", status: 409, code: "nothing_to_undo"},
		{name: "restore: nothing to restore", method: "POST", path: "/api/sessions/" + idle.ID + "/undo", body: `{"restore":true}`, status: 409, code: "nothing_to_restore"},
		{name: "versions: no body", method: "POST", path: ses + "/versions", status: 400, code: "invalid_input"},
		{name: "versions: busy session", method: "POST", path: ses + "/versions", body: `{"item_id":"msg_x","version":1}`, status: 409, code: "session_busy"},
		{name: "versions: unknown item", method: "POST", path: "/api/sessions/" + idle.ID + "/versions", body: `{"item_id":"msg_x","version":1}`, status: 404, code: "not_found"},
	})
	// The refused retry left the queued run alone.
	if r := e.run(t, busy.ID); r.Status != "queued" {
		t.Errorf("the busy session's run is %s", r.Status)
	}
}
