package runner

import (
	"context"
	"encoding/json"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// The decisions log (h16-policy) names the rule or the person behind each
// approval; Approve knows which, the agent loop journals it.

// approvedByRule remembers that rule approved the call.
func (h *host) approvedByRule(toolCallID string, rule store.Rule) {
	h.noteDecision(toolCallID, event.ApprovalDecidedPayload{DecidedBy: event.DecidedByRule, RuleID: rule.ID, Pattern: rule.Pattern})
}

// answeredBy remembers who answered request q, from its approval.resolved
// event (the request row keeps only the choice).
func (h *host) answeredBy(ctx context.Context, q store.Request) error {
	evs, err := h.r.st.Events(ctx, store.EventQuery{RunID: q.RunID, Types: []event.Type{event.ApprovalResolved}})
	if err != nil {
		return err
	}
	d := event.ApprovalDecidedPayload{DecidedBy: event.DecidedByPerson, RequestID: q.ID, Choice: q.Response}
	for _, e := range evs {
		var p event.ResolvedPayload
		if json.Unmarshal(e.Payload, &p) == nil && p.RequestID == q.ID {
			d.By = p.By
		}
	}
	h.noteDecision(q.ToolCallID, d)
	return nil
}

func (h *host) noteDecision(toolCallID string, d event.ApprovalDecidedPayload) {
	if h.decisions == nil {
		h.decisions = map[string]event.ApprovalDecidedPayload{}
	}
	h.decisions[toolCallID] = d
}

// ApprovedBy implements agent.ApprovalSource.
func (h *host) ApprovedBy(toolCallID string, p *event.ApprovalDecidedPayload) bool {
	d, ok := h.decisions[toolCallID]
	if !ok {
		return false
	}
	p.DecidedBy, p.RuleID, p.Pattern, p.RequestID, p.Choice, p.By = d.DecidedBy, d.RuleID, d.Pattern, d.RequestID, d.Choice, d.By
	return true
}
