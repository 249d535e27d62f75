package runner

import (
	"context"

	"github.com/caduceus-dev/caduceus/internal/agent"
	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// steers returns the loop's source of steers for a run: the stored steer
// controls that no message.user of the run delivered yet. The journal says
// what earlier claims delivered, so a resumed run delivers each steer once.
func (r *Runner) steers(ctx context.Context, runID string) (func(context.Context) ([]agent.Steer, error), error) {
	evs, err := r.st.Events(ctx, store.EventQuery{RunID: runID, Types: []event.Type{event.MessageUser}})
	if err != nil {
		return nil, err
	}
	delivered := control.DeliveredSteers(evs)
	return func(ctx context.Context) ([]agent.Steer, error) {
		var cs []store.Control
		if err := r.w.Do(ctx, func(tx store.Tx) error {
			var err error
			cs, err = tx.ListControls(ctx, runID)
			return err
		}); err != nil {
			return nil, err
		}
		var out []agent.Steer
		for _, s := range control.SteersOf(cs) {
			if delivered[s.ControlID] {
				continue
			}
			delivered[s.ControlID] = true
			out = append(out, agent.Steer{ControlID: s.ControlID, MessageID: s.MessageID, Content: s.Content, By: s.By})
		}
		return out, nil
	}, nil
}
