package runner

import (
	"context"
	"encoding/json"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// readDenial finds the note of a denied approval request in the journal
// (the request row keeps only the choice) and keeps the result text the
// model gets for the call.
func (h *host) readDenial(ctx context.Context, q store.Request) error {
	evs, err := h.r.st.Events(ctx, store.EventQuery{RunID: q.RunID, Types: []event.Type{event.ApprovalResolved}})
	if err != nil {
		return err
	}
	for _, e := range evs {
		var p event.ResolvedPayload
		if json.Unmarshal(e.Payload, &p) != nil || p.RequestID != q.ID || p.Note == "" {
			continue
		}
		if h.denials == nil {
			h.denials = map[string]string{}
		}
		h.denials[q.ToolCallID] = h.r.cfg.Redactor.String(control.DenialResult(p.By, p.Note))
	}
	return nil
}

// DenialNote implements agent.DenialNoter.
func (h *host) DenialNote(toolCallID string) (string, bool) {
	s, ok := h.denials[toolCallID]
	return s, ok
}
