package telemetry

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// fakeStore answers the three reads of the collector from memory.
type fakeStore struct {
	runs    []store.Run
	reqs    []store.Request
	runners []store.RunnerInfo
	err     error
	asked   [][]run.Status
}

func (f *fakeStore) RunsWithStatus(_ context.Context, st ...run.Status) ([]store.Run, error) {
	f.asked = append(f.asked, st)
	var out []store.Run
	for _, r := range f.runs {
		if slices.Contains(st, r.Status) {
			out = append(out, r)
		}
	}
	return out, f.err
}

func (f *fakeStore) ListRunners(context.Context) ([]store.RunnerInfo, error) { return f.runners, f.err }

func (f *fakeStore) ListRequests(_ context.Context, q store.RequestQuery) ([]store.Request, error) {
	var out []store.Request
	for _, r := range f.reqs {
		if q.Status == "" || r.Status == q.Status {
			out = append(out, r)
		}
	}
	return out, f.err
}

// gather reads every metric of reg whose name starts with prefix as
// "name{label=value,...}" → value.
func gather(t *testing.T, reg *prometheus.Registry, prefix string) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), prefix) {
			continue
		}
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			key := mf.GetName()
			if len(labels) > 0 {
				key += "{" + strings.Join(labels, ",") + "}"
			}
			switch {
			case m.GetGauge() != nil:
				out[key] = m.GetGauge().GetValue()
			case m.GetCounter() != nil:
				out[key] = m.GetCounter().GetValue()
			case m.GetHistogram() != nil:
				out[key+"_count"] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

func TestStoreCollector(t *testing.T) {
	now := time.Now()
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	st := &fakeStore{
		runs: []store.Run{
			{ID: "q1", Status: run.Queued, CreatedAt: ago(30 * time.Second)},
			{ID: "q2", Status: run.Queued, CreatedAt: ago(time.Second)},
			{ID: "r1", Status: run.Running, RunnerID: "rn1"},
			// Parked with its question unanswered: waits for a person.
			{ID: "a1", Status: run.AwaitingApproval},
			// Parked and answered: waits for a runner.
			{ID: "c1", Status: run.AwaitingClarify},
			// Held by a runner while it asks: neither.
			{ID: "a2", Status: run.AwaitingApproval, RunnerID: "rn1"},
			{ID: "v1", Status: run.Recovering, RetryAt: ago(time.Second)},
			{ID: "v2", Status: run.Recovering, RetryAt: now.Add(time.Hour)},
			{ID: "done", Status: run.Completed},
		},
		reqs: []store.Request{
			{ID: "p1", RunID: "a1", Kind: store.KindApproval, Status: store.RequestPending},
			{ID: "p2", RunID: "a2", Kind: store.KindApproval, Status: store.RequestPending, ExpiresAt: now.Add(time.Hour)},
			{ID: "p3", RunID: "c1", Kind: store.KindClarify, Status: store.RequestPending, ExpiresAt: ago(time.Second)}, // expired
			{ID: "p4", RunID: "c1", Kind: store.KindClarify, Status: store.RequestResolved},
		},
		runners: []store.RunnerInfo{{ID: "rn1", HeartbeatAt: ago(time.Second)}, {ID: "dead", HeartbeatAt: ago(time.Hour)}},
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(newStoreCollector(st, 45*time.Second, discard()))
	got := gather(t, reg, "caduceus_")
	oldest := got["caduceus_queue_oldest_wait_seconds"]
	if oldest < 30 || oldest > 40 {
		t.Errorf("oldest wait %v, want about 30 s", oldest)
	}
	delete(got, "caduceus_queue_oldest_wait_seconds")
	want := map[string]float64{
		"caduceus_store_up":                        1,
		"caduceus_queue_depth":                     4, // q1, q2, c1, v1
		"caduceus_runners":                         1,
		"caduceus_requests_pending{kind=approval}": 2,
		"caduceus_requests_pending{kind=clarify}":  0,
	}
	for _, s := range run.All() {
		if !s.Terminal() {
			want[fmt.Sprintf("caduceus_runs{status=%s}", s)] = 0
		}
	}
	want["caduceus_runs{status=queued}"] = 2
	want["caduceus_runs{status=running}"] = 1
	want["caduceus_runs{status=awaiting_approval}"] = 2
	want["caduceus_runs{status=awaiting_clarify}"] = 1
	want["caduceus_runs{status=recovering}"] = 2
	if !maps.Equal(got, want) {
		t.Fatalf("got  %v\nwant %v", got, want)
	}
	// Only unfinished runs are read: finished ones grow without bound.
	for _, asked := range st.asked {
		for _, s := range asked {
			if s.Terminal() {
				t.Fatalf("the collector read %s runs", s)
			}
		}
	}
}

// A store that cannot be read says so in caduceus_store_up and the
// scrape still succeeds.
func TestStoreCollectorStoreDown(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(newStoreCollector(&fakeStore{err: errors.New("database is locked")}, time.Minute, discard()))
	got := gather(t, reg, "caduceus_")
	if want := map[string]float64{"caduceus_store_up": 0}; !maps.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
