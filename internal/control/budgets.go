package control

// Budgets (issue 16, h16-budgets): setting the limits of a scope.

import (
	"context"
	"errors"
	"time"

	"github.com/caduceus-dev/caduceus/internal/budget"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// SetBudget sets the limits of a scope's target, or removes them when l
// sets none. A run, session or profile that does not exist is not_found,
// so a typo is not kept silently; l must be valid (the caller validated).
func (s *Service) SetBudget(ctx context.Context, scope, target string, l budget.Limits) (store.Budget, error) {
	b := store.Budget{Scope: scope, Target: target, Limits: l, UpdatedAt: time.Now().UTC()}
	err := s.w.Do(ctx, func(tx store.Tx) error {
		var err error
		switch scope {
		case budget.ScopeRun:
			_, err = tx.GetRun(ctx, target)
		case budget.ScopeSession:
			_, err = tx.GetSession(ctx, target)
		case budget.ScopeProfile:
			var p store.Profile
			if p, err = tx.GetProfile(ctx, target); err == nil && !p.Live() {
				err = store.ErrNotFound
			}
		}
		if errors.Is(err, store.ErrNotFound) {
			return &Error{Code: CodeNotFound, Message: "no " + scope + " " + target, Details: map[string]any{"field": "target"}}
		}
		if err != nil {
			return err
		}
		if l.Zero() {
			return tx.DeleteBudget(ctx, scope, target)
		}
		return tx.PutBudget(ctx, b)
	})
	return b, err
}
