package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/auth"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// addToken gives p a personal token of scope, made as POST /api/tokens
// makes one, and returns its secret.
func (e *env) addToken(p person, scope auth.Scope) string {
	e.t.Helper()
	k, err := auth.NewToken()
	if err != nil {
		e.t.Fatal(err)
	}
	row := store.APIToken{ID: "tok_" + string(scope) + p.Name, UserID: p.ID, Name: "test", Scope: string(scope), Hash: k.Hash, Prefix: k.Prefix, CreatedAt: time.Now()}
	if err := e.st.Write(e.ctx, func(tx store.Tx) error { return tx.InsertToken(e.ctx, row) }); err != nil {
		e.t.Fatal(err)
	}
	return k.Plain
}

func bearer(tok string) []string { return []string{"Authorization", "Bearer " + tok} }

// TestRolesEnforced: a viewer (or a read-scoped token) cannot start,
// cancel or approve, and changes nothing trying; an operator can.
func TestRolesEnforced(t *testing.T) {
	e := newEnv(t)
	// Fixtures while the server is still open (the local principal).
	s := e.session(t)
	ru := e.send(t, s.ID, "first")
	e.hold(t, ru.ID, "rnr_test")
	q := e.ask(t, ru.ID, "rnr_test", store.KindApproval)

	viewer := e.login(e.addPerson("vic", auth.RoleViewer))
	op := e.addPerson("ops", auth.RoleOperator)
	opRead := e.addToken(op, auth.ScopeRead)
	opAdmin := e.addToken(op, auth.ScopeAdmin)
	opSess := e.login(op)

	writes := []struct{ name, method, path, body string }{
		{"start", "POST", "/api/sessions/" + s.ID + "/messages", `{"content":"more"}`},
		{"new session", "POST", "/api/sessions", `{}`},
		{"cancel", "POST", "/api/runs/" + ru.ID + "/cancel", ""},
		{"approve", "POST", "/api/requests/" + q + "/respond", `{"choice":"once"}`},
		{"rule", "POST", "/api/rules", `{"tool":"run_command","pattern":"ls"}`},
	}
	before := e.lastID()
	for _, w := range writes {
		t.Run("viewer may not "+w.name, func(t *testing.T) {
			r := viewer.req(w.method, w.path, w.body)
			r.want(t, http.StatusForbidden, "forbidden")
			var out struct {
				Error struct {
					Message string
					Details map[string]string
				}
			}
			r.decode(t, &out)
			if out.Error.Details["need"] != "operate" || out.Error.Details["role"] != "viewer" || !strings.Contains(out.Error.Message, "viewer") {
				t.Fatalf("refusal: %s", r.body)
			}
		})
		t.Run("read token may not "+w.name, func(t *testing.T) {
			e.req(w.method, w.path, w.body, bearer(opRead)...).want(t, http.StatusForbidden, "forbidden")
		})
	}
	if e.lastID() != before {
		t.Fatal("refused writes changed the journal")
	}
	for _, path := range []string{"/api/sessions", "/api/sessions/" + s.ID, "/api/runs/" + ru.ID, "/api/requests", "/api/meta"} {
		viewer.req("GET", path, "").want(t, http.StatusOK, "")
		e.req("GET", path, "", bearer(opRead)...).want(t, http.StatusOK, "")
	}

	// An admin-scoped token of an operator is an operator.
	e.req("GET", "/api/auth/me", "", bearer(opAdmin)...).want(t, http.StatusOK, "")
	m := e.me(bearer(opAdmin)...)
	if !m.Permissions.Operate || m.Permissions.Admin {
		t.Fatalf("operator's admin token: %+v", m.Permissions)
	}
	opSess.req("POST", "/api/requests/"+q+"/respond", `{"choice":"once"}`).want(t, http.StatusOK, "")
	e.req("POST", "/api/sessions/"+s.ID+"/messages", `{"content":"more"}`, bearer(opAdmin)...).want(t, http.StatusAccepted, "")
	opSess.req("POST", "/api/runs/"+ru.ID+"/cancel", "").want(t, http.StatusAccepted, "")
}

// TestDisabledUserStops: disabling an account ends its session and its
// tokens at the next request, and its open stream at the next heartbeat.
func TestDisabledUserStops(t *testing.T) {
	e := newEnv(t, withHeartbeat(50*time.Millisecond))
	ann := e.addPerson("ann", auth.RoleOperator)
	b := e.login(ann)
	tok := e.addToken(ann, auth.ScopeOperate)
	b.req("GET", "/api/sessions", "").want(t, http.StatusOK, "")
	e.req("GET", "/api/sessions", "", bearer(tok)...).want(t, http.StatusOK, "")
	cookieStream, r := e.openSSE(t, "/api/events", "Cookie", "caduceus_session="+b.cookie)
	if cookieStream == nil {
		t.Fatalf("stream refused: %d %s", r.code, r.body)
	}
	tokStream, r := e.openSSE(t, "/api/events?access_token="+tok)
	if tokStream == nil {
		t.Fatalf("stream refused: %d %s", r.code, r.body)
	}
	if _, err := e.accounts.SetDisabled(e.ctx, "ann", true); err != nil {
		t.Fatal(err)
	}
	b.req("GET", "/api/sessions", "").want(t, http.StatusUnauthorized, "unauthorized")
	e.req("GET", "/api/sessions", "", bearer(tok)...).want(t, http.StatusUnauthorized, "unauthorized")
	cookieStream.rest(t)
	tokStream.rest(t)
}
