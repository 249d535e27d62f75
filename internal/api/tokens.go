package api

// Personal API tokens: list, create (the secret shown once), revoke.

import (
	"errors"
	"net/http"
	"time"

	"github.com/caduceus-dev/caduceus/internal/account"
	"github.com/caduceus-dev/caduceus/internal/auth"
	"github.com/caduceus-dev/caduceus/internal/control"
)

// Error codes of tokens.
const (
	CodeBadScope     = "bad_scope"
	CodeBadTokenName = "bad_name"
)

type tokenView struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Scope      string     `json:"scope"`
	Prefix     string     `json:"prefix"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
	User       string     `json:"user"`
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

func viewToken(k account.Token) tokenView {
	return tokenView{ID: k.ID, Name: k.Name, Scope: string(k.Scope), Prefix: k.Prefix, CreatedAt: k.CreatedAt.UTC(),
		LastUsedAt: optTime(k.LastUsed), RevokedAt: optTime(k.RevokedAt), User: k.User}
}

// noUser refuses a token request of a principal that is no person.
func noUser(w http.ResponseWriter) {
	writeError(w, http.StatusBadRequest, CodeNoUser, "sign in as a person to create personal tokens", nil)
}

func (a *API) listTokens(w http.ResponseWriter, r *http.Request) {
	p, _ := principal(r)
	owner := p.UserID
	switch q := r.URL.Query().Get("all"); q {
	case "", "0":
		if !p.IsPerson() {
			writeJSON(w, http.StatusOK, map[string]any{"tokens": []tokenView{}})
			return
		}
	case "1":
		if !p.May(permAction(permAdmin)) {
			role := p.EffectiveRole()
			writeError(w, http.StatusForbidden, CodeForbidden, forbiddenMessage(role, permAdmin),
				map[string]any{"need": string(permAdmin), "role": string(role)})
			return
		}
		owner = ""
	default:
		writeError(w, http.StatusBadRequest, control.CodeInvalidInput, "all is 1 or absent", nil)
		return
	}
	ks, err := a.accounts.ListTokens(r.Context(), owner)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := make([]tokenView, 0, len(ks))
	for _, k := range ks {
		out = append(out, viewToken(k))
	}
	writeJSON(w, http.StatusOK, map[string]any{"tokens": out})
}

type newTokenRequest struct {
	Name  *string `json:"name"`
	Scope *string `json:"scope"`
}

func (a *API) createToken(w http.ResponseWriter, r *http.Request) {
	p, _ := principal(r)
	if !p.IsPerson() {
		noUser(w)
		return
	}
	var in newTokenRequest
	if !decode(w, r, &in) {
		return
	}
	if in.Name == nil || in.Scope == nil {
		writeError(w, http.StatusBadRequest, control.CodeInvalidInput, `send {"name": ..., "scope": "read"|"operate"|"admin"}`, nil)
		return
	}
	scope, err := auth.ParseScope(*in.Scope)
	if err != nil {
		writeError(w, http.StatusBadRequest, CodeBadScope, "scope is read, operate or admin", nil)
		return
	}
	role := p.EffectiveRole()
	k, secret, err := a.accounts.CreateToken(r.Context(), p.UserID, *in.Name, scope, role)
	switch {
	case errors.Is(err, account.ErrBadTokenName):
		writeError(w, http.StatusBadRequest, CodeBadTokenName, "a token name has 1 to 64 printable characters", nil)
		return
	case errors.Is(err, account.ErrScopeTooWide):
		writeError(w, http.StatusForbidden, CodeForbidden, "your role ("+string(role)+") cannot grant a token of scope "+string(scope),
			map[string]any{"need": string(scope), "role": string(role)})
		return
	case err != nil:
		a.fail(w, r, err)
		return
	}
	a.log.Info("token created", "user_id", p.UserID, "token_id", k.ID, "scope", string(scope))
	writeJSON(w, http.StatusCreated, map[string]any{"token": viewToken(k), "secret": secret})
}

func (a *API) revokeToken(w http.ResponseWriter, r *http.Request) {
	p, _ := principal(r)
	tokenID := r.PathValue("id")
	owner := p.UserID
	if p.May(permAction(permAdmin)) {
		owner = "" // an admin revokes anyone's
	} else if !p.IsPerson() {
		noUser(w)
		return
	}
	err := a.accounts.RevokeToken(r.Context(), owner, tokenID)
	if errors.Is(err, account.ErrNoToken) {
		writeError(w, http.StatusNotFound, control.CodeNotFound, "no such live token of yours", nil)
		return
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.log.Info("token revoked", "by", p.Name, "token_id", tokenID)
	w.WriteHeader(http.StatusNoContent)
}
