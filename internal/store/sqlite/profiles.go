package sqlite

// Profiles (issue 16, h16-profiles): several agents.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

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
	v, err := sqlrow.ScanProfile(r.queryRow(ctx, `SELECT `+sqlrow.ProfileCols+` FROM profiles WHERE id = ?`, id))
	if err != nil {
		return v, notFound(err, "profile", id)
	}
	return v, nil
}

func (r reader) DefaultProfile(ctx context.Context) (store.Profile, error) {
	v, err := sqlrow.ScanProfile(r.queryRow(ctx, `SELECT `+sqlrow.ProfileCols+` FROM profiles WHERE is_default = 1 AND deleted_at_ms IS NULL`))
	if err != nil {
		return v, notFound(err, "profile", "default")
	}
	return v, nil
}

func (r reader) ListProfiles(ctx context.Context) ([]store.Profile, error) {
	rows, err := r.query(ctx, `SELECT `+sqlrow.ProfileCols+` FROM profiles WHERE deleted_at_ms IS NULL ORDER BY name_key, id`)
	if err != nil {
		return nil, fmt.Errorf("list profiles: %w", err)
	}
	defer rows.Close()
	out, err := sqlrow.Collect(rows, sqlrow.ScanProfile)
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
	err := t.tx.QueryRowContext(ctx, `SELECT id FROM profiles WHERE name_key = ? AND deleted_at_ms IS NULL`, store.NameKey(name)).Scan(&owner)
	switch {
	case err == nil && owner != id:
		return fmt.Errorf("profile name %q: %w", name, store.ErrConflict)
	case err != nil && !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("write profile %q: %w", id, err)
	}
	return nil
}

// takeDefault clears the default of every profile but id, when p is to be
// the default.
func (t *txn) takeDefault(ctx context.Context, p store.Profile) error {
	if !p.Default {
		return nil
	}
	if _, err := t.tx.ExecContext(ctx, `UPDATE profiles SET is_default = 0 WHERE is_default = 1 AND id <> ?`, p.ID); err != nil {
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
	_, err := t.tx.ExecContext(ctx, `INSERT INTO profiles (`+sqlrow.ProfileCols+`, name_key) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,NULL,?)`,
		p.ID, p.Name, p.Color, p.Instructions, p.Model, listJSON(p.Fallbacks), listJSON(p.Tools), p.ApprovalMode, p.Workspace, p.Default,
		ms(p.CreatedAt), ms(p.UpdatedAt), store.NameKey(p.Name))
	if err != nil {
		return fmt.Errorf("insert profile %q: %w", p.ID, err)
	}
	return nil
}

func (t *txn) UpdateProfile(ctx context.Context, p store.Profile) error {
	if err := t.profileNameTaken(ctx, p.Name, p.ID); err != nil {
		return err
	}
	if err := t.takeDefault(ctx, p); err != nil {
		return err
	}
	return expectOne(t.tx.ExecContext(ctx, `UPDATE profiles SET name = ?, name_key = ?, color = ?, instructions = ?, model = ?,
		fallbacks = ?, tools = ?, approval_mode = ?, workspace = ?, is_default = ?, updated_at_ms = ?
		WHERE id = ? AND deleted_at_ms IS NULL`,
		p.Name, store.NameKey(p.Name), p.Color, p.Instructions, p.Model, listJSON(p.Fallbacks), listJSON(p.Tools),
		p.ApprovalMode, p.Workspace, p.Default, ms(p.UpdatedAt), p.ID))("profile", p.ID, store.ErrNotFound)
}

func (t *txn) DeleteProfile(ctx context.Context, id string, at time.Time) error {
	return expectOne(t.tx.ExecContext(ctx, `UPDATE profiles SET deleted_at_ms = ?, is_default = 0 WHERE id = ? AND deleted_at_ms IS NULL`,
		ms(at), id))("profile", id, store.ErrNotFound)
}
