package config

import (
	"strings"
	"testing"
)

func TestParseUser(t *testing.T) {
	home := map[string]string{"HOME": "/h"}
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		want    User
		wantErr string
	}{
		{name: "add flags after name", args: []string{"add", "ann", "--role", "admin", "--password-stdin"}, env: home,
			want: User{Action: "add", Name: "ann", Role: "admin", PasswordStdin: true, DataDir: "/h/.local/share/caduceus"}},
		{name: "add flags before name", args: []string{"add", "--role=viewer", "--data-dir", "/d", "bob"}, env: home,
			want: User{Action: "add", Name: "bob", Role: "viewer", DataDir: "/d"}},
		{name: "list", args: []string{"list"}, env: map[string]string{"CADUCEUS_DATA_DIR": "/e"},
			want: User{Action: "list", DataDir: "/e"}},
		{name: "passwd", args: []string{"passwd", "ann", "--password-stdin"}, env: home,
			want: User{Action: "passwd", Name: "ann", PasswordStdin: true, DataDir: "/h/.local/share/caduceus"}},
		{name: "disable", args: []string{"disable", "ann"}, env: home, want: User{Action: "disable", Name: "ann", DataDir: "/h/.local/share/caduceus"}},
		{name: "enable", args: []string{"enable", "ann", "--data-dir", "/d"}, env: home, want: User{Action: "enable", Name: "ann", DataDir: "/d"}},
		{name: "no action", env: home, wantErr: "an action is needed"},
		{name: "unknown action", args: []string{"delete", "ann"}, env: home, wantErr: `unknown action "delete"`},
		{name: "add without role", args: []string{"add", "ann"}, env: home, wantErr: "--role is required"},
		{name: "add without name", args: []string{"add", "--role", "admin"}, env: home, wantErr: "exactly one user name"},
		{name: "two names", args: []string{"disable", "ann", "bob"}, env: home, wantErr: "exactly one user name"},
		{name: "list with name", args: []string{"list", "ann"}, env: home, wantErr: "unexpected argument"},
		{name: "role on disable", args: []string{"disable", "ann", "--role", "admin"}, env: home, wantErr: "flag provided but not defined"},
		{name: "password on the command line", args: []string{"add", "ann", "--role", "admin", "--password", "x"}, env: home, wantErr: "flag provided but not defined"},
		{name: "no data dir", args: []string{"list"}, wantErr: "no data directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseUser(tc.args, func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseUser = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}
