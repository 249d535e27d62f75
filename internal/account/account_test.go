package account_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/account"
	"github.com/caduceus-dev/caduceus/internal/auth"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlite"
)

func cheap() auth.Params {
	return auth.Params{Memory: 64, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}
}

func open(t *testing.T) (*account.Manager, store.Store) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "a.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	now := time.UnixMilli(1_700_000_000_000)
	clock := func() time.Time { now = now.Add(time.Second); return now }
	return account.New(st, cheap(), clock), st
}

func TestCheckName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"ann", true},
		{"Ann.Smith", true},
		{"ann@example.com", true},
		{"émile_2", true},
		{"a", true},
		{strings.Repeat("a", account.MaxNameLen), true},
		{strings.Repeat("a", account.MaxNameLen+1), false},
		{"", false},
		{"ann smith", false},
		{"-ann", false},
		{".ann", false},
		{"ann\n", false},
		{"ann/../x", false},
		{"\xff", false},
	}
	for _, tc := range tests {
		err := account.CheckName(tc.name)
		if tc.ok != (err == nil) || (err != nil && !errors.Is(err, account.ErrBadName)) {
			t.Errorf("CheckName(%q) = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

func TestAddRefusesAndChangesNothing(t *testing.T) {
	ctx := context.Background()
	m, st := open(t)
	if _, err := m.Add(ctx, "ann", auth.RoleAdmin, "password1"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, role, pw string
		want           error
	}{
		{"ANN", "viewer", "password1", account.ErrNameTaken},
		{"bob", "root", "password1", auth.ErrBadValue},
		{"bob", "", "password1", auth.ErrBadValue},
		{"bob", "viewer", "short", auth.ErrPasswordTooShort},
		{"bob", "viewer", "", auth.ErrPasswordTooShort},
		{"bob smith", "viewer", "password1", account.ErrBadName},
	}
	for _, tc := range tests {
		if _, err := m.Add(ctx, tc.name, auth.Role(tc.role), tc.pw); !errors.Is(err, tc.want) {
			t.Errorf("Add(%q, %q, %q) = %v, want %v", tc.name, tc.role, tc.pw, err, tc.want)
		}
	}
	us, err := st.ListUsers(ctx)
	if err != nil || len(us) != 1 {
		t.Fatalf("users after refused adds: %+v, %v", us, err)
	}
}

func TestPasswordDisableRole(t *testing.T) {
	ctx := context.Background()
	m, st := open(t)
	added, err := m.Add(ctx, "Ann", auth.RoleOperator, "password1")
	if err != nil {
		t.Fatal(err)
	}
	before, _ := st.GetUser(ctx, added.ID)
	if ok, err := auth.VerifyPassword(before.PasswordHash, "password1"); !ok || err != nil {
		t.Fatalf("stored hash does not verify: %v", err)
	}
	if _, err := m.SetPassword(ctx, "ann", "new password"); err != nil {
		t.Fatal(err)
	}
	after, _ := st.GetUser(ctx, added.ID)
	if ok, _ := auth.VerifyPassword(after.PasswordHash, "new password"); !ok {
		t.Fatal("new password does not verify")
	}
	if ok, _ := auth.VerifyPassword(after.PasswordHash, "password1"); ok {
		t.Fatal("old password still verifies")
	}
	if !after.UpdatedAt.After(before.UpdatedAt) {
		t.Fatalf("updated_at not advanced: %v -> %v", before.UpdatedAt, after.UpdatedAt)
	}
	if _, err := m.SetPassword(ctx, "ann", "short"); !errors.Is(err, auth.ErrPasswordTooShort) {
		t.Fatalf("short password: %v", err)
	}
	if u, err := m.SetDisabled(ctx, "ANN", true); err != nil || !u.Disabled {
		t.Fatalf("disable: %+v, %v", u, err)
	}
	if u, err := m.SetRole(ctx, "ann", auth.RoleViewer); err != nil || u.Role != auth.RoleViewer || !u.Disabled {
		t.Fatalf("set role: %+v, %v", u, err)
	}
	if _, err := m.SetRole(ctx, "ann", "boss"); !errors.Is(err, auth.ErrBadValue) {
		t.Fatalf("bad role: %v", err)
	}
	for _, f := range []func() error{
		func() error { _, err := m.SetPassword(ctx, "zed", "password1"); return err },
		func() error { _, err := m.SetDisabled(ctx, "zed", true); return err },
	} {
		if err := f(); !errors.Is(err, account.ErrNoUser) {
			t.Errorf("change of an unknown user: %v", err)
		}
	}
	list, err := m.List(ctx)
	if err != nil || len(list) != 1 || list[0].Name != "Ann" || !list[0].Disabled || list[0].Role != auth.RoleViewer {
		t.Fatalf("List = %+v, %v", list, err)
	}
}
