package api_test

import (
	"net/http"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/auth"
)

type userJSON struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Role     string `json:"role"`
	Disabled bool   `json:"disabled"`
}

func TestUsers(t *testing.T) {
	e := newEnv(t)
	// On an open server the local principal (admin) adds the first
	// account, and sign-in is required at once.
	r := e.req("POST", "/api/users", `{"name":"root","role":"admin","password":"root-password"}`)
	r.want(t, http.StatusCreated, "")
	e.req("GET", "/api/sessions", "").want(t, http.StatusUnauthorized, "unauthorized")
	var created struct{ User userJSON }
	r.decode(t, &created)
	root := person{password: "root-password"}
	root.ID, root.Name = created.User.ID, "root"
	adm := e.login(root)
	ops := e.login(e.addPerson("ops", auth.RoleOperator))

	ops.req("GET", "/api/users", "").want(t, http.StatusForbidden, "forbidden")
	ops.req("POST", "/api/users", `{"name":"x","role":"viewer","password":"long-enough"}`).want(t, http.StatusForbidden, "forbidden")

	hdr := []string{"Cookie", "caduceus_session=" + adm.cookie, "X-CSRF-Token", adm.csrf}
	e.runErrCases(t, []errCase{
		{name: "bad name", method: "POST", path: "/api/users", body: `{"name":"a b","role":"viewer","password":"long-enough"}`, header: hdr, status: 400, code: "bad_name"},
		{name: "name taken", method: "POST", path: "/api/users", body: `{"name":"OPS","role":"viewer","password":"long-enough"}`, header: hdr, status: 409, code: "name_taken"},
		{name: "bad role", method: "POST", path: "/api/users", body: `{"name":"x","role":"boss","password":"long-enough"}`, header: hdr, status: 400, code: "bad_role"},
		{name: "short password", method: "POST", path: "/api/users", body: `{"name":"x","role":"viewer","password":"short"}`, header: hdr, status: 400, code: "bad_password"},
		{name: "missing password", method: "POST", path: "/api/users", body: `{"name":"x","role":"viewer"}`, header: hdr, status: 400, code: "invalid_input"},
		{name: "demote the last admin", method: "PATCH", path: "/api/users/" + root.ID, body: `{"role":"operator"}`, header: hdr, status: 409, code: "last_admin"},
		{name: "disable the last admin", method: "PATCH", path: "/api/users/" + root.ID, body: `{"disabled":true}`, header: hdr, status: 409, code: "last_admin"},
		{name: "unknown user", method: "PATCH", path: "/api/users/usr_nope", body: `{"disabled":true}`, header: hdr, status: 404, code: "not_found"},
		{name: "bad role on patch", method: "PATCH", path: "/api/users/" + root.ID, body: `{"role":"boss"}`, header: hdr, status: 400, code: "bad_role"},
	})

	r = adm.req("POST", "/api/users", `{"name":"vic","role":"viewer","password":"vic-password"}`)
	r.want(t, http.StatusCreated, "")
	var vic struct{ User userJSON }
	r.decode(t, &vic)
	if vic.User.Name != "vic" || vic.User.Role != "viewer" || vic.User.Disabled {
		t.Fatalf("created %+v", vic.User)
	}
	var list struct{ Users []userJSON }
	lr := adm.req("GET", "/api/users", "")
	lr.want(t, http.StatusOK, "")
	lr.decode(t, &list)
	if len(list.Users) != 3 {
		t.Fatalf("users %+v", list.Users)
	}

	// Promote ops to admin; then root may step down.
	var opsID string
	for _, u := range list.Users {
		if u.Name == "ops" {
			opsID = u.ID
		}
	}
	adm.req("PATCH", "/api/users/"+opsID, `{"role":"admin"}`).want(t, http.StatusOK, "")
	ops.req("GET", "/api/users", "").want(t, http.StatusOK, "") // the new role counts at once
	adm.req("PATCH", "/api/users/"+root.ID, `{"role":"viewer"}`).want(t, http.StatusOK, "")
	adm.req("GET", "/api/users", "").want(t, http.StatusForbidden, "forbidden")

	// Disabling ends the account's session and tokens.
	vb := e.login(person{User: e.accountOf(t, "vic"), password: "vic-password"})
	_, vsecret := vb.createToken(t, "cli", "read")
	ops.req("PATCH", "/api/users/"+vic.User.ID, `{"disabled":true}`).want(t, http.StatusOK, "")
	vb.req("GET", "/api/sessions", "").want(t, http.StatusUnauthorized, "unauthorized")
	e.req("GET", "/api/sessions", "", bearer(vsecret)...).want(t, http.StatusUnauthorized, "unauthorized")
	e.req("POST", "/api/auth/login", `{"name":"vic","password":"vic-password"}`).want(t, http.StatusUnauthorized, "bad_credentials")
	// Enabled again, with a new password set by an admin.
	ops.req("PATCH", "/api/users/"+vic.User.ID, `{"disabled":false,"password":"vic-new-password"}`).want(t, http.StatusOK, "")
	e.req("POST", "/api/auth/login", `{"name":"vic","password":"vic-new-password"}`).want(t, http.StatusOK, "")
}
