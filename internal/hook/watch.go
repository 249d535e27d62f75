package hook

// Following the journal for runs' ends.

import (
	"context"
	"errors"
	"fmt"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/journal"
)

// Watch queues deliveries for every run that ends from now until ctx
// ends. Runs that ended while no process watched are not told: the
// journal is the record of them.
func (d *Deliverer) Watch(ctx context.Context, hub *journal.Hub) error {
	last, err := d.cfg.Store.LastEventID(ctx)
	if err != nil {
		return fmt.Errorf("webhooks: %w", err)
	}
	sub := hub.Subscribe(journal.Filter{Types: []event.Type{event.RunDone}}, last)
	defer sub.Close()
	for {
		evs, err := sub.Next(ctx)
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, journal.ErrHubClosed) {
				return nil
			}
			return fmt.Errorf("webhooks: %w", err)
		}
		for _, e := range evs {
			if e.Type != event.RunDone {
				continue
			}
			url, err := d.cfg.Store.RunWebhook(ctx, e.RunID)
			if err != nil {
				d.cfg.Log.Warn("webhooks: the run's webhook_url", "run", e.RunID, "err", err)
			}
			if err := d.RunEnded(ctx, e, url); err != nil {
				d.cfg.Log.Warn("webhooks: queue deliveries", "run", e.RunID, "err", err)
			}
		}
	}
}
