// Package account manages people's accounts on a store: adding them,
// changing their passwords and roles, disabling them, listing them. The
// command line (`caduceus user ...`) and, later, the admin page call it, so
// both check names, roles and passwords alike. Passwords enter as plain
// text and leave only as argon2id hashes; nothing here returns a hash.
package account

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/caduceus-dev/caduceus/internal/auth"
	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// Errors, each with a stable code for callers that report them.
var (
	ErrBadName   = errors.New("bad_name")
	ErrNameTaken = errors.New("name_taken")
	ErrNoUser    = errors.New("no_such_user")
)

// MaxNameLen bounds a user name, in characters.
const MaxNameLen = 64

// User is an account as shown to people: no password hash.
type User struct {
	ID        string
	Name      string
	Role      auth.Role
	Disabled  bool
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Writer is the part of the store this package needs.
type Writer interface {
	store.Reader
	Write(ctx context.Context, fn func(store.Tx) error) error
}

// Manager changes accounts on a store.
type Manager struct {
	st     Writer
	params auth.Params
	now    func() time.Time

	dummyOnce sync.Once
	dummy     string
	// updates serialises Update in this process: two admins demoting each
	// other at once must not both see the other still admin. (PostgreSQL
	// runs transactions READ COMMITTED, so web nodes of one database can
	// still race; SQLite serialises every write.)
	updates sync.Mutex
}

// New returns a Manager hashing passwords with params; now is the clock
// (time.Now when nil).
func New(st Writer, params auth.Params, now func() time.Time) *Manager {
	if now == nil {
		now = time.Now
	}
	return &Manager{st: st, params: params, now: now}
}

// CheckName reports whether name can name an account: 1 to MaxNameLen
// letters, digits, '.', '_', '-' or '@', starting with a letter or digit.
// Names appear in lists, logs and URLs; no spaces or controls there.
func CheckName(name string) error {
	n := utf8.RuneCountInString(name)
	if n == 0 || n > MaxNameLen || !utf8.ValidString(name) {
		return fmt.Errorf("%w: a user name has 1 to %d characters", ErrBadName, MaxNameLen)
	}
	for i, r := range name {
		ok := unicode.IsLetter(r) || unicode.IsDigit(r)
		if !ok && i > 0 {
			ok = r == '.' || r == '_' || r == '-' || r == '@'
		}
		if !ok {
			return fmt.Errorf("%w: %q: letters, digits and . _ - @ only, starting with a letter or digit", ErrBadName, name)
		}
	}
	return nil
}

func view(u store.User) User {
	return User{ID: u.ID, Name: u.Name, Role: auth.Role(u.Role), Disabled: u.Disabled, CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt}
}

// Add creates an account. The password is checked and hashed before
// anything is written.
func (m *Manager) Add(ctx context.Context, name string, role auth.Role, password string) (User, error) {
	if err := CheckName(name); err != nil {
		return User{}, err
	}
	if _, err := auth.ParseRole(string(role)); err != nil {
		return User{}, err
	}
	hash, err := auth.HashPassword(password, m.params)
	if err != nil {
		return User{}, err
	}
	now := m.now()
	u := store.User{ID: id.New("usr"), Name: name, Role: string(role), PasswordHash: hash, CreatedAt: now, UpdatedAt: now}
	err = m.st.Write(ctx, func(tx store.Tx) error { return tx.InsertUser(ctx, u) })
	if errors.Is(err, store.ErrConflict) {
		return User{}, fmt.Errorf("%w: a user named %q exists", ErrNameTaken, name)
	}
	if err != nil {
		return User{}, fmt.Errorf("add user: %w", err)
	}
	return view(u), nil
}

// List lists the accounts, oldest first.
func (m *Manager) List(ctx context.Context) ([]User, error) {
	us, err := m.st.ListUsers(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]User, 0, len(us))
	for _, u := range us {
		out = append(out, view(u))
	}
	return out, nil
}

// update changes the named account with change, in one transaction.
func (m *Manager) update(ctx context.Context, name string, change func(*store.User)) (User, error) {
	return m.updateWhere(ctx, func(tx store.Tx) (store.User, error) {
		u, err := tx.GetUserByName(ctx, name)
		if errors.Is(err, store.ErrNotFound) {
			return u, fmt.Errorf("%w: %q", ErrNoUser, name)
		}
		return u, err
	}, func(_ store.Tx, u *store.User) error { change(u); return nil })
}

// updateByID changes the account with id; change may refuse.
func (m *Manager) updateByID(ctx context.Context, id string, change func(store.Tx, *store.User) error) (User, error) {
	return m.updateWhere(ctx, func(tx store.Tx) (store.User, error) {
		u, err := tx.GetUser(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return u, fmt.Errorf("%w: %q", ErrNoUser, id)
		}
		return u, err
	}, change)
}

