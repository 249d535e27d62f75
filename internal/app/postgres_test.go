package app_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/config"
	"github.com/caduceus-dev/caduceus/internal/store/postgres"
	"github.com/caduceus-dev/caduceus/internal/store/postgres/pgtest"
)

var pg = pgtest.New()

func TestMain(m *testing.M) { os.Exit(pg.Main(m)) }

// A web tier and a runner that share only a PostgreSQL database (separate
// data dirs: no wake bus between them, as on two hosts): the runner's
// registration shows in the web tier's health, a message sent to the web
// tier is executed by the runner, and neither made a SQLite file.
func TestPostgresWebTierAndRunner(t *testing.T) {
	t.Parallel()
	url := pg.Database(t)
	web := testConfig(t)
	web.Database, web.Runner = url, config.RunnerNone
	// The runner renews its lease over PostgreSQL beside the other tests of
	// the package and the race detector: a 2 s lease was missed under load
	// and the run interrupted. What is tested here is the wiring, not the
	// lease.
	web.Lease = 5 * time.Second
	w := serve(t, web)
	rc := testConfig(t)
	rc.Database, rc.Runner, rc.Addr, rc.Lease = url, config.RunnerOnly, "", 5*time.Second
	r := serve(t, rc)

	_, _, b := get(t, w.URL()+"/api/meta")
	if !strings.Contains(string(b), fmt.Sprintf(`"store_schema":%d`, postgres.SchemaVersion)) {
		t.Fatalf("meta: %s", b)
	}
	_, _, b = get(t, w.URL()+"/api/health")
	if !strings.Contains(string(b), r.RunnerID()) {
		t.Fatalf("health of the web tier does not list runner %s: %s", r.RunnerID(), b)
	}
	st, _, b := request(t, "POST", w.URL()+"/api/sessions", "{}")
	var s struct{ ID string }
	if err := json.Unmarshal(b, &s); st != 201 || err != nil {
		t.Fatalf("create session: %d %s", st, b)
	}
	st, _, b = request(t, "POST", w.URL()+"/api/sessions/"+s.ID+"/messages", `{"content":"hello"}`)
	var run struct{ ID, Status string }
	if err := json.Unmarshal(b, &run); st != 202 || err != nil {
		t.Fatalf("send: %d %s", st, b)
	}
	deadline := time.Now().Add(20 * time.Second)
	for run.Status != "completed" {
		if time.Now().After(deadline) {
			t.Fatalf("run is %s after 20s", run.Status)
		}
		time.Sleep(10 * time.Millisecond)
		_, _, b = get(t, w.URL()+"/api/runs/"+run.ID)
		_ = json.Unmarshal(b, &run)
	}
	_, _, b = get(t, w.URL()+"/api/runs/"+run.ID+"/events")
	if !strings.Contains(string(b), r.RunnerID()) {
		t.Fatalf("the run's events do not name runner %s: %.500s", r.RunnerID(), b)
	}
	for _, dir := range []string{web.DataDir, rc.DataDir} {
		for _, name := range []string{"caduceus.db", "wake"} {
			if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
				t.Errorf("%s was made beside a PostgreSQL store", filepath.Join(dir, name))
			}
		}
	}
}
