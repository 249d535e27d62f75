package e2etest

import (
	"context"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/account"
	"github.com/caduceus-dev/caduceus/internal/app"
	"github.com/caduceus-dev/caduceus/internal/auth"
)

// User is an account to create before a server starts (WithUsers).
type User struct{ Name, Role, Password string }

// cheapHash keeps argon2id fast in tests; the server verifies a hash by the
// parameters stored in it, so sign-in works the same.
var cheapHash = auth.Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}

// AddUsers creates accounts on the SQLite store of dataDir, as `caduceus
// user add` does, and returns their ids by name. Call it before a server
// starts on dataDir (WithDataDir); the store is closed again on return.
func AddUsers(t testing.TB, dataDir string, users ...User) map[string]string {
	t.Helper()
	ctx := context.Background()
	st, err := app.OpenStore(ctx, dataDir, "")
	if err != nil {
		t.Fatalf("open the store of %s: %v", dataDir, err)
	}
	defer st.Close()
	m := account.New(st, cheapHash, nil)
	ids := make(map[string]string, len(users))
	for _, u := range users {
		role, err := auth.ParseRole(u.Role)
		if err != nil {
			t.Fatalf("user %s: %v", u.Name, err)
		}
		got, err := m.Add(ctx, u.Name, role, u.Password)
		if err != nil {
			t.Fatalf("add user %s: %v", u.Name, err)
		}
		ids[u.Name] = got.ID
	}
	return ids
}
