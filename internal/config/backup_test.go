package config

import (
	"strings"
	"testing"
)

func TestParseBackup(t *testing.T) {
	cases := []struct {
		name     string
		args     []string
		env      map[string]string
		want     Backup
		postgres bool
		wantErr  string
	}{
		{name: "default data dir", args: []string{"b.db"}, env: map[string]string{"HOME": "/h"},
			want: Backup{DataDir: "/h/.local/share/caduceus", Dest: "b.db"}},
		{name: "data dir flag", args: []string{"--data-dir", "/d", "b.db"}, want: Backup{DataDir: "/d", Dest: "b.db"}},
		{name: "data dir env", args: []string{"b.db"}, env: map[string]string{"CADUCEUS_DATA_DIR": "/e"}, want: Backup{DataDir: "/e", Dest: "b.db"}},
		{name: "postgres", args: []string{"b.db"}, env: map[string]string{"CADUCEUS_DATABASE_URL": "postgres://u:p@h/db"},
			want: Backup{Database: "postgres://u:p@h/db", Dest: "b.db"}, postgres: true},
		{name: "no destination", args: []string{"--data-dir", "/d"}, wantErr: "name the file"},
		{name: "two destinations", args: []string{"--data-dir", "/d", "a.db", "b.db"}, wantErr: "unexpected argument"},
		{name: "flag after the file", args: []string{"a.db", "--data-dir", "/d"}, wantErr: "flags go before the file"},
		{name: "no data dir", args: []string{"a.db"}, wantErr: "no data directory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := ParseBackup(tc.args, func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b != tc.want || b.Postgres() != tc.postgres {
				t.Fatalf("got %+v (postgres %v), want %+v", b, b.Postgres(), tc.want)
			}
		})
	}
}
