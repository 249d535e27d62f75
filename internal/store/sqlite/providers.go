package sqlite

// Providers added in the console and the console's settings (issue 16).

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlrow"
)

func stringsJSON(ms []string) string {
	if len(ms) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(ms) // a []string always marshals
	return string(b)
}

func (r reader) GetProvider(ctx context.Context, id string) (store.Provider, error) {
	v, err := sqlrow.ScanProvider(r.queryRow(ctx, `SELECT `+sqlrow.ProviderCols+` FROM providers WHERE id = ?`, id))
	if err != nil {
		return v, notFound(err, "provider", id)
	}
	return v, nil
}

func (r reader) ListProviders(ctx context.Context) ([]store.Provider, error) {
	rows, err := r.query(ctx, `SELECT `+sqlrow.ProviderCols+` FROM providers ORDER BY name_key, id`)
	if err != nil {
		return nil, fmt.Errorf("list providers: %w", err)
	}
	defer rows.Close()
	out, err := sqlrow.Collect(rows, sqlrow.ScanProvider)
	if err != nil {
		return nil, fmt.Errorf("list providers: %w", err)
	}
	return out, nil
}

func (r reader) ListSettings(ctx context.Context) ([]store.Setting, error) {
	rows, err := r.query(ctx, `SELECT key, value_json, updated_at_ms FROM settings ORDER BY key`)
	if err != nil {
		return nil, fmt.Errorf("list settings: %w", err)
	}
	defer rows.Close()
	var out []store.Setting
	for rows.Next() {
		var s store.Setting
		var u int64
		if err := rows.Scan(&s.Key, &s.Value, &u); err != nil {
			return nil, fmt.Errorf("list settings: %w", err)
		}
		s.UpdatedAt = fromMS(u)
		out = append(out, s)
	}
	return out, rows.Err()
}

func (t *txn) InsertProvider(ctx context.Context, p store.Provider) error {
	res, err := t.tx.ExecContext(ctx, `INSERT INTO providers (`+sqlrow.ProviderCols+`, name_key)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (name_key) DO NOTHING`,
		p.ID, p.Name, p.Kind, p.BaseURL, p.APIKeySealed, p.APIKeyHint, p.DefaultModel, stringsJSON(p.Models), p.HeadersSealed, stringsJSON(p.HeaderNames), p.Enabled,
		ms(p.CreatedAt), ms(p.UpdatedAt), store.NameKey(p.Name))
	return expectOne(res, err)("provider name", p.Name, store.ErrConflict)
}

func (t *txn) UpdateProvider(ctx context.Context, p store.Provider) error {
	var owner string
	err := t.tx.QueryRowContext(ctx, `SELECT id FROM providers WHERE name_key = ?`, store.NameKey(p.Name)).Scan(&owner)
	switch {
	case err == nil && owner != p.ID:
		return fmt.Errorf("provider name %q: %w", p.Name, store.ErrConflict)
	case err != nil && !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("update provider %q: %w", p.ID, err)
	}
	return expectOne(t.tx.ExecContext(ctx, `UPDATE providers SET name = ?, name_key = ?, kind = ?, base_url = ?, api_key_sealed = ?,
		api_key_hint = ?, default_model = ?, models_json = ?, headers_sealed = ?, header_names = ?, enabled = ?, updated_at_ms = ? WHERE id = ?`,
		p.Name, store.NameKey(p.Name), p.Kind, p.BaseURL, p.APIKeySealed, p.APIKeyHint, p.DefaultModel, stringsJSON(p.Models),
		p.HeadersSealed, stringsJSON(p.HeaderNames), p.Enabled, ms(p.UpdatedAt), p.ID))("provider", p.ID, store.ErrNotFound)
}

func (t *txn) DeleteProvider(ctx context.Context, id string) error {
	return expectOne(t.tx.ExecContext(ctx, `DELETE FROM providers WHERE id = ?`, id))("provider", id, store.ErrNotFound)
}

func (t *txn) PutSetting(ctx context.Context, s store.Setting) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO settings (key, value_json, updated_at_ms) VALUES (?,?,?)
		ON CONFLICT (key) DO UPDATE SET value_json = excluded.value_json, updated_at_ms = excluded.updated_at_ms`,
		s.Key, s.Value, ms(s.UpdatedAt))
	if err != nil {
		return fmt.Errorf("put setting %q: %w", s.Key, err)
	}
	return nil
}

func (t *txn) DeleteSetting(ctx context.Context, key string) error {
	if _, err := t.tx.ExecContext(ctx, `DELETE FROM settings WHERE key = ?`, key); err != nil {
		return fmt.Errorf("delete setting %q: %w", key, err)
	}
	return nil
}
