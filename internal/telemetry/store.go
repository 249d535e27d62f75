package telemetry

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// StoreReader is what the scrape-time gauges read: three small queries
// every store answers (SQLite and PostgreSQL alike).
type StoreReader interface {
	RunsWithStatus(ctx context.Context, statuses ...run.Status) ([]store.Run, error)
	ListRunners(ctx context.Context) ([]store.RunnerInfo, error)
	ListRequests(ctx context.Context, q store.RequestQuery) ([]store.Request, error)
}

// scrapeTimeout bounds the store reads of one scrape: a scrape that
// cannot read the store reports caduceus_store_up 0 rather than hang.
const scrapeTimeout = 5 * time.Second

// storeCollector computes, at every scrape, the gauges that describe the
// shared state rather than this process: every web node of a deployment
// reports the same values, so dashboards take max() across nodes, not
// sum(). Terminal runs are not counted: there are ever more of them and
// only unfinished runs are cheap to read; rates of finished runs come from
// caduceus_runner_executions_total.
type storeCollector struct {
	st         StoreReader
	liveWithin time.Duration
	log        *slog.Logger

	up, runs, queued, oldest, runners, requests *prometheus.Desc
}

func newStoreCollector(st StoreReader, liveWithin time.Duration, log *slog.Logger) *storeCollector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", name), help, labels, nil)
	}
	return &storeCollector{st: st, liveWithin: liveWithin, log: log,
		up:       d("store_up", "1 when this scrape could read the store, else 0 (and the other store gauges are missing)."),
		runs:     d("runs", "Unfinished runs by status.", "status"),
		queued:   d("queue_depth", "Runs waiting for a runner: queued, recovering whose retry time has come, and answered runs parked without a runner."),
		oldest:   d("queue_oldest_wait_seconds", "Age of the oldest queued run (0 when none is queued)."),
		runners:  d("runners", "Runners whose heartbeat is within the lease window."),
		requests: d("requests_pending", "Requests waiting for a person, by kind (approval, clarify).", "kind"),
	}
}

// Unfinished statuses: the ones whose runs are few and cheap to read.
func unfinished() []run.Status {
	var out []run.Status
	for _, s := range run.All() {
		if !s.Terminal() {
			out = append(out, s)
		}
	}
	return out
}

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.up, c.runs, c.queued, c.oldest, c.runners, c.requests} {
		ch <- d
	}
}

func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	s, err := c.read(ctx, time.Now())
	if err != nil {
		c.log.Warn("metrics: reading the store", "err", err)
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, 1)
	for _, st := range unfinished() {
		ch <- prometheus.MustNewConstMetric(c.runs, prometheus.GaugeValue, float64(s.byStatus[st]), string(st))
	}
	ch <- prometheus.MustNewConstMetric(c.queued, prometheus.GaugeValue, float64(s.queueDepth))
	ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, s.oldestWait.Seconds())
	ch <- prometheus.MustNewConstMetric(c.runners, prometheus.GaugeValue, float64(s.liveRunners))
	for _, k := range []string{store.KindApproval, store.KindClarify} {
		ch <- prometheus.MustNewConstMetric(c.requests, prometheus.GaugeValue, float64(s.pending[k]), k)
	}
}

// snapshot is what one scrape read.
type snapshot struct {
	byStatus    map[run.Status]int
	queueDepth  int
	oldestWait  time.Duration
	liveRunners int
	pending     map[string]int // by request kind
}

func (c *storeCollector) read(ctx context.Context, now time.Time) (snapshot, error) {
	s := snapshot{byStatus: map[run.Status]int{}, pending: map[string]int{}}
	reqs, err := c.st.ListRequests(ctx, store.RequestQuery{Status: store.RequestPending})
	if err != nil {
		return s, err
	}
	waiting := map[string]bool{} // runs with a request still to answer
	for _, q := range reqs {
		if q.ExpiresAt.IsZero() || now.Before(q.ExpiresAt) {
			s.pending[q.Kind]++
			waiting[q.RunID] = true
		}
	}
	runs, err := c.st.RunsWithStatus(ctx, unfinished()...)
	if err != nil {
		return s, err
	}
	for _, r := range runs {
		s.byStatus[r.Status]++
		switch r.Status {
		case run.Queued:
			s.queueDepth++
			s.oldestWait = max(s.oldestWait, now.Sub(r.CreatedAt))
		case run.Recovering:
			if !r.RetryAt.After(now) {
				s.queueDepth++
			}
		case run.AwaitingApproval, run.AwaitingClarify:
			// Answered while parked: it waits for a runner like a queued run.
			if r.RunnerID == "" && !waiting[r.ID] {
				s.queueDepth++
			}
		}
	}
	runners, err := c.st.ListRunners(ctx)
	if err != nil {
		return s, err
	}
	for _, r := range runners {
		if now.Sub(r.HeartbeatAt) < c.liveWithin {
			s.liveRunners++
		}
	}
	return s, nil
}
