package api

// Subagents (issue 18, h18-delegate): how the API shows a child session's
// link to the delegate call that made it.

import (
	"context"

	"github.com/caduceus-dev/caduceus/internal/store"
)

// delegationView is the delegate call that made a session.
type delegationView struct {
	SessionID  string `json:"session_id"`
	RunID      string `json:"run_id"`
	ToolCallID string `json:"tool_call_id"`
}

func newDelegationView(s store.Session) *delegationView {
	if s.DelegatedSessionID == "" {
		return nil
	}
	return &delegationView{SessionID: s.DelegatedSessionID, RunID: s.DelegatedRunID, ToolCallID: s.DelegatedCallID}
}

// parentView names the session a child session's request is for.
type parentView struct {
	SessionID string `json:"session_id"`
	Title     string `json:"title"`
}

// nameParents fills Parent of the requests of child sessions, reading each
// session once. A session or parent that cannot be read (deleted since)
// leaves the request without a parent: the list is still worth showing.
func (a *API) nameParents(ctx context.Context, reqs []requestView) {
	parents := map[string]*parentView{}
	for i := range reqs {
		sid := reqs[i].SessionID
		p, seen := parents[sid]
		if !seen {
			p = a.parentOf(ctx, sid)
			parents[sid] = p
		}
		reqs[i].Parent = p
	}
}

func (a *API) parentOf(ctx context.Context, sessionID string) *parentView {
	s, err := a.st.GetSession(ctx, sessionID)
	if err != nil || s.DelegatedSessionID == "" {
		return nil
	}
	p := &parentView{SessionID: s.DelegatedSessionID}
	if ps, err := a.st.GetSession(ctx, s.DelegatedSessionID); err == nil {
		p.Title = ps.Title
	}
	return p
}
