package runner

import (
	"context"
	"io"
	"iter"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/journal"
	"github.com/caduceus-dev/caduceus/internal/models"
	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/store/sqlite"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// tokenProvider streams n one-word text chunks as fast as the loop takes
// them: what is measured is the server's own work per token.
type tokenProvider struct {
	n     int
	every time.Duration // pause between tokens; 0 streams flat out
}

func (tokenProvider) Name() string { return "bench" }
func (tokenProvider) Demo() bool   { return false }
func (p tokenProvider) Stream(ctx context.Context, _ provider.Request) iter.Seq2[provider.Chunk, error] {
	return func(yield func(provider.Chunk, error) bool) {
		for range p.n {
			if p.every > 0 {
				time.Sleep(p.every)
			}
			if !yield(provider.Chunk{Kind: provider.ChunkText, Text: "tok "}, nil) {
				return
			}
		}
		yield(provider.Chunk{Kind: provider.ChunkUsage, Usage: provider.Usage{InputTokens: 10, OutputTokens: int64(p.n)}}, nil)
		yield(provider.Chunk{Kind: provider.ChunkDone, StopReason: provider.StopEnd}, nil)
	}
}
func (tokenProvider) Models(context.Context) ([]string, error) { return []string{"bench"}, nil }

type fixedResolver struct{ p models.Client }

func (f fixedResolver) Resolve(context.Context, string) (models.Resolved, error) {
	return models.Resolved{Provider: f.p, ProviderName: "bench", Model: "bench", Info: models.ModelInfo{ContextWindow: 1 << 30}}, nil
}
func (f fixedResolver) Peek(ref string) (models.Resolved, error) {
	return f.Resolve(context.Background(), ref)
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	if os.Getenv("BENCH_USER_ONLY") != "" {
		return time.Duration(ru.Utime.Nano())
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkAgentLoopPerToken measures the server's cost of one streamed
// token end to end: agent loop → journal writer (SQLite, synchronous=FULL)
// → hub → a live subscriber that reassembles the text. b.N is the number
// of tokens of one run. cpu-µs/token is the process CPU time (user+sys,
// all goroutines) divided by tokens.
//
// "flat-out" streams as fast as the loop takes tokens, so deltas coalesce
// while the writer commits; "paced-2ms" streams 500 tokens/s, faster than
// real models, where most tokens are an event of their own.
func BenchmarkAgentLoopPerToken(b *testing.B) {
	for _, bc := range []struct {
		name  string
		every time.Duration
	}{{"flat-out", 0}, {"paced-2ms", 2 * time.Millisecond}} {
		b.Run(bc.name, func(b *testing.B) { benchTokens(b, bc.every) })
	}
	// The pacing itself (a timer wake-up per token) costs CPU that is not
	// the server's: measured alone, it is the baseline to subtract.
	b.Run("paced-2ms-baseline", func(b *testing.B) {
		cpu0 := cpuTime()
		p := tokenProvider{n: b.N, every: 2 * time.Millisecond}
		for range p.Stream(context.Background(), provider.Request{}) {
		}
		b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/token")
	})
}

func benchTokens(b *testing.B, every time.Duration) {
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	hub := journal.NewHub(st, 0, log)
	w := journal.NewWriter(st, hub.Poke, log)
	w.Start()
	defer w.Close()
	hctx, stopHub := context.WithCancel(ctx)
	defer stopHub()
	go func() { _ = hub.Run(hctx) }()

	svc := control.NewService(st, w, b.TempDir(), control.RetryPolicy{})
	sess, err := svc.CreateSession(ctx, control.NewSession{Title: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	r := New(Config{}, st, w, hub, tool.NewRegistry(), fixedResolver{tokenProvider{n: b.N, every: every}}, log)
	last, _ := st.LastEventID(ctx)
	sub := hub.Subscribe(journal.Filter{SessionID: sess.ID}, last)
	defer sub.Close()

	b.ResetTimer()
	cpu0, wall0 := cpuTime(), time.Now()
	rctx, stopRunner := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(rctx) }()
	if _, err := svc.Send(ctx, sess.ID, control.Message{Content: "go"}); err != nil {
		b.Fatal(err)
	}
	deltas, text := 0, 0
	for finished := false; !finished; {
		evs, err := sub.Next(ctx)
		if err != nil {
			b.Fatal(err)
		}
		for _, e := range evs {
			switch e.Type {
			case event.MessageDelta:
				deltas++
				text += len(e.Payload)
			case event.RunDone:
				finished = true
			}
		}
	}
	cpu, wall := cpuTime()-cpu0, time.Since(wall0)
	b.StopTimer()
	stopRunner()
	<-done
	if deltas == 0 || text == 0 {
		b.Fatal("no text reached the subscriber")
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/token")
	b.ReportMetric(float64(wall.Microseconds())/float64(b.N), "wall-µs/token")
	b.ReportMetric(float64(b.N)/float64(deltas), "tokens/event")
}
