package models

// Profiles (issue 16, h16-profiles): a profile's model falls back to the
// next when it is unavailable, which takes more than Resolve's word:
// Resolve sends a bare model name no provider lists to the default
// provider, which may well not serve it.

import (
	"context"
	"fmt"
	"slices"
)

// Available reports why ref cannot answer a run (nil: it can, as far as
// is known): it does not resolve, or its provider's model list is known
// and lacks the model. ask fetches a list not fetched yet (cached as
// List's); without it only what is known already counts, so it never
// blocks (for use inside a store transaction).
func (r *Registry) Available(ctx context.Context, ref string, ask bool) error {
	res, err := r.resolve(ctx, ref, ask)
	if err != nil {
		return err
	}
	e := r.entries[res.ProviderName]
	if e == nil || e.name == DemoProvider || res.Model == "" || res.Model == e.staticDefault() {
		return nil
	}
	var listed []string
	if ask {
		listed, _ = e.models(ctx) // a server that cannot list is not judged
	} else {
		listed = e.cfg.Models
		if len(listed) == 0 {
			e.mu.Lock()
			listed = e.listed
			e.mu.Unlock()
		}
	}
	if len(listed) > 0 && !slices.Contains(listed, res.Model) {
		return fmt.Errorf("%w %q: provider %s does not list it", ErrUnknownModel, ref, res.ProviderName)
	}
	return nil
}
