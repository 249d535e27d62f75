package account_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/account"
	"github.com/caduceus-dev/caduceus/internal/auth"
)

func TestVerify(t *testing.T) {
	ctx := context.Background()
	m, st := open(t)
	if _, err := m.Add(ctx, "ann", auth.RoleOperator, "ann-password"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Add(ctx, "off", auth.RoleAdmin, "off-password"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.SetDisabled(ctx, "off", true); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, pw string
		ok       bool
	}{
		{"ann", "ann-password", true},
		{"ANN", "ann-password", true},
		{"ann", "ann-passwor", false},
		{"zed", "ann-password", false},
		{"off", "off-password", false},
		{"ann", strings.Repeat("x", 10000), false},
	}
	for _, tc := range tests {
		u, err := m.Verify(ctx, tc.name, tc.pw)
		if tc.ok != (err == nil) || (err != nil && !errors.Is(err, account.ErrBadCredentials)) || (tc.ok && u.Name != "ann") {
			t.Errorf("Verify(%q, %.12q) = %+v, %v; want ok=%v", tc.name, tc.pw, u, err, tc.ok)
		}
	}
	// A hash made with other parameters is replaced at a successful
	// sign-in.
	strong := account.New(st, auth.Params{Memory: 128, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 32}, nil)
	if _, err := strong.Verify(ctx, "ann", "ann-password"); err != nil {
		t.Fatal(err)
	}
	u, _ := st.GetUserByName(ctx, "ann")
	if !strings.Contains(u.PasswordHash, "m=128,") {
		t.Fatalf("hash not upgraded: %s", u.PasswordHash)
	}
}

func TestUpdateLastAdmin(t *testing.T) {
	ctx := context.Background()
	m, _ := open(t)
	root, _ := m.Add(ctx, "root", auth.RoleAdmin, "root-password")
	ops, _ := m.Add(ctx, "ops", auth.RoleOperator, "ops-password")
	admin, operator, yes, no := auth.RoleAdmin, auth.RoleOperator, true, false
	short := "short"
	steps := []struct {
		name string
		id   string
		c    account.Change
		want error
	}{
		{"demote the only admin", root.ID, account.Change{Role: &operator}, account.ErrLastAdmin},
		{"disable the only admin", root.ID, account.Change{Disabled: &yes}, account.ErrLastAdmin},
		{"disable an operator", ops.ID, account.Change{Disabled: &yes}, nil},
		{"promote a disabled account", ops.ID, account.Change{Role: &admin}, nil},
		{"still the only enabled admin", root.ID, account.Change{Disabled: &yes}, account.ErrLastAdmin},
		{"enable the second admin", ops.ID, account.Change{Disabled: &no}, nil},
		{"now root may step down", root.ID, account.Change{Role: &operator}, nil},
		{"and ops is the last", ops.ID, account.Change{Role: &operator}, account.ErrLastAdmin},
		{"bad role", ops.ID, account.Change{Role: new(auth.Role("boss"))}, auth.ErrBadValue},
		{"short password", ops.ID, account.Change{Password: &short}, auth.ErrPasswordTooShort},
		{"unknown", "usr_nope", account.Change{Disabled: &yes}, account.ErrNoUser},
	}
	for _, s := range steps {
		if _, err := m.Update(ctx, s.id, s.c); !errors.Is(err, s.want) || (s.want == nil && err != nil) {
			t.Fatalf("%s: %v, want %v", s.name, err, s.want)
		}
	}
}

func TestTokens(t *testing.T) {
	ctx := context.Background()
	m, st := open(t)
	vic, _ := m.Add(ctx, "vic", auth.RoleViewer, "vic-password")
	ops, _ := m.Add(ctx, "ops", auth.RoleOperator, "ops-password")
	tests := []struct {
		name   string
		user   string
		token  string
		scope  auth.Scope
		within auth.Role
		want   error
	}{
		{"viewer, read", vic.ID, "a", auth.ScopeRead, "", nil},
		{"viewer, operate", vic.ID, "b", auth.ScopeOperate, "", account.ErrScopeTooWide},
		{"operator, operate", ops.ID, "c", auth.ScopeOperate, "", nil},
		{"operator within viewer, operate", ops.ID, "d", auth.ScopeOperate, auth.RoleViewer, account.ErrScopeTooWide},
		{"blank name", ops.ID, "  ", auth.ScopeRead, "", account.ErrBadTokenName},
		{"control character", ops.ID, "a\nb", auth.ScopeRead, "", account.ErrBadTokenName},
		{"unknown user", "usr_nope", "e", auth.ScopeRead, "", account.ErrNoUser},
	}
	for _, tc := range tests {
		k, secret, err := m.CreateToken(ctx, tc.user, tc.token, tc.scope, tc.within)
		if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
			t.Fatalf("%s: %v, want %v", tc.name, err, tc.want)
		}
		if err == nil && (!auth.LooksLikeToken(secret) || !strings.HasPrefix(secret, k.Prefix)) {
			t.Fatalf("%s: secret %q, prefix %q", tc.name, secret, k.Prefix)
		}
	}
	all, _ := m.ListTokens(ctx, "")
	own, _ := m.ListTokens(ctx, vic.ID)
	if len(all) != 2 || len(own) != 1 || own[0].User != "vic" {
		t.Fatalf("all %+v, own %+v", all, own)
	}
	if err := m.RevokeToken(ctx, vic.ID, all[1].ID); !errors.Is(err, account.ErrNoToken) {
		t.Fatalf("revoke another's token: %v", err)
	}
	if err := m.RevokeToken(ctx, vic.ID, own[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := m.RevokeToken(ctx, "", own[0].ID); !errors.Is(err, account.ErrNoToken) {
		t.Fatalf("revoke twice: %v", err)
	}
	ks, _ := st.ListTokens(ctx, vic.ID)
	if len(ks) != 1 || ks[0].RevokedAt.IsZero() {
		t.Fatalf("stored: %+v", ks)
	}
}
