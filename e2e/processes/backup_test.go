package processes

import (
	"database/sql"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"

	_ "modernc.org/sqlite" // the backup is opened as a database of its own
)

// `caduceus backup` copies the database of a running server while runs
// keep writing to it: the copy passes SQLite's integrity check and holds
// every session created before the backup began. It refuses to overwrite
// a file.
func TestBackupWhileServing(t *testing.T) {
	dataDir, ws := t.TempDir(), t.TempDir()
	sp := e2etest.WriteScript(t, e2etest.Script(e2etest.Turn(e2etest.SlowText(40, 5))))
	web := e2etest.StartServe(t, binary, dataDir, ws, sp)
	const before = 10
	var ids []string
	for range before {
		sid := web.NewSession(t)
		web.Send(t, sid, "go")
		ids = append(ids, sid)
	}

	// Runs stream and new sessions arrive while the backup is taken.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			// Not t.Fatal: this is not the test's goroutine.
			resp, err := http.Post(web.URL+"/api/sessions", "application/json", strings.NewReader(`{}`))
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusCreated {
				t.Errorf("create session while backing up: %d", resp.StatusCode)
				return
			}
		}
	}()
	dest := filepath.Join(t.TempDir(), "caduceus-backup.db")
	out, err := exec.Command(binary, "backup", "--data-dir", dataDir, dest).CombinedOutput()
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("backup: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "backup written: "+dest) || !strings.Contains(string(out), "integrity check ok") {
		t.Fatalf("backup said %q", out)
	}

	db, err := sql.Open("sqlite", "file:"+dest+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var check string
	if err := db.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q, %v", check, err)
	}
	var sessions, events int
	if err := db.QueryRow(`SELECT COUNT(*) FROM sessions`).Scan(&sessions); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT COUNT(*) FROM events`).Scan(&events); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		var n int
		if err := db.QueryRow(`SELECT COUNT(*) FROM sessions WHERE id = ?`, id).Scan(&n); err != nil || n != 1 {
			t.Fatalf("session %s is not in the copy (%v)", id, err)
		}
	}
	if live := len(web.Sessions(t)); sessions < before || sessions > live {
		t.Fatalf("the copy holds %d sessions: %d existed before it began, %d after", sessions, before, live)
	}
	t.Logf("the copy holds %d sessions and %d events (%s)", sessions, events, strings.TrimSpace(string(out)))

	// An existing file is never replaced.
	info, _ := os.Stat(dest)
	out, err = exec.Command(binary, "backup", "--data-dir", dataDir, dest).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "already exists") {
		t.Fatalf("a second backup to the same file: %v %q", err, out)
	}
	if again, _ := os.Stat(dest); again.Size() != info.Size() || !again.ModTime().Equal(info.ModTime()) {
		t.Fatal("the existing backup was changed")
	}

	// PostgreSQL is pg_dump's job; the URL is not echoed.
	cmd := exec.Command(binary, "backup", filepath.Join(t.TempDir(), "x.db"))
	cmd.Env = append(os.Environ(), "CADUCEUS_DATABASE_URL=postgres://caduceus:hunter2@db/caduceus")
	out, err = cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "pg_dump") || strings.Contains(string(out), "hunter2") {
		t.Fatalf("backup of a PostgreSQL database: %v %q", err, out)
	}
}
