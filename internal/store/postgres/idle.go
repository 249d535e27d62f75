package postgres

import (
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// IdleInTransaction bounds how long a session may sit idle inside a
// transaction (the server's idle_in_transaction_session_timeout) before the
// server ends it. Every write transaction holds the append lock, so a
// process frozen inside one (stopped, paused, cut off from the network with
// its connection still open) would otherwise stop every write of every
// process until TCP gives up on it, which takes hours. No transaction of
// this store waits on anything but its own statements, so a few seconds
// idle means the process is stuck. A URL may set its own
// (?idle_in_transaction_session_timeout=<ms>).
const IdleInTransaction = 5 * time.Second

const idleParam = "idle_in_transaction_session_timeout"

// parseConfig is pgxpool.ParseConfig with the store's session settings,
// sent in the startup message: the IdleInTransaction bound unless the URL
// sets one.
func parseConfig(url string) (*pgxpool.Config, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	if _, set := cfg.ConnConfig.RuntimeParams[idleParam]; !set {
		cfg.ConnConfig.RuntimeParams[idleParam] = fmt.Sprint(IdleInTransaction.Milliseconds())
	}
	return cfg, nil
}
