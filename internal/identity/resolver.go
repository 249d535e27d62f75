package identity

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/caduceus-dev/caduceus/internal/auth"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// ErrEnded is Recheck's answer for a principal whose credential no longer
// holds: the token was revoked, the session ended or expired, or the
// account was disabled.
var ErrEnded = errors.New("credential no longer valid")

// errBad is an internal marker for a wrong credential.
var errBad = errors.New("bad credential")

// AccountsTTL is how long the answer to "does any account exist" is kept
// before the store is asked again. A new account is also noticed at once
// through Forget by the process that made it; another process (`caduceus
// user add` next to a running server) is noticed within this time.
const AccountsTTL = 5 * time.Second

// Store is the part of the store the resolver needs.
type Store interface {
	store.Reader
	Write(ctx context.Context, fn func(store.Tx) error) error
}

// Config configures a Resolver.
type Config struct {
	// Token is CADUCEUS_TOKEN, "" when unset.
	Token string
	// Loopback tells whether the server listens on loopback only. Off
	// loopback, sign-in is always required, so an account store emptied
	// of enabled accounts never opens the server.
	Loopback bool
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// Log receives store failures met while resolving; discarded when nil.
	Log *slog.Logger
}

// Resolver resolves requests to principals. It is safe for concurrent use.
type Resolver struct {
	st       Store
	hasToken bool
	// tokenSum is the SHA-256 of the server token: comparing fixed-size
	// digests keeps the comparison constant-time even in the token's
	// length, and the resolver never holds the secret itself.
	tokenSum [sha256.Size]byte
	loopback bool
	now      func() time.Time
	log      *slog.Logger

	// refresh lets one request at a time ask the store when the cached
	// answer is stale: the others wait for its answer rather than all
	// listing the accounts at once (a wave of reconnecting streams).
	refresh    sync.Mutex
	mu         sync.Mutex
	checkedAt  time.Time // zero: ask the store
	anyUser    bool
	anyEnabled bool
}

// New returns a Resolver over st.
func New(st Store, cfg Config) *Resolver {
	r := &Resolver{st: st, loopback: cfg.Loopback, now: cfg.Now, log: cfg.Log}
	if cfg.Token != "" {
		r.hasToken = true
		r.tokenSum = sha256.Sum256([]byte(cfg.Token))
	}
	if r.now == nil {
		r.now = time.Now
	}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	return r
}

// accounts returns whether any account exists and whether an enabled one
// does, from a cache at most AccountsTTL old.
func (r *Resolver) accounts(ctx context.Context) (anyUser, anyEnabled bool, err error) {
	if anyUser, anyEnabled, ok := r.cachedAccounts(); ok {
		return anyUser, anyEnabled, nil
	}
	r.refresh.Lock()
	defer r.refresh.Unlock()
	if anyUser, anyEnabled, ok := r.cachedAccounts(); ok {
		return anyUser, anyEnabled, nil
	}
	now := r.now()
	us, err := r.st.ListUsers(ctx)
	if err != nil {
		return false, false, fmt.Errorf("list accounts: %w", err)
	}
	anyUser = len(us) > 0
	anyEnabled = slices.ContainsFunc(us, func(u store.User) bool { return !u.Disabled })
	r.mu.Lock()
	r.checkedAt, r.anyUser, r.anyEnabled = now, anyUser, anyEnabled
	r.mu.Unlock()
	return anyUser, anyEnabled, nil
}

// cachedAccounts returns the cached answer when it is fresh.
func (r *Resolver) cachedAccounts() (anyUser, anyEnabled, ok bool) {
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.checkedAt.IsZero() || now.Sub(r.checkedAt) >= AccountsTTL || now.Before(r.checkedAt) {
		return false, false, false
	}
	return r.anyUser, r.anyEnabled, true
}

// Forget drops the cached account answer: call it after adding, disabling
// or enabling an account.
func (r *Resolver) Forget() {
	r.mu.Lock()
	r.checkedAt = time.Time{}
	r.mu.Unlock()
}

// SignInRequired reports whether a request without credentials is
// refused: a server token is set, the server is off loopback, or an
// account exists (enabled or not: disabling everyone must not open the
// server).
func (r *Resolver) SignInRequired(ctx context.Context) (bool, error) {
	if r.hasToken || !r.loopback {
		return true, nil
	}
	anyUser, _, err := r.accounts(ctx)
	return anyUser, err
}

// Accounts reports whether at least one enabled account exists, so a
// browser can be offered the sign-in page.
func (r *Resolver) Accounts(ctx context.Context) (bool, error) {
	_, anyEnabled, err := r.accounts(ctx)
	return anyEnabled, err
}

// EnabledAccounts reports whether st holds an enabled account: a server
// off loopback may start without a token only then.
func EnabledAccounts(ctx context.Context, st store.Reader) (bool, error) {
	us, err := st.ListUsers(ctx)
	if err != nil {
		return false, fmt.Errorf("list accounts: %w", err)
	}
	return slices.ContainsFunc(us, func(u store.User) bool { return !u.Disabled }), nil
}

