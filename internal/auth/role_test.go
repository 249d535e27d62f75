package auth

import (
	"errors"
	"testing"
)

func TestParseRoleAndScope(t *testing.T) {
	tests := []struct {
		in        string
		roleOK    bool
		scopeOK   bool
		actionErr bool
	}{
		{"admin", true, true, true},
		{"operator", true, false, true},
		{"viewer", true, false, true},
		{"read", false, true, false},
		{"operate", false, true, true},
		{"Admin", false, false, true},
		{"", false, false, true},
		{" admin", false, false, true},
	}
	for _, tc := range tests {
		r, err := ParseRole(tc.in)
		if tc.roleOK != (err == nil) || (err == nil && string(r) != tc.in) || (err != nil && !errors.Is(err, ErrBadValue)) {
			t.Errorf("ParseRole(%q) = %q, %v", tc.in, r, err)
		}
		s, err := ParseScope(tc.in)
		if tc.scopeOK != (err == nil) || (err == nil && string(s) != tc.in) || (err != nil && !errors.Is(err, ErrBadValue)) {
			t.Errorf("ParseScope(%q) = %q, %v", tc.in, s, err)
		}
		if _, err := ParseAction(tc.in); tc.actionErr != (err != nil) {
			t.Errorf("ParseAction(%q): %v", tc.in, err)
		}
	}
}

func TestMay(t *testing.T) {
	all := []Action{ActRead, ActStart, ActSteer, ActCancel, ActApprove, ActAnswer, ActUsers, ActTokens, ActSettings}
	// want[i] is the allowed set for roles/scopes of the same level.
	tests := []struct {
		role  Role
		scope Scope
		want  map[Action]bool
	}{
		{RoleViewer, ScopeRead, map[Action]bool{ActRead: true}},
		{RoleOperator, ScopeOperate, map[Action]bool{ActRead: true, ActStart: true, ActSteer: true, ActCancel: true, ActApprove: true, ActAnswer: true}},
		{RoleAdmin, ScopeAdmin, map[Action]bool{ActRead: true, ActStart: true, ActSteer: true, ActCancel: true, ActApprove: true, ActAnswer: true, ActUsers: true, ActTokens: true, ActSettings: true}},
		{Role("root"), Scope("all"), map[Action]bool{}},
	}
	for _, tc := range tests {
		for _, a := range all {
			if got := tc.role.May(a); got != tc.want[a] {
				t.Errorf("%s.May(%s) = %v", tc.role, a, got)
			}
			if got := tc.scope.May(a); got != tc.want[a] {
				t.Errorf("%s.May(%s) = %v", tc.scope, a, got)
			}
		}
		if tc.role.May(Action("launch")) || tc.scope.May(Action("launch")) {
			t.Errorf("%s/%s may do an unknown action", tc.role, tc.scope)
		}
	}
}

func TestAllowedAndMayGrant(t *testing.T) {
	tests := []struct {
		role   Role
		scope  Scope
		action Action
		want   bool
	}{
		{RoleAdmin, ScopeRead, ActRead, true},
		{RoleAdmin, ScopeRead, ActStart, false},   // scope narrows the role
		{RoleViewer, ScopeAdmin, ActStart, false}, // the role bounds the scope
		{RoleViewer, ScopeAdmin, ActRead, true},
		{RoleOperator, ScopeOperate, ActApprove, true},
		{RoleOperator, ScopeAdmin, ActUsers, false},
		{RoleAdmin, ScopeAdmin, ActSettings, true},
	}
	for _, tc := range tests {
		if got := Allowed(tc.role, tc.scope, tc.action); got != tc.want {
			t.Errorf("Allowed(%s, %s, %s) = %v", tc.role, tc.scope, tc.action, got)
		}
	}
	grants := []struct {
		role  Role
		scope Scope
		want  bool
	}{
		{RoleAdmin, ScopeAdmin, true},
		{RoleAdmin, ScopeRead, true},
		{RoleOperator, ScopeOperate, true},
		{RoleOperator, ScopeAdmin, false},
		{RoleViewer, ScopeRead, true},
		{RoleViewer, ScopeOperate, false},
		{Role("x"), ScopeRead, false},
		{RoleAdmin, Scope("x"), false},
	}
	for _, tc := range grants {
		if got := MayGrant(tc.role, tc.scope); got != tc.want {
			t.Errorf("MayGrant(%s, %s) = %v", tc.role, tc.scope, got)
		}
	}
}
