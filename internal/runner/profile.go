package runner

// Profiles (issue 16, h16-profiles): a run of a session with a profile
// uses the profile's instructions, model (and fallbacks), tools and
// approval mode, and its run.started records what it ran with.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/models"
	"github.com/caduceus-dev/caduceus/internal/policy"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/tool"
)

// profileOf is the live profile sess names. A session naming a deleted
// profile (or none) runs without one; a store error is logged and the run
// goes on without it too, as with a project's instructions.
func (r *Runner) profileOf(ctx context.Context, rd store.Reader, sess store.Session) (store.Profile, bool) {
	if sess.ProfileID == "" {
		return store.Profile{}, false
	}
	p, err := rd.GetProfile(ctx, sess.ProfileID)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			r.log.Warn("reading the session's profile", "profile", sess.ProfileID, "err", err)
		}
		return store.Profile{}, false
	}
	return p, p.Live()
}

// modelRefs are the model references a run tries, in order: the run's own
// (the message's or the session's) when it has one, else the profile's
// model and then its fallbacks. "" is the server's default.
func modelRefs(runModel string, p store.Profile, ok bool) []string {
	if runModel != "" || !ok {
		return []string{runModel}
	}
	return append([]string{p.Model}, p.Fallbacks...)
}

// availability is what a Resolver may also tell: whether a model
// reference can answer (models.Registry.Available).
type availability interface {
	Available(ctx context.Context, ref string, ask bool) error
}

// resolveModel resolves the first of refs that is available: each but the
// last must also be one its provider lists, when the picker knows (ask:
// may fetch a provider's list; without it nothing blocks). The error
// names every one that failed.
func (r *Runner) resolveModel(ctx context.Context, refs []string, ask bool) (models.Resolved, error) {
	var errs []error
	for i, ref := range refs {
		if av, ok := r.pick.(availability); ok && i < len(refs)-1 {
			if err := av.Available(ctx, ref, ask); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		var m models.Resolved
		var err error
		if ask {
			m, err = r.pick.Resolve(ctx, ref)
		} else {
			m, err = r.pick.Peek(ref)
		}
		if err == nil {
			return m, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 1 {
		return models.Resolved{}, errs[0]
	}
	return models.Resolved{}, fmt.Errorf("no model of the profile is available: %w", errors.Join(errs...))
}

// profilePrompt is the system prompt section of the profile: after the
// base prompt (and memory), before the project's instructions.
func profilePrompt(p store.Profile, ok bool) string {
	if !ok || p.Instructions == "" {
		return ""
	}
	return "\n\n## Agent profile: " + p.Name + "\n\n" + p.Instructions
}

// approvalMode is the mode of a run: the profile's, else the server's.
func (r *Runner) approvalMode(p store.Profile, ok bool) policy.Mode {
	if ok && p.ApprovalMode != "" {
		return policy.Mode(p.ApprovalMode)
	}
	return policy.Mode(r.defaultApprovalMode())
}

// profileTools narrows tools to the profile's enabled ones (none listed:
// all). update_goal is the goal machinery's, not a capability, and stays
// as toolsFor decided. An MCP tool is enabled by its own name
// (mcp__<server>__<tool>) or by its server's (mcp__<server>: all its
// tools).
func profileTools(tools *tool.Registry, p store.Profile, ok bool) *tool.Registry {
	if tools == nil || !ok || len(p.Tools) == 0 {
		return tools
	}
	var drop []string
	for _, n := range tools.Names() {
		if n != tool.NameUpdateGoal && !slices.Contains(p.Tools, n) && !slices.Contains(p.Tools, mcpServerOf(n)) {
			drop = append(drop, n)
		}
	}
	return tools.Without(drop...)
}

// mcpServerOf is "mcp__<server>" for an MCP tool's name, else "".
func mcpServerOf(name string) string {
	rest, ok := strings.CutPrefix(name, "mcp__")
	if !ok {
		return ""
	}
	server, _, ok := strings.Cut(rest, "__")
	if !ok {
		return ""
	}
	return "mcp__" + server
}

// withMCP adds the MCP servers' tools to a run's (before the profile
// narrows them). A server that cannot start is logged and left out: its
// state and last error show in Settings.
func (r *Runner) withMCP(ctx context.Context, tools *tool.Registry) *tool.Registry {
	if r.cfg.MCP == nil || tools == nil {
		return tools
	}
	extra, err := r.cfg.MCP.Tools(ctx)
	if err != nil {
		r.log.Warn("some MCP servers offer no tools to this run", "err", err)
	}
	if len(extra) == 0 {
		return tools
	}
	return tools.With(extra...)
}

// profileSkills limits the skills tool to the skills the profile enables
// (h16-skills; none listed: all). A store error is logged and takes the
// skills tool out of the run rather than offer skills the operator left out.
func (r *Runner) profileSkills(ctx context.Context, tools *tool.Registry, p store.Profile, ok bool) *tool.Registry {
	if tools == nil || !ok {
		return tools
	}
	names, err := r.st.ProfileSkills(ctx, p.ID)
	if err != nil {
		r.log.Warn("reading the profile's skills; the run has no skills tool", "profile", p.ID, "err", err)
		return tools.Without(tool.NameSkills)
	}
	return tools.OnlySkills(names)
}

// describe names the provider and model that will answer a run and the
// session state it runs in (seed 004): the agent profile and a snapshot
// of it, the approval mode and the reasoning level. It runs inside the
// claim's transaction, so it reads through tx and never asks a server.
func (r *Runner) describe(ctx context.Context, tx store.Reader, ru store.Run) event.RunStartedPayload {
	var p store.Profile
	var ok bool
	if sess, err := tx.GetSession(ctx, ru.SessionID); err == nil {
		p, ok = r.profileOf(ctx, tx, sess)
	}
	info := event.RunStartedPayload{Model: ru.Model, ApprovalMode: string(r.approvalMode(p, ok))}
	if ok {
		sum := sha256.Sum256([]byte(p.Instructions))
		info.Profile = &event.ProfileSnapshot{ID: p.ID, Name: p.Name, Color: p.Color, Instructions: p.Instructions,
			InstructionsSHA256: hex.EncodeToString(sum[:]), Model: p.Model, Fallbacks: p.Fallbacks, Tools: p.Tools,
			ApprovalMode: p.ApprovalMode}
	}
	res, err := r.resolveModel(ctx, modelRefs(ru.Model, p, ok), false)
	if err != nil {
		return info
	}
	info.Provider, info.Model, info.Demo, info.ContextWindow = res.ProviderName, res.Model, res.Demo(), res.Info.ContextWindow
	info.ReasoningLevel, info.ThinkingBudget = res.Info.ReasoningEffort, res.Info.ThinkingBudget
	return info
}

// warmModelLists fetches the providers' model lists in the background, so
// that run.started, written inside the claim's transaction where nothing
// may block, knows which of a profile's models a provider serves.
func (r *Runner) warmModelLists(ctx context.Context) {
	l, ok := r.pick.(interface {
		List(ctx context.Context) []models.ProviderView
	})
	if !ok {
		return
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		l.List(ctx)
	}()
}
