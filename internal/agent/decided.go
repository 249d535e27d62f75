package agent

import (
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/policy"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// ApprovalSource is what a Host may also tell about an approval it
// settled: the remembered rule or the person behind the choice Approve
// returned, or the request that expired. The decisions log (approval.decided) names them.
type ApprovalSource interface {
	// ApprovedBy fills DecidedBy and the rule or person fields of p for
	// the call; false when the host does not know.
	ApprovedBy(toolCallID string, p *event.ApprovalDecidedPayload) bool
}

// decided journals how the policy settled a call with an effect. Reads are
// never asked about, so they would only bury the decisions worth reading;
// nor are calls with invalid arguments, which run and fail without effect.
// A failed emit is not the run's end: the call's own events still follow.
func (l *Loop) decided(h Host, name, callID string, in tool.Intent, d policy.Decision, outcome, by string) {
	if (in.Effect == tool.EffectNone || in.Invalid) && d.Verdict == policy.Allow {
		return
	}
	mode := l.Mode
	if mode == "" {
		mode = policy.DefaultMode
	}
	p := event.ApprovalDecidedPayload{ToolCallID: callID, Tool: name, Action: l.Redactor.String(in.Action),
		Risk: d.Risk, Mode: string(mode), ProfileID: l.ProfileID, Outcome: outcome, DecidedBy: by}
	if by != event.DecidedByMode && by != event.DecidedByPolicy {
		if s, ok := h.(ApprovalSource); ok {
			s.ApprovedBy(callID, &p)
		}
	}
	if p.Pattern != "" {
		p.Pattern = l.Redactor.String(p.Pattern)
	}
	_ = h.Emit(event.ApprovalDecided, p)
}
