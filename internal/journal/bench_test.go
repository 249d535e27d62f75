package journal

// Benchmarks of the journal against a plain-INSERT baseline. See
// docs/BENCHMARKS.md for how to run them and the numbers of one run.

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// benchPayload is a ~200-byte JSON payload, the size of a typical streamed
// delta event.
var benchPayload = func() json.RawMessage {
	p := `{"id":"msg_01J8Z3","turn_id":"turn_01J8Z3","delta":"`
	p += strings.Repeat("x", 200-len(p)-2) + `"}`
	return json.RawMessage(p)
}()

func benchDraft(sessionID, runID string) event.Draft {
	return event.Draft{SessionID: sessionID, RunID: runID, Type: event.MessageDelta, Payload: benchPayload}
}

func reportRate(b *testing.B, n int, unit string) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(n)/s, unit)
	}
}

// BenchmarkBaselinePlainInsert is the floor the journal is compared with: one
// INSERT of a ~200-byte row into a bare table per transaction, same file
// settings as the store (WAL, synchronous FULL, BEGIN IMMEDIATE, one writer
// connection), through database/sql and the same driver.
func BenchmarkBaselinePlainInsert(b *testing.B) {
	q := url.Values{}
	for _, p := range []string{"journal_mode(WAL)", "synchronous(FULL)", "busy_timeout(10000)"} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+filepath.Join(b.TempDir(), "bare.db")+"?"+q.Encode())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `CREATE TABLE bare (id INTEGER PRIMARY KEY, body TEXT NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	body := string(benchPayload)
	b.ResetTimer()
	for range b.N {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO bare (body) VALUES (?)`, body); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportRate(b, b.N, "events/s")
}

// BenchmarkJournalAppendSerial appends one event per Writer.Do from one
// goroutine: every append waits for its own commit (no batching possible).
func BenchmarkJournalAppendSerial(b *testing.B) {
	e := newEnv(b, envOpts{noHub: true})
	e.seed(b, "s1", "r1")
	ctx := context.Background()
	op := appendOp(benchDraft("s1", "r1"))
	b.ResetTimer()
	for range b.N {
		if err := e.w.Do(ctx, op); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportRate(b, b.N, "events/s")
}

// BenchmarkJournalAppendParallel appends one event per Writer.Do from many
// goroutines (16 per CPU), each on its own run: group commit at work.
func BenchmarkJournalAppendParallel(b *testing.B) {
	cs := &countingStore{}
	e := newEnv(b, envOpts{noHub: true, wrap: func(s store.Store) store.Store { cs.Store = s; return cs }})
	const maxRuns = 256
	runs := make([]string, maxRuns)
	for i := range runs {
		runs[i] = fmt.Sprintf("r%d", i)
	}
	e.seed(b, "s1", runs...)
	ctx := context.Background()
	var next atomic.Int64
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		op := appendOp(benchDraft("s1", runs[next.Add(1)%maxRuns]))
		for pb.Next() {
			if err := e.w.Do(ctx, op); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	reportRate(b, b.N, "events/s")
	if sizes := cs.batchSizes(); len(sizes) > 0 {
		total := 0
		for _, n := range sizes {
			total += n
		}
		b.ReportMetric(float64(total)/float64(len(sizes)), "ops/commit")
	}
}

const replayEvents = 100_000

var replayFixture struct {
	once sync.Once
	dir  string // removed by TestMain
	path string
	err  error
}

func TestMain(m *testing.M) {
	code := pg.Main(m)
	if replayFixture.dir != "" {
		os.RemoveAll(replayFixture.dir)
	}
	os.Exit(code)
}

// BenchmarkReplay100k drains a 100k-event run from the store through
// Sub.Next (pages of replayPage events). The database is built once, outside
// the timer. One iteration is one full replay.
func BenchmarkReplay100k(b *testing.B) {
	replayFixture.once.Do(func() {
		dir, err := os.MkdirTemp("", "caduceus-replay-bench-")
		if err != nil {
			replayFixture.err = err
			return
		}
		replayFixture.dir, replayFixture.path = dir, filepath.Join(dir, "replay.db")
		db := openDB(b, replayFixture.path) // closed by this (first) b's cleanup
		e := &env{db: db}
		e.seed(b, "s1", "r1")
		for n := 0; n < replayEvents; n += 1000 {
			appendDirect(b, db, repeat(1000, benchDraft("s1", "r1"))...)
		}
	})
	if replayFixture.err != nil {
		b.Fatal(replayFixture.err)
	}
	db := openDB(b, replayFixture.path)
	hub := NewHub(db, 0, discard) // not running: replay reads the store only
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		sub := hub.Subscribe(Filter{RunID: "r1"}, 0)
		got := 0
		for got < replayEvents {
			evs, err := sub.Next(ctx)
			if err != nil {
				b.Fatal(err)
			}
			got += len(evs)
		}
		sub.Close()
	}
	b.StopTimer()
	reportRate(b, b.N*replayEvents, "events/s")
}

// BenchmarkHubFanout delivers appended events to N live subscribers of one
// session. Events are committed 100 per transaction through the Writer (as
// group commit does for streamed deltas); the time is until every
// subscriber has received every event.
func BenchmarkHubFanout(b *testing.B) {
	for _, n := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("subs=%d", n), func(b *testing.B) {
			e := newEnv(b, envOpts{})
			e.seed(b, "s1", "r1")
			ctx := context.Background()
			subs := make([]*Sub, n)
			for i := range subs {
				subs[i] = e.hub.Subscribe(Filter{SessionID: "s1"}, 0)
			}
			var wg sync.WaitGroup
			b.ResetTimer()
			for _, s := range subs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for got := 0; got < b.N; {
						evs, err := s.Next(ctx)
						if err != nil {
							b.Error(err)
							return
						}
						got += len(evs)
					}
				}()
			}
			for i := 0; i < b.N; i += 100 {
				if err := e.w.Do(ctx, appendOp(repeat(min(100, b.N-i), benchDraft("s1", "r1"))...)); err != nil {
					b.Fatal(err)
				}
			}
			wg.Wait()
			b.StopTimer()
			reportRate(b, b.N, "events/s")
			reportRate(b, b.N*n, "deliveries/s")
		})
	}
}

