package api

// Sign-in: who am I, sign in, sign out, change my password.

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/caduceus-dev/caduceus/internal/account"
	"github.com/caduceus-dev/caduceus/internal/auth"
	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/identity"
	"github.com/caduceus-dev/caduceus/internal/netlimit"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// Error codes of sign-in and accounts.
const (
	CodeBadCredentials  = "bad_credentials"
	CodeTooManyAttempts = "too_many_attempts"
	CodeBadPassword     = "bad_password"
	CodeNoUser          = "no_user"
	CodeForbidden       = identity.CodeForbidden
)

// badCredentialsMessage is one message for an unknown name, a wrong
// password and a disabled account.
const badCredentialsMessage = "wrong name or password"

// principalView is a principal as the API shows it.
type principalView struct {
	Kind   string `json:"kind"`
	UserID string `json:"user_id,omitempty"`
	Name   string `json:"name"`
	Role   string `json:"role"`
	Scope  string `json:"scope,omitempty"`
}

type permissionsView struct {
	Read    bool `json:"read"`
	Operate bool `json:"operate"`
	Admin   bool `json:"admin"`
}

func viewPrincipal(p identity.Principal) *principalView {
	return &principalView{Kind: string(p.Kind), UserID: p.UserID, Name: p.Name, Role: string(p.Role), Scope: string(p.Scope)}
}

func viewPermissions(p identity.Principal) permissionsView {
	return permissionsView{Read: p.May(permAction(permRead)), Operate: p.May(permAction(permOperate)), Admin: p.May(permAction(permAdmin))}
}

// principal returns the request's resolved principal; ok is false when
// there is none (an exempt route asked by nobody, or with a wrong
// credential).
func principal(r *http.Request) (identity.Principal, bool) {
	res, ok := identity.From(r.Context())
	if !ok || res.Outcome != identity.Resolved {
		return identity.Principal{}, false
	}
	return res.Principal, true
}

