package account

// Personal API tokens: made for an account, shown once, kept as hashes,
// revocable.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/caduceus-dev/caduceus/internal/auth"
	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// Errors of tokens.
var (
	ErrBadTokenName = errors.New("bad_token_name")
	ErrNoToken      = errors.New("no_such_token")
	// ErrScopeTooWide: the scope grants more than the account's role.
	ErrScopeTooWide = errors.New("scope_too_wide")
)

// MaxTokenNameLen bounds a token's name, in characters.
const MaxTokenNameLen = 64

// Token is a personal API token as shown to people: no hash, no secret.
type Token struct {
	ID        string
	UserID    string
	User      string // the owner's name
	Name      string
	Scope     auth.Scope
	Prefix    string
	CreatedAt time.Time
	LastUsed  time.Time // zero: never
	RevokedAt time.Time // zero: live
}

func viewToken(k store.APIToken, owner string) Token {
	return Token{ID: k.ID, UserID: k.UserID, User: owner, Name: k.Name, Scope: auth.Scope(k.Scope), Prefix: k.Prefix,
		CreatedAt: k.CreatedAt, LastUsed: k.LastUsed, RevokedAt: k.RevokedAt}
}

// checkTokenName: 1 to MaxTokenNameLen printable characters, not blank.
func checkTokenName(name string) error {
	n := utf8.RuneCountInString(name)
	if n == 0 || n > MaxTokenNameLen || !utf8.ValidString(name) || strings.TrimSpace(name) == "" {
		return fmt.Errorf("%w: a token name has 1 to %d characters", ErrBadTokenName, MaxTokenNameLen)
	}
	for _, r := range name {
		if !unicode.IsPrint(r) {
			return fmt.Errorf("%w: a token name has printable characters only", ErrBadTokenName)
		}
	}
	return nil
}

// CreateToken makes a token of scope for the account userID, which must
// exist, be enabled and have a role that grants the scope (within is the
// caller's own limit, e.g. a token principal's effective role; empty
// means the account's role). The secret is returned once; only its hash
// is stored.
func (m *Manager) CreateToken(ctx context.Context, userID, name string, scope auth.Scope, within auth.Role) (Token, string, error) {
	if err := checkTokenName(name); err != nil {
		return Token{}, "", err
	}
	if _, err := auth.ParseScope(string(scope)); err != nil {
		return Token{}, "", err
	}
	k, err := auth.NewToken()
	if err != nil {
		return Token{}, "", err
	}
	var out Token
	err = m.st.Write(ctx, func(tx store.Tx) error {
		u, err := tx.GetUser(ctx, userID)
		if errors.Is(err, store.ErrNotFound) || (err == nil && u.Disabled) {
			return fmt.Errorf("%w: %q", ErrNoUser, userID)
		}
		if err != nil {
			return err
		}
		if !auth.MayGrant(auth.Role(u.Role), scope) || (within != "" && !auth.MayGrant(within, scope)) {
			return fmt.Errorf("%w: %s", ErrScopeTooWide, scope)
		}
		row := store.APIToken{ID: id.New("tok"), UserID: u.ID, Name: name, Scope: string(scope), Hash: k.Hash, Prefix: k.Prefix, CreatedAt: m.now()}
		out = viewToken(row, u.Name)
		return tx.InsertToken(ctx, row)
	})
	if err != nil {
		return Token{}, "", err
	}
	return out, k.Plain, nil
}

// ListTokens lists the tokens of userID, or of every account when userID
// is "", revoked ones included, oldest first per account.
func (m *Manager) ListTokens(ctx context.Context, userID string) ([]Token, error) {
	us, err := m.st.ListUsers(ctx)
	if err != nil {
		return nil, err
	}
	out := []Token{}
	for _, u := range us {
		if userID != "" && u.ID != userID {
			continue
		}
		ks, err := m.st.ListTokens(ctx, u.ID)
		if err != nil {
			return nil, err
		}
		for _, k := range ks {
			out = append(out, viewToken(k, u.Name))
		}
	}
	return out, nil
}

// RevokeToken revokes the live token tokenID of userID, or of anyone when
// userID is "" (an admin). An unknown, already revoked or someone else's
// token is ErrNoToken.
func (m *Manager) RevokeToken(ctx context.Context, userID, tokenID string) error {
	ks, err := m.ListTokens(ctx, userID)
	if err != nil {
		return err
	}
	for _, k := range ks {
		if k.ID == tokenID && k.RevokedAt.IsZero() {
			err := m.st.Write(ctx, func(tx store.Tx) error { return tx.RevokeToken(ctx, tokenID, m.now()) })
			if errors.Is(err, store.ErrNotFound) {
				return fmt.Errorf("%w: %q", ErrNoToken, tokenID)
			}
			return err
		}
	}
	return fmt.Errorf("%w: %q", ErrNoToken, tokenID)
}
