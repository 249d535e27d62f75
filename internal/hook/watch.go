package hook

// Following the journal for runs' ends, from a cursor kept in the store.
//
// The cursor is the journal id up to which ended runs were turned into
// deliveries. A watcher starts from it, so a run that ended while no
// process watched (one a `caduceus runner` finished while no web tier ran)
// is delivered once a watcher runs again. Queuing is idempotent (delivery
// ids derive from webhook and run, and InsertDelivery keeps the first), so
// a run read twice — by a process that died before it moved the cursor, or
// by several processes watching at once — is queued once.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/journal"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// Watch queues deliveries for every run that ends after the delivery
// cursor until ctx ends. The first watcher on a store starts at the
// journal's end: runs that ended before any server delivered are not told.
// A run whose deliveries cannot be queued (the store failing) stops the
// cursor there; the watch starts over from it after a pause.
func (d *Deliverer) Watch(ctx context.Context, hub *journal.Hub) error {
	for {
		err := d.watch(ctx, hub)
		if ctx.Err() != nil || errors.Is(err, journal.ErrHubClosed) {
			return nil
		}
		d.cfg.Log.Warn("webhooks: watching runs end", "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(d.cfg.Poll):
		}
	}
}

// Cursor is where the next watch starts: the stored delivery cursor, or,
// before any was kept, the journal's end, which it then keeps.
func (d *Deliverer) Cursor(ctx context.Context) (int64, error) {
	from, ok, err := d.cfg.Store.DeliveryCursor(ctx)
	if err != nil || ok {
		return from, err
	}
	if from, err = d.cfg.Store.LastEventID(ctx); err != nil {
		return 0, err
	}
	// Another process may keep a later cursor first: Advance keeps the
	// larger, and the watch reads it back.
	if err := d.advance(ctx, from); err != nil {
		return 0, err
	}
	from, _, err = d.cfg.Store.DeliveryCursor(ctx)
	return from, err
}

func (d *Deliverer) advance(ctx context.Context, to int64) error {
	return d.cfg.Store.Write(ctx, func(tx store.Tx) error { return tx.AdvanceDeliveryCursor(ctx, to) })
}

func (d *Deliverer) watch(ctx context.Context, hub *journal.Hub) error {
	from, err := d.Cursor(ctx)
	if err != nil {
		return fmt.Errorf("delivery cursor: %w", err)
	}
	// A cursor past the journal's end (a database put back from an older
	// copy) would make the hub replay the journal from its start, and post
	// long-ended runs to webhooks made since: start at the end instead.
	last, err := d.cfg.Store.LastEventID(ctx)
	if err != nil {
		return fmt.Errorf("delivery cursor: %w", err)
	}
	if from > last {
		d.cfg.Log.Warn("webhooks: the delivery cursor is past the journal's end; watching from the end", "cursor", from, "last", last)
		from = last
	}
	sub := hub.Subscribe(journal.Filter{Types: []event.Type{event.RunDone}}, from)
	defer sub.Close()
	for {
		evs, err := sub.Next(ctx)
		if err != nil {
			return err
		}
		var last int64
		for _, e := range evs {
			if e.Type != event.RunDone {
				continue
			}
			if err := d.runDone(ctx, e); err != nil {
				if last > 0 {
					_ = d.advance(ctx, last) // what was queued need not be read again
				}
				return fmt.Errorf("run %s: %w", e.RunID, err)
			}
			last = e.ID
		}
		if last > 0 {
			if err := d.advance(ctx, last); err != nil {
				return fmt.Errorf("delivery cursor: %w", err)
			}
		}
	}
}

func (d *Deliverer) runDone(ctx context.Context, e event.Event) error {
	url, err := d.cfg.Store.RunWebhook(ctx, e.RunID)
	if err != nil {
		return fmt.Errorf("the run's webhook_url: %w", err)
	}
	return d.RunEnded(ctx, e, url)
}
