// Package journaltest starts the real store and journal for tests: a fresh
// store of the kind the test asks for (storetest.SQLite, storetest.Postgres),
// the group-commit writer and the hub that fans events out. Tests of the
// packages above the journal (api, runner) build on it instead of wiring
// the parts each time.
package journaltest

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/journal"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

// Journal is a running store, writer and hub.
type Journal struct {
	Store  store.Store
	Writer *journal.Writer
	Hub    *journal.Hub

	stopHub func()
}

// Start opens a fresh store with open and starts its writer and hub; they
// stop when the test ends (the hub first, so open streams end before the
// store closes; open closes the store after).
func Start(t testing.TB, open storetest.Open) *Journal {
	t.Helper()
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	st, _ := open(t)
	hub := journal.NewHub(st, time.Second, log)
	w := journal.NewWriter(st, hub.Poke, log)
	w.Start()
	hctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = hub.Run(hctx) }()
	j := &Journal{Store: st, Writer: w, Hub: hub}
	j.stopHub = sync.OnceFunc(func() { cancel(); <-done })
	t.Cleanup(func() {
		j.stopHub()
		w.Close()
	})
	return j
}

// StopHub stops the hub now, which ends every open stream; a test server
// that waits for its handlers needs that before it closes. Stopping twice
// is harmless.
func (j *Journal) StopHub() { j.stopHub() }