func (m *Manager) updateWhere(ctx context.Context, find func(store.Tx) (store.User, error), change func(store.Tx, *store.User) error) (User, error) {
	var out store.User
	err := m.st.Write(ctx, func(tx store.Tx) error {
		u, err := find(tx)
		if err != nil {
			return err
		}
		if err := change(tx, &u); err != nil {
			return err
		}
		u.UpdatedAt = m.now()
		out = u
		return tx.UpdateUser(ctx, u)
	})
	if err != nil {
		return User{}, err
	}
	return view(out), nil
}

// SetPasswordByID replaces the password of the account with id.
func (m *Manager) SetPasswordByID(ctx context.Context, id, password string) (User, error) {
	hash, err := auth.HashPassword(password, m.params)
	if err != nil {
		return User{}, err
	}
	return m.updateByID(ctx, id, func(_ store.Tx, u *store.User) error { u.PasswordHash = hash; return nil })
}

// SetPassword replaces the account's password.
func (m *Manager) SetPassword(ctx context.Context, name, password string) (User, error) {
	hash, err := auth.HashPassword(password, m.params)
	if err != nil {
		return User{}, err
	}
	return m.update(ctx, name, func(u *store.User) { u.PasswordHash = hash })
}

// SetDisabled disables or enables the account. Nothing of it is deleted;
// the web tier is to refuse a disabled account's sign-in and tokens.
func (m *Manager) SetDisabled(ctx context.Context, name string, disabled bool) (User, error) {
	return m.update(ctx, name, func(u *store.User) { u.Disabled = disabled })
}

// SetRole changes the account's role.
func (m *Manager) SetRole(ctx context.Context, name string, role auth.Role) (User, error) {
	if _, err := auth.ParseRole(string(role)); err != nil {
		return User{}, err
	}
	return m.update(ctx, name, func(u *store.User) { u.Role = string(role) })
}

// ErrBadCredentials is Verify's one answer for an unknown name, a wrong
// password and a disabled account alike, so that a caller cannot tell
// which names exist.
var ErrBadCredentials = errors.New("bad_credentials")

// Verify checks name's password and returns the account when it matches
// and the account is enabled. An unknown name costs a hash of a dummy
// password, so it takes as long as a wrong password. A hash made with
// other parameters than the manager's is replaced on success.
func (m *Manager) Verify(ctx context.Context, name, password string) (User, error) {
	u, err := m.st.GetUserByName(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		_, _ = auth.VerifyPassword(m.dummyHash(), password)
		return User{}, ErrBadCredentials
	}
	if err != nil {
		return User{}, fmt.Errorf("verify: %w", err)
	}
	ok, err := auth.VerifyPassword(u.PasswordHash, password)
	if err != nil || !ok || u.Disabled {
		return User{}, ErrBadCredentials
	}
	if auth.NeedsRehash(u.PasswordHash, m.params) {
		if hash, herr := auth.HashPassword(password, m.params); herr == nil {
			_ = m.st.Write(ctx, func(tx store.Tx) error {
				cur, err := tx.GetUser(ctx, u.ID)
				if err != nil || cur.PasswordHash != u.PasswordHash {
					return err // changed meanwhile: keep the newer one
				}
				cur.PasswordHash = hash
				return tx.UpdateUser(ctx, cur)
			})
		}
	}
	return view(u), nil
}

// dummyHash is a hash of no one's password with the manager's parameters,
// made once.
func (m *Manager) dummyHash() string {
	m.dummyOnce.Do(func() {
		m.dummy, _ = auth.HashPassword("no account has this password", m.params)
	})
	return m.dummy
}

// ErrLastAdmin refuses a change that would leave no enabled admin.
var ErrLastAdmin = errors.New("last_admin")

// Change is a partial update of an account; nil fields stay.
type Change struct {
	Role     *auth.Role
	Disabled *bool
	Password *string
}

// Update applies c to the account id in one transaction. It refuses to
// disable or demote the last enabled admin (ErrLastAdmin): nobody could
// manage accounts from the web any more.
func (m *Manager) Update(ctx context.Context, id string, c Change) (User, error) {
	if c.Role != nil {
		if _, err := auth.ParseRole(string(*c.Role)); err != nil {
			return User{}, err
		}
	}
	var hash string
	if c.Password != nil {
		var err error
		if hash, err = auth.HashPassword(*c.Password, m.params); err != nil {
			return User{}, err
		}
	}
	m.updates.Lock()
	defer m.updates.Unlock()
	return m.updateByID(ctx, id, func(tx store.Tx, u *store.User) error {
		wasAdmin := u.Role == string(auth.RoleAdmin) && !u.Disabled
		if c.Role != nil {
			u.Role = string(*c.Role)
		}
		if c.Disabled != nil {
			u.Disabled = *c.Disabled
		}
		if hash != "" {
			u.PasswordHash = hash
		}
		if wasAdmin && (u.Role != string(auth.RoleAdmin) || u.Disabled) {
			us, err := tx.ListUsers(ctx)
			if err != nil {
				return err
			}
			admins := 0
			for _, o := range us {
				if o.Role == string(auth.RoleAdmin) && !o.Disabled {
					admins++
				}
			}
			if admins <= 1 {
				return fmt.Errorf("%w: %s is the last enabled admin", ErrLastAdmin, u.Name)
			}
		}
		return nil
	})
}
