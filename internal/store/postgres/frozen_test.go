package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/postgres"
)

// A process frozen inside a write transaction (SIGSTOP, a paused VM, a host
// cut off with its TCP connection still open) holds the append lock, and
// with it every write of every process: with no bound, the whole cluster
// stops until the server notices the connection is dead (TCP keepalive:
// hours). The server ends a session idle in a transaction for longer than
// postgres.IdleInTransaction, so the other processes write again, and the
// frozen transaction, when its process wakes, fails instead of committing.
// Found by BenchmarkClaimThroughput (e2e/cluster), which SIGSTOPs runners:
// one stopped inside a transaction hung every POST of the web node.
func TestFrozenWriterLosesTheAppendLock(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pg.Database(t)
	frozen, other := openURL(t, url), openURL(t, url)
	inside, wake := make(chan struct{}), make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		errc <- frozen.Write(ctx, func(tx store.Tx) error {
			if err := tx.UpsertRunner(ctx, store.RunnerInfo{ID: "rnr_frozen", Host: "h", PID: 1,
				StartedAt: time.Now(), HeartbeatAt: time.Now()}); err != nil {
				return err
			}
			// A read makes sure the transaction, its lock and the write
			// have reached the server (statements that return nothing may
			// wait to travel with the next one).
			if _, err := tx.ListRunners(ctx); err != nil {
				return err
			}
			close(inside)
			<-wake // the process is stopped here, holding the append lock
			return nil
		})
	}()
	<-inside
	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, 3*postgres.IdleInTransaction)
	defer cancel()
	if err := other.Write(wctx, func(tx store.Tx) error {
		return tx.UpsertRunner(wctx, store.RunnerInfo{ID: "rnr_other", Host: "h", PID: 2, StartedAt: time.Now(), HeartbeatAt: time.Now()})
	}); err != nil {
		close(wake)
		<-errc
		t.Fatalf("a write behind a frozen writer: %v after %s", err, time.Since(start).Round(time.Millisecond))
	}
	t.Logf("the write behind the frozen writer committed after %s", time.Since(start).Round(time.Millisecond))
	close(wake)
	if err := <-errc; err == nil {
		t.Fatal("the frozen writer's transaction committed after the server ended its session")
	}
	runners, err := other.ListRunners(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(runners) != 1 || runners[0].ID != "rnr_other" {
		t.Fatalf("runners %+v, want only rnr_other: the frozen transaction's write must not be visible", runners)
	}
}