// me answers GET /api/auth/me: what a browser needs to decide between the
// sign-in page and the workbench, and what to show.
func (a *API) me(w http.ResponseWriter, r *http.Request) {
	required, err := a.opt.Identity.SignInRequired(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	accounts, err := a.opt.Identity.Accounts(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := map[string]any{"signed_in": false, "sign_in_required": required, "accounts": accounts,
		"principal": nil, "permissions": permissionsView{}}
	if p, ok := principal(r); ok {
		out["signed_in"] = p.Kind != identity.KindLocal
		out["principal"] = viewPrincipal(p)
		out["permissions"] = viewPermissions(p)
		if c := p.CSRFToken(); c != "" {
			out["csrf_token"] = c
		}
	}
	writeJSON(w, http.StatusOK, out)
}

type loginRequest struct {
	Name     *string `json:"name"`
	Password *string `json:"password"`
}

// limitName is the limiter's key for a name: folded as accounts are, and
// cut to a bound so that megabyte-long names cannot fill its memory (no
// account has a name that long).
func limitName(name string) string {
	k := store.NameKey(name)
	if len(k) > 4*account.MaxNameLen {
		k = k[:4*account.MaxNameLen]
	}
	return k
}

// tooMany answers 429 too_many_attempts.
func tooMany(w http.ResponseWriter, wait time.Duration) {
	secs := int((wait + time.Second - 1) / time.Second)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	writeError(w, http.StatusTooManyRequests, CodeTooManyAttempts,
		fmt.Sprintf("Too many failed sign-ins for this name or address; try again in %d seconds.", secs),
		map[string]any{"retry_after_seconds": secs})
}

// login answers POST /api/auth/login: a new sign-in session.
func (a *API) login(w http.ResponseWriter, r *http.Request) {
	var in loginRequest
	if !decode(w, r, &in) {
		return
	}
	if in.Name == nil || in.Password == nil {
		writeError(w, http.StatusBadRequest, control.CodeInvalidInput, "send {\"name\": ..., \"password\": ...}", nil)
		return
	}
	keys := []string{nameKey(limitName(*in.Name)), addrKey(netlimit.Key(r.RemoteAddr))}
	if wait := a.limiter.wait(keys...); wait > 0 {
		tooMany(w, wait)
		return
	}
	u, err := a.accounts.Verify(r.Context(), *in.Name, *in.Password)
	if errors.Is(err, account.ErrBadCredentials) {
		a.limiter.fail(keys...)
		// Not the name: people type their password into it by mistake.
		a.log.Info("sign-in refused", "addr", netlimit.Key(r.RemoteAddr))
		writeError(w, http.StatusUnauthorized, CodeBadCredentials, badCredentialsMessage, nil)
		return
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.limiter.clear(keys[0])
	s, err := a.opt.Identity.StartSession(r.Context(), u.ID)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	identity.SetCookie(w, r, s, a.opt.SecureCookies)
	a.log.Info("signed in", "user_id", u.ID, "name", u.Name)
	p := identity.Principal{Kind: identity.KindUser, UserID: u.ID, Name: u.Name, Role: u.Role}
	writeJSON(w, http.StatusOK, map[string]any{"principal": viewPrincipal(p), "permissions": viewPermissions(p), "csrf_token": s.CSRF})
}

// logout answers POST /api/auth/logout: the session ends and the browser
// drops its cookie. Signing out without a (valid) session is no error.
func (a *API) logout(w http.ResponseWriter, r *http.Request) {
	if p, ok := principal(r); ok && p.Kind == identity.KindUser {
		if err := a.opt.Identity.EndSession(r.Context(), p.SessionID); err != nil {
			a.fail(w, r, err)
			return
		}
		a.log.Info("signed out", "user_id", p.UserID)
	}
	identity.ClearCookie(w, r)
	w.WriteHeader(http.StatusNoContent)
}

type passwordRequest struct {
	Current *string `json:"current"`
	New     *string `json:"new"`
}

// changePassword answers POST /api/auth/password: a person signed in with
// a browser session changes their own password; their other sessions end.
// A token cannot: it would turn a narrow token into the whole account.
func (a *API) changePassword(w http.ResponseWriter, r *http.Request) {
	p, ok := principal(r)
	if !ok || p.Kind != identity.KindUser {
		writeError(w, http.StatusBadRequest, CodeNoUser, "sign in with your name and password to change your password", nil)
		return
	}
	var in passwordRequest
	if !decode(w, r, &in) {
		return
	}
	if in.Current == nil || in.New == nil {
		writeError(w, http.StatusBadRequest, control.CodeInvalidInput, "send {\"current\": ..., \"new\": ...}", nil)
		return
	}
	keys := []string{nameKey(limitName(p.Name)), addrKey(netlimit.Key(r.RemoteAddr))}
	if wait := a.limiter.wait(keys...); wait > 0 {
		tooMany(w, wait)
		return
	}
	if _, err := a.accounts.Verify(r.Context(), p.Name, *in.Current); err != nil {
		if errors.Is(err, account.ErrBadCredentials) {
			a.limiter.fail(keys...)
			writeError(w, http.StatusUnauthorized, CodeBadCredentials, "the current password is wrong", nil)
			return
		}
		a.fail(w, r, err)
		return
	}
	if err := auth.CheckPassword(*in.New); err != nil {
		writeError(w, http.StatusBadRequest, CodeBadPassword, passwordRule(err), nil)
		return
	}
	if _, err := a.accounts.SetPasswordByID(r.Context(), p.UserID, *in.New); err != nil {
		a.fail(w, r, err)
		return
	}
	if err := a.opt.Identity.EndUserSessions(r.Context(), p.UserID, p.SessionID); err != nil {
		a.fail(w, r, err)
		return
	}
	a.log.Info("password changed", "user_id", p.UserID)
	w.WriteHeader(http.StatusNoContent)
}

// passwordRule explains why a new password was refused.
func passwordRule(err error) string {
	switch {
	case errors.Is(err, auth.ErrPasswordTooShort):
		return fmt.Sprintf("a password needs at least %d characters", auth.MinPasswordLen)
	case errors.Is(err, auth.ErrPasswordTooLong):
		return fmt.Sprintf("a password may have at most %d characters", auth.MaxPasswordLen)
	}
	return "this password cannot be used"
}

// actor is who the request acts for, as events record it ("by"); nil
// when nobody is resolved (never the case past the route table).
func actor(r *http.Request) *event.Actor {
	if p, ok := principal(r); ok {
		return p.Actor()
	}
	return nil
}
