package postgres

// Profiles (issue 16, h16-profiles): several agents, as the SQLite store
// keeps them.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlrow"
)

func listJSON(v []string) string {
	if len(v) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(v) // a []string always marshals
	return string(b)
}

func (r reader) GetProfile(ctx context.Context, id string) (store.Profile, error) {
	v, err := sqlrow.ScanProfile(r.q.QueryRow(ctx, `SELECT `+sqlrow.ProfileCols+` FROM profiles WHERE id = $1`, id))
	if err != nil {
		return v, notFound(err, "profile", id)
	}
	return v, nil
}

func (r reader) DefaultProfile(ctx context.Context) (store.Profile, error) {
	v, err := sqlrow.ScanProfile(r.q.QueryRow(ctx, `SELECT `+sqlrow.ProfileCols+` FROM profiles WHERE is_default AND deleted_at_ms IS NULL`))
	if err != nil {
		return v, notFound(err, "profile", "default")
	}
	return v, nil
}

func (r reader) ListProfiles(ctx context.Context) ([]store.Profile, error) {
	rows, err := r.q.Query(ctx, `SELECT `+sqlrow.ProfileCols+` FROM profiles WHERE deleted_at_ms IS NULL ORDER BY name_key, id`)
	if err != nil {
		return nil, fmt.Errorf("list profiles: %w", err)
	}
	out, err := collect(rows, sqlrow.ScanProfile)
	if err != nil {
		return nil, fmt.Errorf("list profiles: %w", err)
	}
	return out, nil
}

// profileNameTaken reports whether a live profile other than id holds
// name: looked for before writing, so the caller can carry on after
// ErrConflict.
func (t *txn) profileNameTaken(ctx context.Context, name, id string) error {
	var owner string
	err := t.c.QueryRow(ctx, `SELECT id FROM profiles WHERE name_key = $1 AND deleted_at_ms IS NULL`, store.NameKey(name)).Scan(&owner)
	switch {
	case err == nil && owner != id:
		return fmt.Errorf("profile name %q: %w", name, store.ErrConflict)
	case err != nil && !errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("write profile %q: %w", id, err)
	}
	return nil
}

// takeDefault clears the default of every profile but p, when p is to be
// the default.
func (t *txn) takeDefault(ctx context.Context, p store.Profile) error {
	if !p.Default {
		return nil
	}
	if _, err := t.c.Exec(ctx, `UPDATE profiles SET is_default = false WHERE is_default AND id <> $1`, p.ID); err != nil {
		return fmt.Errorf("write profile %q: %w", p.ID, err)
	}
	return nil
}

func (t *txn) InsertProfile(ctx context.Context, p store.Profile) error {
	if err := t.profileNameTaken(ctx, p.Name, p.ID); err != nil {
		return err
	}
	if err := t.takeDefault(ctx, p); err != nil {
		return err
	}
	_, err := t.c.Exec(ctx, `INSERT INTO profiles (`+sqlrow.ProfileCols+`, name_key) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,NULL,$13)`,
		p.ID, p.Name, p.Color, p.Instructions, p.Model, listJSON(p.Fallbacks), listJSON(p.Tools), p.ApprovalMode, p.Workspace, p.Default,
		ms(p.CreatedAt), ms(p.UpdatedAt), store.NameKey(p.Name))
	if err != nil {
		return profileWriteErr(err, p)
	}
	return nil
}

// profileWriteErr is ErrConflict for a unique index a concurrent
// transaction beat this one to (the name, or the default) after the
// checks above.
func profileWriteErr(err error, p store.Profile) error {
	if c, ok := uniqueViolation(err); ok && (c == "profiles_live_name" || c == "profiles_default") {
		return fmt.Errorf("profile name %q: %w", p.Name, store.ErrConflict)
	}
	return fmt.Errorf("write profile %q: %w", p.ID, err)
}

func (t *txn) UpdateProfile(ctx context.Context, p store.Profile) error {
	if err := t.profileNameTaken(ctx, p.Name, p.ID); err != nil {
		return err
	}
	if err := t.takeDefault(ctx, p); err != nil {
		return err
	}
	tag, err := t.c.Exec(ctx, `UPDATE profiles SET name = $1, name_key = $2, color = $3, instructions = $4, model = $5,
		fallbacks = $6, tools = $7, approval_mode = $8, workspace = $9, is_default = $10, updated_at_ms = $11
		WHERE id = $12 AND deleted_at_ms IS NULL`,
		p.Name, store.NameKey(p.Name), p.Color, p.Instructions, p.Model, listJSON(p.Fallbacks), listJSON(p.Tools),
		p.ApprovalMode, p.Workspace, p.Default, ms(p.UpdatedAt), p.ID)
	if err != nil {
		return profileWriteErr(err, p)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("profile %q: %w", p.ID, store.ErrNotFound)
	}
	return nil
}

func (t *txn) DeleteProfile(ctx context.Context, id string, at time.Time) error {
	return t.exec(ctx, "profile", id, store.ErrNotFound, `UPDATE profiles SET deleted_at_ms = $1, is_default = false WHERE id = $2 AND deleted_at_ms IS NULL`,
		ms(at), id)
}
