package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// channel is the LISTEN/NOTIFY channel of journal commits.
const channel = "caduceus_journal"

// Notifier carries the wake-ups internal/wake carries on one host between
// processes on any hosts sharing the database: after a journal commit
// Notify sends a NOTIFY, and every other process's Notifier signals C, on
// which the process pokes its Hub. Like the wake bus it carries no data:
// the Hub reads what was committed, so a lost or duplicated wake-up costs
// latency, never an event, and the Hub's poll covers the rest (a
// notification sent while a listener reconnects, say).
type Notifier struct {
	cfg  *pgx.ConnConfig
	self string // our payload: our own notifications are not wake-ups
	log  *slog.Logger

	kick chan struct{} // capacity 1: commits while a send is under way merge
	c    chan struct{} // capacity 1, coalesced

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// NewNotifier connects a listener to the database at url and starts the
// Notifier; Close stops it. Only the first connection must succeed: later
// losses are reconnected in the background.
func NewNotifier(ctx context.Context, url string, log *slog.Logger) (*Notifier, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w: %v", ErrBadURL, err)
	}
	cfg.RuntimeParams["application_name"] = "caduceus-wake"
	var b [8]byte
	_, _ = rand.Read(b[:])
	n := &Notifier{cfg: cfg, self: hex.EncodeToString(b[:]), log: log,
		kick: make(chan struct{}, 1), c: make(chan struct{}, 1)}
	conn, err := n.listen(ctx)
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	n.cancel = cancel
	n.wg.Add(2)
	go n.receive(runCtx, conn)
	go n.send(runCtx)
	return n, nil
}

// Notify tells the other processes to look at the journal. It never
// blocks: it only signals the sending goroutine.
func (n *Notifier) Notify() {
	select {
	case n.kick <- struct{}{}:
	default:
	}
}

// C receives a value when another process committed to the journal.
func (n *Notifier) C() <-chan struct{} { return n.c }

// Close stops the Notifier and closes its connections.
func (n *Notifier) Close() error {
	n.cancel()
	n.wg.Wait()
	return nil
}

func (n *Notifier) signal() {
	select {
	case n.c <- struct{}{}:
	default:
	}
}

func (n *Notifier) connect(ctx context.Context) (*pgx.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, n.cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres notifier: connect: %w", err)
	}
	return conn, nil
}

func (n *Notifier) listen(ctx context.Context) (*pgx.Conn, error) {
	conn, err := n.connect(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+channel); err != nil {
		conn.Close(context.Background())
		return nil, fmt.Errorf("postgres notifier: listen: %w", err)
	}
	return conn, nil
}

// receive waits for notifications, reconnecting when the connection
// breaks; after a reconnect it signals once, for what it may have missed.
func (n *Notifier) receive(ctx context.Context, conn *pgx.Conn) {
	defer n.wg.Done()
	backoff := 100 * time.Millisecond
	for {
		for conn == nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			var err error
			if conn, err = n.listen(ctx); err != nil {
				if ctx.Err() == nil {
					n.log.Warn("postgres wake-ups: reconnecting", "err", err, "retry_in", 2*backoff)
				}
				backoff = min(2*backoff, 5*time.Second)
				continue
			}
			backoff = 100 * time.Millisecond
			n.signal()
		}
		msg, err := conn.WaitForNotification(ctx)
		if err != nil {
			conn.Close(context.Background())
			conn = nil
			if ctx.Err() != nil {
				return
			}
			n.log.Warn("postgres wake-ups: connection lost", "err", err)
			continue
		}
		if msg.Payload != n.self {
			n.signal()
		}
	}
}

// send sends one NOTIFY per round of kicks on a connection of its own, so
// a commit never waits for it and the store's pool is not used.
func (n *Notifier) send(ctx context.Context) {
	defer n.wg.Done()
	var conn *pgx.Conn
	defer func() {
		if conn != nil {
			conn.Close(context.Background())
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-n.kick:
		}
		if conn == nil {
			var err error
			if conn, err = n.connect(ctx); err != nil {
				if ctx.Err() == nil {
					n.log.Warn("postgres wake-ups: cannot send", "err", err)
				}
				continue // the next commit tries again; peers poll meanwhile
			}
		}
		if _, err := conn.Exec(ctx, "SELECT pg_notify($1, $2)", channel, n.self); err != nil {
			conn.Close(context.Background())
			conn = nil
			if ctx.Err() == nil {
				n.log.Warn("postgres wake-ups: send failed", "err", err)
			}
		}
	}
}
