package processes

import (
	"errors"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

// serveOpen runs `caduceus serve` on every interface with no token and
// returns its output and exit error: it is expected to refuse.
func serveOpen(t *testing.T, dir string) (string, error) {
	t.Helper()
	cmd := exec.Command(binary, "serve", "--addr", "0.0.0.0:0", "--data-dir", dir, "--workspace", t.TempDir())
	cmd.Env = append(os.Environ(), "CADUCEUS_TOKEN=")
	b, err := cmd.CombinedOutput()
	return string(b), err
}

// A server on a non-loopback address with no way to sign in (no
// CADUCEUS_TOKEN, no enabled account) refuses to start, says to run
// `caduceus user add`, and leaves no database behind; once an admin
// account exists it starts and asks for sign-in; with that account
// disabled it refuses again.
func TestOpenAddressNeedsSignIn(t *testing.T) {
	dir := t.TempDir()
	out, err := serveOpen(t, dir)
	if err == nil || !strings.Contains(out, "caduceus user add") || !strings.Contains(out, "CADUCEUS_TOKEN") {
		t.Fatalf("serve on 0.0.0.0 without token or account: err %v, output %q", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "caduceus.db")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the refused start left a database: %v", err)
	}

	const pw = "Kx8!root-pw"
	if code, _, errOut := cli(t, pw+"\n", "user", "add", "root", "--role", "admin", "--password-stdin", "--data-dir", dir); code != 0 {
		t.Fatalf("user add: %d %s", code, errOut)
	}
	web := e2etest.StartServe(t, binary, dir, t.TempDir(), e2etest.WriteScript(t, e2etest.Script(e2etest.Turn(e2etest.Text("hi")))),
		"--addr", "0.0.0.0:0")
	get := func(path string, header ...string) int {
		req, _ := http.NewRequest("GET", web.URL+path, nil)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if c := get("/api/health"); c != http.StatusOK {
		t.Fatalf("health: %d", c)
	}
	if c := get("/api/sessions"); c != http.StatusUnauthorized {
		t.Fatalf("sessions without sign-in: %d", c)
	}
	res, err := http.Post(web.URL+"/api/auth/login", "application/json", strings.NewReader(`{"name":"root","password":"`+pw+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	var cookie string
	for _, c := range res.Cookies() {
		if c.Name == "caduceus_session" {
			cookie = c.Value
		}
	}
	if res.StatusCode != http.StatusOK || cookie == "" {
		t.Fatalf("login: %d, cookie %q", res.StatusCode, cookie)
	}
	if c := get("/api/sessions", "Cookie", "caduceus_session="+cookie); c != http.StatusOK {
		t.Fatalf("sessions signed in: %d", c)
	}
	if err := web.Stop(t, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}

	if code, _, errOut := cli(t, "", "user", "disable", "root", "--data-dir", dir); code != 0 {
		t.Fatalf("user disable: %d %s", code, errOut)
	}
	if out, err := serveOpen(t, dir); err == nil || !strings.Contains(out, "caduceus user add") {
		t.Fatalf("serve on 0.0.0.0 with only a disabled account: err %v, output %q", err, out)
	}
}