func (r *Resolver) serverToken(tok string) bool {
	sum := sha256.Sum256([]byte(tok))
	return r.hasToken && subtle.ConstantTimeCompare(sum[:], r.tokenSum[:]) == 1
}

// resolve finds the principal of credentials: a presented token first,
// then the session cookie, else nobody. A store failure is an error; a
// wrong credential is Bad.
func (r *Resolver) resolve(ctx context.Context, tok string, tokPresent bool, cookie string) (Result, error) {
	var p Principal
	var err error
	switch {
	case tokPresent:
		switch {
		case tok != "" && r.serverToken(tok):
			return Result{Principal: serverPrincipal}, nil
		case auth.LooksLikeToken(tok):
			p, err = r.byToken(ctx, tok)
		default:
			err = errBad
		}
	case cookie != "":
		p, err = r.bySession(ctx, cookie)
	default:
		required, err := r.SignInRequired(ctx)
		if err != nil {
			return Result{}, err
		}
		if required {
			return Result{Outcome: Missing}, nil
		}
		return Result{Principal: localPrincipal}, nil
	}
	if errors.Is(err, errBad) {
		return Result{Outcome: Bad}, nil
	}
	if err != nil {
		return Result{}, err
	}
	return Result{Principal: p}, nil
}

// liveUser returns the account id names if it exists and is enabled.
func (r *Resolver) liveUser(ctx context.Context, id string) (store.User, error) {
	u, err := r.st.GetUser(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return u, errBad
	}
	if err != nil {
		return u, err
	}
	if u.Disabled {
		return u, errBad
	}
	return u, nil
}

func (r *Resolver) byToken(ctx context.Context, tok string) (Principal, error) {
	k, err := r.st.GetTokenByHash(ctx, auth.HashToken(tok))
	if errors.Is(err, store.ErrNotFound) {
		return Principal{}, errBad
	}
	if err != nil {
		return Principal{}, err
	}
	u, err := r.liveUser(ctx, k.UserID)
	if err != nil {
		return Principal{}, err
	}
	if now := r.now(); now.Sub(k.LastUsed) >= touchEvery {
		// A failed touch costs the token nothing but its last-used time.
		if err := r.st.Write(ctx, func(tx store.Tx) error { return tx.TouchToken(ctx, k.ID, now) }); err != nil {
			r.log.Warn("token use not recorded", "token_id", k.ID, "err", err)
		}
	}
	return Principal{Kind: KindToken, UserID: u.ID, Name: u.Name, Role: auth.Role(u.Role),
		Scope: auth.Scope(k.Scope), TokenID: k.ID}, nil
}

func (r *Resolver) bySession(ctx context.Context, cookie string) (Principal, error) {
	s, err := r.liveSession(ctx, hashHex(cookie))
	if err != nil {
		return Principal{}, err
	}
	u, err := r.liveUser(ctx, s.UserID)
	if err != nil {
		return Principal{}, err
	}
	if now := r.now(); now.Sub(s.LastSeen) >= touchEvery {
		err := r.st.Write(ctx, func(tx store.Tx) error { return tx.TouchWebSession(ctx, s.ID, now, expiry(s.CreatedAt, now)) })
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			r.log.Warn("session use not recorded", "user_id", u.ID, "err", err)
		}
	}
	return Principal{Kind: KindUser, UserID: u.ID, Name: u.Name, Role: auth.Role(u.Role),
		SessionID: s.ID, csrf: csrfFor(cookie)}, nil
}

func (r *Resolver) liveSession(ctx context.Context, id string) (store.WebSession, error) {
	s, err := r.st.GetWebSession(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return s, errBad
	}
	if err != nil {
		return s, err
	}
	if !r.now().Before(s.ExpiresAt) {
		return s, errBad
	}
	return s, nil
}

// Recheck reports whether p's credential still holds (ErrEnded when not),
// and returns p with its user's current role: a long-lived event stream
// asks at each heartbeat, so disabling an account, revoking a token or
// signing out closes its streams.
func (r *Resolver) Recheck(ctx context.Context, p Principal) (Principal, error) {
	var err error
	switch p.Kind {
	case KindServerToken:
		return p, nil
	case KindLocal:
		required, err := r.SignInRequired(ctx)
		if err != nil {
			return p, err
		}
		if required {
			return p, ErrEnded
		}
		return p, nil
	case KindUser:
		_, err = r.liveSession(ctx, p.SessionID)
	case KindToken:
		err = r.liveToken(ctx, p.UserID, p.TokenID)
	default:
		return p, ErrEnded
	}
	if err == nil {
		var u store.User
		if u, err = r.liveUser(ctx, p.UserID); err == nil {
			p.Role, p.Name = auth.Role(u.Role), u.Name
		}
	}
	if errors.Is(err, errBad) {
		return p, ErrEnded
	}
	return p, err
}

func (r *Resolver) liveToken(ctx context.Context, userID, tokenID string) error {
	ks, err := r.st.ListTokens(ctx, userID)
	if err != nil {
		return err
	}
	for _, k := range ks {
		if k.ID == tokenID && k.RevokedAt.IsZero() {
			return nil
		}
	}
	return errBad
}