// BenchmarkReplayLarge drains a 20 MiB run of 32 KiB events (640 tool
// outputs) through Sub.Next with replay pages bounded by bytes (bytes=N),
// against the same replay paged by rows only (rows-only: up to replayPage
// events, here the whole run, in one page). MB/s is payload read; page-KB
// is the largest page Next returned, what a subscriber holds at once.
func BenchmarkReplayLarge(b *testing.B) {
	const size, n = 32 << 10, 640
	e := newEnv(b, envOpts{noHub: true})
	e.seed(b, "s1", "r1")
	payload := json.RawMessage(`{"output":"` + strings.Repeat("x", size-13) + `"}`)
	for range n / 64 {
		appendDirect(b, e.db, repeat(64, event.Draft{SessionID: "s1", RunID: "r1", Type: event.ToolDone, Payload: payload})...)
	}
	for _, tc := range []struct {
		name   string
		budget int
	}{{"bytes=64K", 64 << 10}, {"bytes=256K", 256 << 10}, {"bytes=1M", 1 << 20}, {"rows-only", 1 << 62}} {
		b.Run(tc.name, func(b *testing.B) {
			hub := NewHub(e.db, 0, discard) // not running: replay reads the store only
			hub.replayBytes = tc.budget
			ctx := context.Background()
			largest := 0
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				sub := hub.Subscribe(Filter{RunID: "r1"}, 0)
				for got := 0; got < n; {
					evs, err := sub.Next(ctx)
					if err != nil {
						b.Fatal(err)
					}
					got += len(evs)
					largest = max(largest, len(evs)*size)
				}
				sub.Close()
			}
			b.StopTimer()
			reportRate(b, b.N*n*size/(1<<20), "MB/s")
			b.ReportMetric(float64(largest)/1024, "page-KB")
		})
	}
}
