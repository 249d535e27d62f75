package agent

import (
	"context"
	"fmt"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/transcript"
)

// deliverSteers journals each waiting steer as a message of the person,
// where it lands (between the last tool results and the next model call),
// and adds it to the history the next call sends.
func (l *Loop) deliverSteers(ctx context.Context, h Host, msgs []provider.Message) ([]provider.Message, error) {
	if l.Steers == nil {
		return msgs, nil
	}
	steers, err := l.Steers(ctx)
	if err != nil {
		return msgs, fmt.Errorf("reading steers: %w", err)
	}
	for _, s := range steers {
		if err := h.Emit(event.MessageUser, event.MessageUserPayload{MessageID: s.MessageID, Content: s.Content,
			By: s.By, Steer: true, ControlID: s.ControlID}); err != nil {
			return msgs, err
		}
		msgs = append(msgs, transcript.UserMessage(s.Content, nil))
	}
	if len(steers) > 0 {
		// Durable before the model sees it: a resumed run must not deliver
		// it again, and finishing must not queue it.
		if err := h.Flush(ctx); err != nil {
			return msgs, err
		}
	}
	return msgs, nil
}
