package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/auth"
)

type tokenJSON struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	Scope      string  `json:"scope"`
	Prefix     string  `json:"prefix"`
	CreatedAt  string  `json:"created_at"`
	LastUsedAt *string `json:"last_used_at"`
	RevokedAt  *string `json:"revoked_at"`
	User       string  `json:"user"`
}

// createToken makes a token through the API as b.
func (b browser) createToken(t *testing.T, name, scope string) (tokenJSON, string) {
	t.Helper()
	r := b.req("POST", "/api/tokens", `{"name":"`+name+`","scope":"`+scope+`"}`)
	r.want(t, http.StatusCreated, "")
	var out struct {
		Token  tokenJSON `json:"token"`
		Secret string    `json:"secret"`
	}
	r.decode(t, &out)
	return out.Token, out.Secret
}

func (e *env) tokens(t *testing.T, query string, header ...string) []tokenJSON {
	t.Helper()
	r := e.req("GET", "/api/tokens"+query, "", header...)
	r.want(t, http.StatusOK, "")
	var out struct{ Tokens []tokenJSON }
	r.decode(t, &out)
	return out.Tokens
}

func TestTokens(t *testing.T) {
	e := newEnv(t)
	e.req("POST", "/api/tokens", `{"name":"x","scope":"read"}`).want(t, http.StatusBadRequest, "no_user")

	vic := e.login(e.addPerson("vic", auth.RoleViewer))
	ops := e.login(e.addPerson("ops", auth.RoleOperator))
	adm := e.login(e.addPerson("adm", auth.RoleAdmin))

	e.runErrCases(t, []errCase{
		{name: "viewer asks for operate", method: "POST", path: "/api/tokens", body: `{"name":"x","scope":"operate"}`,
			header: []string{"Cookie", "caduceus_session=" + vic.cookie, "X-CSRF-Token", vic.csrf}, status: 403, code: "forbidden"},
		{name: "bad scope", method: "POST", path: "/api/tokens", body: `{"name":"x","scope":"all"}`,
			header: []string{"Cookie", "caduceus_session=" + vic.cookie, "X-CSRF-Token", vic.csrf}, status: 400, code: "bad_scope"},
		{name: "empty name", method: "POST", path: "/api/tokens", body: `{"name":" ","scope":"read"}`,
			header: []string{"Cookie", "caduceus_session=" + vic.cookie, "X-CSRF-Token", vic.csrf}, status: 400, code: "bad_name"},
		{name: "no scope", method: "POST", path: "/api/tokens", body: `{"name":"x"}`,
			header: []string{"Cookie", "caduceus_session=" + vic.cookie, "X-CSRF-Token", vic.csrf}, status: 400, code: "invalid_input"},
		{name: "without CSRF", method: "POST", path: "/api/tokens", body: `{"name":"x","scope":"read"}`,
			header: []string{"Cookie", "caduceus_session=" + vic.cookie}, status: 403, code: "csrf_failed"},
	})

	vt, vsecret := vic.createToken(t, "laptop", "read")
	if !auth.LooksLikeToken(vsecret) || !strings.HasPrefix(vsecret, vt.Prefix) || vt.User != "vic" || vt.Scope != "read" || vt.LastUsedAt != nil || vt.RevokedAt != nil {
		t.Fatalf("created token %+v", vt)
	}
	// The secret is shown once: never in a list.
	r := vic.req("GET", "/api/tokens", "")
	if strings.Contains(string(r.body), vsecret) || strings.Contains(string(r.body), auth.HashToken(vsecret)) {
		t.Fatal("the token list shows the secret or its hash")
	}
	// Used, it records its use.
	e.req("GET", "/api/sessions", "", bearer(vsecret)...).want(t, http.StatusOK, "")
	if got := e.tokens(t, "", bearer(vsecret)...); len(got) != 1 || got[0].ID != vt.ID || got[0].LastUsedAt == nil {
		t.Fatalf("own tokens through the token: %+v", got)
	}

	// A read token of an operator cannot mint an operate token.
	_, osecret := ops.createToken(t, "ci", "read")
	e.req("POST", "/api/tokens", `{"name":"wider","scope":"operate"}`, bearer(osecret)...).want(t, http.StatusForbidden, "forbidden")
	e.req("POST", "/api/tokens", `{"name":"same","scope":"read"}`, bearer(osecret)...).want(t, http.StatusCreated, "")

	// Everyone's: admins only.
	vic.req("GET", "/api/tokens?all=1", "").want(t, http.StatusForbidden, "forbidden")
	if all := e.tokens(t, "?all=1", "Cookie", "caduceus_session="+adm.cookie); len(all) != 3 {
		t.Fatalf("admin's ?all=1: %+v", all)
	}
	if own := e.tokens(t, "", "Cookie", "caduceus_session="+ops.cookie); len(own) != 2 {
		t.Fatalf("operator's own: %+v", own)
	}

	// Revoking: one's own, or anyone's as admin; unknown is 404.
	ops.req("DELETE", "/api/tokens/"+vt.ID, "").want(t, http.StatusNotFound, "not_found")
	if r := vic.req("DELETE", "/api/tokens/"+vt.ID, ""); r.code != http.StatusNoContent {
		t.Fatalf("revoke own: %d %s", r.code, r.body)
	}
	e.req("GET", "/api/sessions", "", bearer(vsecret)...).want(t, http.StatusUnauthorized, "unauthorized")
	vic.req("DELETE", "/api/tokens/"+vt.ID, "").want(t, http.StatusNotFound, "not_found")
	ot := e.tokens(t, "", "Cookie", "caduceus_session="+ops.cookie)[0]
	if r := adm.req("DELETE", "/api/tokens/"+ot.ID, ""); r.code != http.StatusNoContent {
		t.Fatalf("admin revokes another's: %d %s", r.code, r.body)
	}
	e.req("GET", "/api/sessions", "", bearer(osecret)...).want(t, http.StatusUnauthorized, "unauthorized")
}
