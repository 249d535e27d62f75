package api_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the driver the server uses, to lock its file from outside

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
)

// Another process holds the database's write lock past SQLite's busy
// timeout (10 s) while a run streams: the run is not failed for it. Health
// says writes fail while the lock lasts, and once it is released the run
// recovers and completes.
func TestDatabaseLockedMidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("holds a lock for 12 s")
	}
	t.Parallel()
	dataDir := t.TempDir()
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.SlowText(200, 20))),
		e2etest.WithDataDir(dataDir), e2etest.WithRetries(2, 100*time.Millisecond))
	r := s.Send(t, s.NewSession(t), "stream")
	s.WaitRun(t, r.ID, 10*time.Second, "streaming", func(x e2etest.RunJSON) bool { return x.Status == "running" && x.LastEventID > 0 })

	db, err := sql.Open("sqlite", "file:"+filepath.Join(dataDir, "caduceus.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	// Past the busy timeout, the server's writes fail: health says so.
	deadline := time.Now().Add(12 * time.Second)
	failing := false
	for time.Now().Before(deadline) {
		var h struct{ Store string }
		e2etest.Do(t, "GET", s.URL+"/api/health", nil, &h)
		failing = failing || h.Store == "write_failing"
		time.Sleep(200 * time.Millisecond)
	}
	if _, err := conn.ExecContext(context.Background(), "COMMIT"); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if !failing {
		t.Error("health never reported failing writes while the database was locked")
	}
	got := s.WaitRun(t, r.ID, 30*time.Second, "the run to end", func(x e2etest.RunJSON) bool { return x.Terminal })
	if got.Status != "completed" {
		t.Fatalf("run ended %s, want completed after the lock", got.Status)
	}
	evs := s.Journal(t, r.ID)
	for _, st := range e2etest.OfType[e2etest.StatusJSON](t, evs, event.RunStatus) {
		t.Logf("run.status %s (%s)", st.Status, st.Reason)
	}
}
