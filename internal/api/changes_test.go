package api_test

import (
	"net/http"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/auth"
)

// The changes routes: a viewer reads but may not roll back (refused before
// anything is looked at); ids of the wrong shape are not found; a server
// without checkpoints (no git) says so with a stable code.
func TestChangesRoutes(t *testing.T) {
	e := newEnv(t) // no Options.Changes: the server takes no checkpoints
	s := e.session(t)
	ru := e.send(t, s.ID, "first")
	viewer := e.login(e.addPerson("vic", auth.RoleViewer))
	op := e.login(e.addPerson("ops", auth.RoleOperator))
	const ckp = "ckp_01m87m37b0dxkqkgknqv73emr7"

	for _, w := range []struct{ name, path, body string }{
		{"revert a run", "/api/runs/" + ru.ID + "/revert", `{"dry_run":true}`},
		{"restore a checkpoint", "/api/checkpoints/" + ckp + "/restore", `{"dry_run":true}`},
	} {
		t.Run("viewer may not "+w.name, func(t *testing.T) {
			viewer.req("POST", w.path, w.body).want(t, http.StatusForbidden, "forbidden")
		})
		t.Run("without checkpoints: "+w.name, func(t *testing.T) {
			op.req("POST", w.path, w.body).want(t, http.StatusServiceUnavailable, "checkpoints_unavailable")
		})
	}
	for _, path := range []string{
		"/api/sessions/" + s.ID + "/checkpoints", "/api/sessions/" + s.ID + "/changes",
		"/api/runs/" + ru.ID + "/changes", "/api/checkpoints/" + ckp + "/diff",
	} {
		viewer.req("GET", path, "").want(t, http.StatusServiceUnavailable, "checkpoints_unavailable")
	}
	for _, path := range []string{
		"/api/sessions/nope/checkpoints", "/api/runs/ses_x/changes", "/api/checkpoints/run_01m87m37b0dxkqkgknqv73emr7/diff",
	} {
		viewer.req("GET", path, "").want(t, http.StatusNotFound, "not_found")
	}
	op.req("GET", "/api/checkpoints/"+ckp+"/diff?to=later", "").want(t, http.StatusBadRequest, "invalid_input")
	op.req("POST", "/api/runs/"+ru.ID+"/revert", `{"to":"`+ckp+`"}`).want(t, http.StatusBadRequest, "invalid_input")
}
