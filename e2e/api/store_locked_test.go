package api_test

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
)

// lockFor is how long another process holds the database's write lock:
// the acceptance says 25 s, well past SQLite's busy timeout (10 s).
const lockFor = 25 * time.Second

// Another process holds the database's write lock for 25 s while four
// runs stream. No run is failed for it and none stays running: each
// completes, or is resumable and completes when resumed. Health says
// writes fail while the lock lasts, and says so no more once it is gone.
func TestDatabaseLockedMidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("holds a lock for 25 s")
	}
	t.Parallel()
	dataDir := t.TempDir()
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.SlowText(200, 20))),
		e2etest.WithDataDir(dataDir), e2etest.WithRetries(2, 100*time.Millisecond))
	var runs []e2etest.RunJSON
	for range 4 {
		runs = append(runs, s.Send(t, s.NewSession(t), "stream"))
	}
	for _, r := range runs {
		s.WaitRun(t, r.ID, 10*time.Second, "streaming", func(x e2etest.RunJSON) bool { return x.Status == "running" && x.LastEventID > 0 })
	}

	lk := startLocker(t, filepath.Join(dataDir, "caduceus.db"), lockFor)
	// The helper commits lockFor after it said "locked": an answer that
	// came before then came while the lock was held.
	held := lk.locked.Add(lockFor)
	var firstFailing time.Time
	var reason string
	polls, lapses := 0, 0
	for !lk.ended() {
		var h struct{ Status, Store, Reason string }
		e2etest.Do(t, "GET", s.URL+"/api/health", nil, &h)
		answered := time.Now()
		polls++
		switch {
		case h.Store == "write_failing" && firstFailing.IsZero():
			firstFailing, reason = answered, h.Reason
			if h.Status != "degraded" || h.Reason == "" {
				t.Errorf("health while writes fail = %+v, want degraded with a reason", h)
			}
		case h.Store != "write_failing" && !firstFailing.IsZero() && answered.Before(held):
			lapses++ // the trouble must be reported for as long as it lasts
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := lk.wait(); err != nil {
		t.Fatalf("the lock helper: %v", err)
	}
	if firstFailing.IsZero() {
		t.Fatalf("health never reported failing writes in %d polls while another process held the lock for %s", polls, lockFor)
	}
	if lapses > 0 {
		t.Errorf("health stopped reporting failing writes %d times while the lock was still held", lapses)
	}
	t.Logf("health said write_failing %s after the lock was taken, until it was released: %q", firstFailing.Sub(lk.locked).Round(time.Millisecond), reason)

	for _, r := range runs {
		got := s.WaitRun(t, r.ID, 60*time.Second, "the run to end or wait for a person",
			func(x e2etest.RunJSON) bool { return x.Terminal || x.Status == "interrupted" })
		if got.Status == "interrupted" {
			// Resumable is acceptable; resuming must then complete it.
			if c := e2etest.Do(t, "POST", s.URL+"/api/runs/"+r.ID+"/resume", nil, nil); c != 202 {
				t.Fatalf("resume of interrupted run %s: %d", r.ID, c)
			}
			got = s.WaitRun(t, r.ID, 60*time.Second, "the resumed run to end", func(x e2etest.RunJSON) bool { return x.Terminal })
		}
		var path []string
		for _, st := range e2etest.OfType[e2etest.StatusJSON](t, s.Journal(t, r.ID), event.RunStatus) {
			path = append(path, st.Status+" ("+st.Reason+")")
		}
		t.Logf("run %s: %s, then %s", r.ID, strings.Join(path, ", "), got.Status)
		if got.Status != "completed" {
			t.Errorf("run %s ended %s, want completed after the lock", r.ID, got.Status)
		}
	}
	var h struct{ Store string }
	e2etest.Do(t, "GET", s.URL+"/api/health", nil, &h)
	if h.Store != "ok" {
		t.Errorf("health after the lock and the runs = %+v, want store ok", h)
	}
}

// locker is the test binary re-executed to hold a database's write lock
// (TestMain, holdLock): another process, as the acceptance asks, not
// another connection of the server's own process.
type locker struct {
	cmd    *exec.Cmd
	locked time.Time
	done   chan struct{}
	// After done: how the helper ended, and whether it said it released
	// the lock (committed).
	err      error
	released bool
}

// startLocker starts the helper and returns once it holds the lock.
func startLocker(t *testing.T, db string, d time.Duration) *locker {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), lockDBEnv+"="+db, lockForEnv+"="+d.String())
	cmd.Stderr = os.Stderr
	// Should the test die, the lock goes with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lk := &locker{cmd: cmd, done: make(chan struct{})}
	first := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for n := 0; sc.Scan(); n++ {
			if n == 0 {
				first <- sc.Text()
			}
			lk.released = lk.released || sc.Text() == "released"
		}
		close(first)
		lk.err = cmd.Wait()
		close(lk.done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-lk.done
	})
	select {
	case l, ok := <-first:
		if !ok || l != "locked" {
			<-lk.done
			t.Fatalf("the lock helper said %q and ended: %v", l, lk.err)
		}
		lk.locked = time.Now()
	case <-time.After(30 * time.Second):
		t.Fatal("the lock helper did not take the lock within 30 s")
	}
	return lk
}

func (lk *locker) ended() bool {
	select {
	case <-lk.done:
		return true
	default:
		return false
	}
}

// wait waits for the helper and checks that it committed.
func (lk *locker) wait() error {
	<-lk.done
	if lk.err == nil && !lk.released {
		return errors.New("it ended without releasing the lock")
	}
	return lk.err
}
