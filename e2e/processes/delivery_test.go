package processes

// Reliable webhook delivery (issue 17, h17-deliver): a run that ends while
// no web tier runs is delivered, by the runner process, and a run that
// ended while no process ran is delivered once a server starts, exactly
// once.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/hook"
	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/secretbox"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/postgres"
	"github.com/caduceus-dev/caduceus/internal/store/sqlite"
)

// hookReceiver counts the signed posts it gets per run.
type hookReceiver struct {
	secret string
	mu     sync.Mutex
	runs   map[string]int
	bad    []string
}

func (rc *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	ts := r.Header.Get(hook.HeaderTimestamp)
	sec, _ := strconv.ParseInt(ts, 10, 64)
	var p hook.Payload
	if err := hook.Verify(rc.secret, ts, r.Header.Get(hook.HeaderSignature), b, time.Unix(sec, 0)); err != nil {
		rc.bad = append(rc.bad, "signature: "+err.Error())
	} else if err := json.Unmarshal(b, &p); err != nil || p.Event != "run.completed" {
		rc.bad = append(rc.bad, "body: "+string(b))
	} else {
		rc.runs[p.Run.ID]++
	}
	w.WriteHeader(http.StatusOK)
}

func (rc *hookReceiver) got() (map[string]int, []string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := map[string]int{}
	for k, v := range rc.runs {
		out[k] = v
	}
	return out, append([]string(nil), rc.bad...)
}

// waitPost waits until the receiver got runID.
func (rc *hookReceiver) waitPost(t *testing.T, runID string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if runs, _ := rc.got(); runs[runID] > 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	runs, bad := rc.got()
	t.Fatalf("run %s was not delivered within 30 s (got %v, refused %v)", runID, runs, bad)
}

func TestDeliveryWithoutWebTier(t *testing.T) {
	// Every process shares the secretbox key; the PostgreSQL servers need
	// it from the environment, and the children inherit the test's.
	t.Setenv(secretbox.EnvKey, base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{5}, 32)))
	e2etest.EachStore(t, pg, testDeliveryWithoutWebTier)
}

func testDeliveryWithoutWebTier(t *testing.T, dbArgs []string) {
	dataDir, ws := t.TempDir(), t.TempDir()
	sp := e2etest.WriteScript(t, e2etest.Script(e2etest.Turn(e2etest.Text("done"))))
	rc := &hookReceiver{runs: map[string]int{}}
	recv := httptest.NewServer(rc)
	defer recv.Close()

	// The web tier alone (no runner) takes the webhook and queues a run,
	// then stops before any process ran it.
	web := e2etest.StartWeb(t, binary, dataDir, ws, sp, dbArgs...)
	var wh struct{ ID, Secret string }
	if c := e2etest.Do(t, "POST", web.URL+"/api/webhooks", map[string]any{"name": "ci", "url": recv.URL}, &wh); c != http.StatusCreated {
		t.Fatalf("create webhook: %d", c)
	}
	rc.mu.Lock()
	rc.secret = wh.Secret
	rc.mu.Unlock()
	sid := web.NewSession(t)
	runA := web.Send(t, sid, "build it").ID
	if err := web.Stop(t, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}

	// Only a runner process: it runs the run, and delivers its end.
	runner := e2etest.StartRunner(t, binary, dataDir, ws, sp, dbArgs...)
	rc.waitPost(t, runA)
	if err := runner.Stop(t, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}

	// No process at all: a run ends (written into the store, as a process
	// that died after ending it would leave it). The serve process started
	// after delivers it, and nothing twice.
	runB := seedEndedRun(t, dataDir, ws, dbArgs)
	web2 := e2etest.StartServe(t, binary, dataDir, ws, sp, dbArgs...)
	rc.waitPost(t, runB)
	// Time for a wrong second post to come: the sender polls every second.
	time.Sleep(3 * time.Second)
	runs, bad := rc.got()
	if len(bad) > 0 || len(runs) != 2 || runs[runA] != 1 || runs[runB] != 1 {
		t.Fatalf("posts per run %v (want %s and %s once each), refused %v", runs, runA, runB, bad)
	}
	var log struct {
		Deliveries []struct {
			RunID string `json:"run_id"`
			State string `json:"state"`
		} `json:"deliveries"`
	}
	if c := e2etest.Do(t, "GET", web2.URL+"/api/webhooks/"+wh.ID+"/deliveries", nil, &log); c != http.StatusOK || len(log.Deliveries) != 2 {
		t.Fatalf("deliveries log: %d %+v, want one per run", c, log.Deliveries)
	}
}

// seedEndedRun writes a completed run of a new session straight into the
// store while no process runs, and returns its id.
func seedEndedRun(t *testing.T, dataDir, workspace string, dbArgs []string) string {
	t.Helper()
	ctx := context.Background()
	var st interface {
		store.Store
		Close() error
	}
	var err error
	if len(dbArgs) == 2 {
		st, err = postgres.Open(ctx, dbArgs[1])
	} else {
		st, err = sqlite.Open(ctx, filepath.Join(dataDir, "caduceus.db"))
	}
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now().UTC()
	sess := store.Session{ID: id.New("ses"), Title: "ended while down", Workspace: workspace, CreatedAt: now, UpdatedAt: now}
	r := store.Run{ID: id.New("run"), SessionID: sess.ID, Status: run.Completed, Input: "report", Attempt: 1,
		CreatedAt: now, StartedAt: now, EndedAt: now}
	err = st.Write(ctx, func(tx store.Tx) error {
		if err := tx.InsertSession(ctx, sess); err != nil {
			return err
		}
		if err := tx.InsertRun(ctx, r); err != nil {
			return err
		}
		d := func(typ event.Type, p any) event.Draft {
			return event.Draft{RunID: r.ID, SessionID: sess.ID, Type: typ, Payload: p}
		}
		msg := id.New("msg")
		_, err := tx.AppendEvents(ctx, "",
			d(event.RunQueued, event.RunQueuedPayload{Input: r.Input, IfBusy: "enqueue"}),
			d(event.MessageUser, event.MessageUserPayload{MessageID: id.New("msg"), Content: r.Input}),
			d(event.RunStarted, event.RunStartedPayload{RunnerID: "seed", Attempt: 1, Model: "demo", Provider: "demo", Demo: true}),
			d(event.MessageDone, event.DonePayload{ID: msg, Text: "all green"}),
			d(event.RunDone, event.RunDonePayload{Status: "completed"}))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return r.ID
}
