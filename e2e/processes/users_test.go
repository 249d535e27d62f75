package processes

import (
	"bytes"
	"database/sql"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/auth"
)

// cli runs the binary with stdin and returns its exit code and outputs.
func cli(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String(), errOut.String()
	} else if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return 0, out.String(), errOut.String()
}

// storedHashes reads name -> (password hash, disabled) from the file.
func storedHashes(t *testing.T, path string) map[string]string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name, password_hash FROM users`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var n, h string
		if err := rows.Scan(&n, &h); err != nil {
			t.Fatal(err)
		}
		out[n] = h
	}
	return out
}

// The user commands of the real binary on a real data dir: accounts are
// added, listed, changed and disabled; bad input changes nothing; the
// file holds argon2id hashes and no password, and no output shows either.
func TestUserCommands(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "caduceus.db")
	// Passwords share no 8 characters with the outputs or the schema, so
	// any piece of one found is a leak.
	pw := map[string]string{"ann": "Xq7!vKw2 ann", "bob": "Rj4#tNz8-bo", "carol": "Ly9$pGd3 ca"}
	newBob := "Hm2%sWq6 new"
	secrets := []string{pw["ann"], pw["bob"], pw["carol"], newBob}
	var outputs strings.Builder
	run := func(wantCode int, stdin string, args ...string) string {
		t.Helper()
		code, out, errOut := cli(t, stdin, append(args, "--data-dir", dir)...)
		outputs.WriteString(out + errOut)
		if code != wantCode {
			t.Fatalf("%v: exit %d, want %d\nstdout: %s\nstderr: %s", args, code, wantCode, out, errOut)
		}
		return out + errOut
	}

	run(0, pw["ann"]+"\n", "user", "add", "ann", "--role", "admin", "--password-stdin")
	run(0, pw["bob"], "user", "add", "--role", "operator", "--password-stdin", "bob") // no newline, flags first
	run(0, pw["carol"]+"\r\n", "user", "add", "carol", "--role", "viewer", "--password-stdin")

	refused := []struct {
		stdin string
		args  []string
		want  string
	}{
		{"another password\n", []string{"user", "add", "ANN", "--role", "viewer", "--password-stdin"}, "name_taken"},
		{"short\n", []string{"user", "add", "dave", "--role", "viewer", "--password-stdin"}, "shorter than 8"},
		{"\n", []string{"user", "add", "dave", "--role", "viewer", "--password-stdin"}, "shorter than 8"},
		{"long enough pw\n", []string{"user", "add", "dave", "--role", "root", "--password-stdin"}, `role "root"`},
		{"long enough pw\n", []string{"user", "add", "dave", "--role", "viewer"}, "not a terminal"},
		{"long enough pw\n", []string{"user", "add", "da ve", "--role", "viewer", "--password-stdin"}, "bad_name"},
		{"long enough pw\n", []string{"user", "passwd", "zed", "--password-stdin"}, "no_such_user"},
		{"", []string{"user", "disable", "zed"}, "no_such_user"},
	}
	for _, r := range refused {
		if out := run(1, r.stdin, r.args...); !strings.Contains(out, r.want) {
			t.Errorf("%v: output %q does not say %q", r.args, out, r.want)
		}
	}
	if code, _, errOut := cli(t, "", "user", "add", "dave", "--data-dir", dir); code != 2 || !strings.Contains(errOut, "--role is required") {
		t.Errorf("add without --role: exit %d, %q", code, errOut)
	}

	list := run(0, "", "user", "list")
	lines := strings.Split(strings.TrimSpace(list), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "NAME") {
		t.Fatalf("list:\n%s", list)
	}
	for i, want := range [][]string{{"ann", "admin", "active"}, {"bob", "operator", "active"}, {"carol", "viewer", "active"}} {
		if f := strings.Fields(lines[i+1]); len(f) < 3 || f[0] != want[0] || f[1] != want[1] || f[2] != want[2] {
			t.Errorf("list line %d: %q, want %v", i+1, lines[i+1], want)
		}
	}

	before := storedHashes(t, dbPath)
	run(0, newBob+"\n", "user", "passwd", "BOB", "--password-stdin")
	run(0, "", "user", "disable", "carol")
	if list := run(0, "", "user", "list"); !strings.Contains(list, "carol") || !regexpLine(list, "carol", "disabled") || !regexpLine(list, "ann", "active") {
		t.Errorf("list after disable:\n%s", list)
	}
	after := storedHashes(t, dbPath)
	if len(after) != 3 {
		t.Fatalf("users in the file: %v", len(after))
	}
	if after["ann"] != before["ann"] || after["bob"] == before["bob"] {
		t.Errorf("passwd changed the wrong hashes")
	}
	pw["bob"] = newBob
	for name, h := range after {
		if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
			t.Errorf("%s: stored hash %q is not argon2id with the default parameters", name, h)
		}
		if ok, err := auth.VerifyPassword(h, pw[name]); !ok || err != nil {
			t.Errorf("%s: stored hash does not verify the password: %v", name, err)
		}
		secrets = append(secrets, h[strings.LastIndex(h, "$")+1:], h[strings.Index(h, "p=1$")+4:strings.LastIndex(h, "$")])
	}
	if ok, _ := auth.VerifyPassword(after["bob"], "Rj4#tNz8-bo"); ok {
		t.Error("bob's old password still verifies")
	}
	run(0, "", "user", "enable", "carol")
	if list := run(0, "", "user", "list"); !regexpLine(list, "carol", "active") {
		t.Errorf("list after enable:\n%s", list)
	}

	// No password, hash or salt in any output; no password anywhere in the
	// data dir (the scan reads every row of every table, users included).
	if l := e2etest.SecretLeaks(outputs.String(), secrets); len(l) > 0 {
		t.Errorf("command output holds %v", l)
	}
	rows, dump := e2etest.ScanDB(t, dbPath, secrets[:4])
	if rows == 0 || !strings.Contains(dump, "$argon2id$") {
		t.Fatalf("the scan read %d rows and no hash: it would miss a leak", rows)
	}
	e2etest.ScanFiles(t, dir, secrets[:4])
}

// regexpLine reports whether a line of out starts with name and holds word
// as a field.
func regexpLine(out, name, word string) bool {
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) > 2 && f[0] == name {
			for _, x := range f[1:] {
				if x == word {
					return true
				}
			}
		}
	}
	return false
}
