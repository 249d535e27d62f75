package api

// Accounts, for admins: list, add, change (role, disabled, password).

import (
	"errors"
	"net/http"
	"time"

	"github.com/caduceus-dev/caduceus/internal/account"
	"github.com/caduceus-dev/caduceus/internal/auth"
	"github.com/caduceus-dev/caduceus/internal/control"
)

// Error codes of accounts.
const (
	CodeBadName   = "bad_name"
	CodeNameTaken = "name_taken"
	CodeBadRole   = "bad_role"
	CodeLastAdmin = "last_admin"
)

type userView struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	Role      string    `json:"role"`
	Disabled  bool      `json:"disabled"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

func viewUser(u account.User) userView {
	return userView{ID: u.ID, Name: u.Name, Role: string(u.Role), Disabled: u.Disabled, CreatedAt: u.CreatedAt.UTC(), UpdatedAt: u.UpdatedAt.UTC()}
}

// accountError answers the refusals of account changes; false when err
// is none of them.
func accountError(w http.ResponseWriter, err error) bool {
	switch {
	case errors.Is(err, account.ErrBadName):
		writeError(w, http.StatusBadRequest, CodeBadName, "a user name has 1 to 64 letters, digits or . _ - @, starting with a letter or digit", nil)
	case errors.Is(err, account.ErrNameTaken):
		writeError(w, http.StatusConflict, CodeNameTaken, "an account of that name exists (names are compared regardless of case)", nil)
	case errors.Is(err, auth.ErrBadValue):
		writeError(w, http.StatusBadRequest, CodeBadRole, "role is admin, operator or viewer", nil)
	case errors.Is(err, auth.ErrPasswordTooShort), errors.Is(err, auth.ErrPasswordTooLong):
		writeError(w, http.StatusBadRequest, CodeBadPassword, passwordRule(err), nil)
	case errors.Is(err, account.ErrLastAdmin):
		writeError(w, http.StatusConflict, CodeLastAdmin, "this is the last enabled admin: make another account admin first", nil)
	case errors.Is(err, account.ErrNoUser):
		writeError(w, http.StatusNotFound, control.CodeNotFound, "no such user", nil)
	default:
		return false
	}
	return true
}

func (a *API) listUsers(w http.ResponseWriter, r *http.Request) {
	us, err := a.accounts.List(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := make([]userView, 0, len(us))
	for _, u := range us {
		out = append(out, viewUser(u))
	}
	writeJSON(w, http.StatusOK, map[string]any{"users": out})
}

type newUserRequest struct {
	Name     *string `json:"name"`
	Role     *string `json:"role"`
	Password *string `json:"password"`
}

func (a *API) createUser(w http.ResponseWriter, r *http.Request) {
	var in newUserRequest
	if !decode(w, r, &in) {
		return
	}
	if in.Name == nil || in.Role == nil || in.Password == nil {
		writeError(w, http.StatusBadRequest, control.CodeInvalidInput, `send {"name": ..., "role": ..., "password": ...}`, nil)
		return
	}
	u, err := a.accounts.Add(r.Context(), *in.Name, auth.Role(*in.Role), *in.Password)
	if err != nil {
		if !accountError(w, err) {
			a.fail(w, r, err)
		}
		return
	}
	a.opt.Identity.Forget()
	p, _ := principal(r)
	a.log.Info("account added", "by", p.Name, "user_id", u.ID, "role", string(u.Role))
	writeJSON(w, http.StatusCreated, map[string]any{"user": viewUser(u)})
}

type patchUserRequest struct {
	Role     *string `json:"role"`
	Disabled *bool   `json:"disabled"`
	Password *string `json:"password"`
}

func (a *API) patchUser(w http.ResponseWriter, r *http.Request) {
	var in patchUserRequest
	if !decode(w, r, &in) {
		return
	}
	c := account.Change{Disabled: in.Disabled, Password: in.Password}
	if in.Role != nil {
		role := auth.Role(*in.Role)
		c.Role = &role
	}
	id := r.PathValue("id")
	u, err := a.accounts.Update(r.Context(), id, c)
	if err != nil {
		if !accountError(w, err) {
			a.fail(w, r, err)
		}
		return
	}
	// A disabled account's sessions end (its tokens stop at their next
	// use, and its streams at their next heartbeat); a password set by an
	// admin ends the sessions signed in with the old one.
	if u.Disabled || in.Password != nil {
		if err := a.opt.Identity.EndUserSessions(r.Context(), u.ID, ""); err != nil {
			a.fail(w, r, err)
			return
		}
	}
	a.opt.Identity.Forget()
	p, _ := principal(r)
	a.log.Info("account changed", "by", p.Name, "user_id", u.ID, "role", string(u.Role), "disabled", u.Disabled, "password_set", in.Password != nil)
	writeJSON(w, http.StatusOK, map[string]any{"user": viewUser(u)})
}
