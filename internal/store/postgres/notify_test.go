package postgres_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/store/postgres"
)

func newNotifier(t *testing.T, url string) *postgres.Notifier {
	t.Helper()
	n, err := postgres.NewNotifier(context.Background(), url, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

func fires(c <-chan struct{}, within time.Duration) bool {
	select {
	case <-c:
		return true
	case <-time.After(within):
		return false
	}
}

// A commit's NOTIFY wakes the other processes, not the sender; a listener
// whose connection is cut reconnects, wakes once for what it may have
// missed, and goes on receiving.
func TestNotifier(t *testing.T) {
	url := pg.Database(t)
	a, b := newNotifier(t, url), newNotifier(t, url)
	a.Notify()
	if !fires(b.C(), 10*time.Second) {
		t.Fatal("b was not woken by a's notify")
	}
	if fires(a.C(), 200*time.Millisecond) {
		t.Fatal("a was woken by its own notify")
	}

	// Cut every listener's connection.
	if _, err := rawConn(t, url).Exec(context.Background(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = 'caduceus-wake'`); err != nil {
		t.Fatal(err)
	}
	if !fires(b.C(), 10*time.Second) {
		t.Fatal("b did not wake after reconnecting")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		a.Notify() // a's sending connection was cut too: it reconnects
		if fires(b.C(), 200*time.Millisecond) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("b is not woken after the reconnect")
		}
	}
}
