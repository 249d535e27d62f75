package postgres

// Providers added in the console and the console's settings (issue 16).

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

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
	v, err := sqlrow.ScanProvider(r.q.QueryRow(ctx, `SELECT `+sqlrow.ProviderCols+` FROM providers WHERE id = $1`, id))
	if err != nil {
		return v, notFound(err, "provider", id)
	}
	return v, nil
}

func (r reader) ListProviders(ctx context.Context) ([]store.Provider, error) {
	rows, err := r.q.Query(ctx, `SELECT `+sqlrow.ProviderCols+` FROM providers ORDER BY name_key, id`)
	if err != nil {
		return nil, fmt.Errorf("list providers: %w", err)
	}
	out, err := collect(rows, sqlrow.ScanProvider)
	if err != nil {
		return nil, fmt.Errorf("list providers: %w", err)
	}
	return out, nil
}

func (r reader) ListSettings(ctx context.Context) ([]store.Setting, error) {
	rows, err := r.q.Query(ctx, `SELECT key, value_json, updated_at_ms FROM settings ORDER BY key`)
	if err != nil {
		return nil, fmt.Errorf("list settings: %w", err)
	}
	out, err := collect(rows, func(row sqlrow.Scanner) (store.Setting, error) {
		var s store.Setting
		var u int64
		err := row.Scan(&s.Key, &s.Value, &u)
		s.UpdatedAt = fromMS(u)
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("list settings: %w", err)
	}
	return out, nil
}

func (t *txn) InsertProvider(ctx context.Context, p store.Provider) error {
	return t.exec(ctx, "provider name", p.Name, store.ErrConflict, `INSERT INTO providers (`+sqlrow.ProviderCols+`, name_key)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14) ON CONFLICT (name_key) DO NOTHING`,
		p.ID, p.Name, p.Kind, p.BaseURL, p.APIKeySealed, p.APIKeyHint, p.DefaultModel, stringsJSON(p.Models), p.HeadersSealed, stringsJSON(p.HeaderNames), p.Enabled,
		ms(p.CreatedAt), ms(p.UpdatedAt), store.NameKey(p.Name))
}

func (t *txn) UpdateProvider(ctx context.Context, p store.Provider) error {
	var owner string
	err := t.c.QueryRow(ctx, `SELECT id FROM providers WHERE name_key = $1`, store.NameKey(p.Name)).Scan(&owner)
	switch {
	case err == nil && owner != p.ID:
		return fmt.Errorf("provider name %q: %w", p.Name, store.ErrConflict)
	case err != nil && !errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("update provider %q: %w", p.ID, err)
	}
	return t.exec(ctx, "provider", p.ID, store.ErrNotFound, `UPDATE providers SET name = $1, name_key = $2, kind = $3, base_url = $4,
		api_key_sealed = $5, api_key_hint = $6, default_model = $7, models_json = $8, headers_sealed = $9, header_names = $10, enabled = $11,
		updated_at_ms = $12 WHERE id = $13`,
		p.Name, store.NameKey(p.Name), p.Kind, p.BaseURL, p.APIKeySealed, p.APIKeyHint, p.DefaultModel, stringsJSON(p.Models),
		p.HeadersSealed, stringsJSON(p.HeaderNames), p.Enabled, ms(p.UpdatedAt), p.ID)
}

func (t *txn) DeleteProvider(ctx context.Context, id string) error {
	return t.exec(ctx, "provider", id, store.ErrNotFound, `DELETE FROM providers WHERE id = $1`, id)
}

func (t *txn) PutSetting(ctx context.Context, s store.Setting) error {
	_, err := t.c.Exec(ctx, `INSERT INTO settings (key, value_json, updated_at_ms) VALUES ($1,$2,$3)
		ON CONFLICT (key) DO UPDATE SET value_json = excluded.value_json, updated_at_ms = excluded.updated_at_ms`,
		s.Key, s.Value, ms(s.UpdatedAt))
	if err != nil {
		return fmt.Errorf("put setting %q: %w", s.Key, err)
	}
	return nil
}

func (t *txn) DeleteSetting(ctx context.Context, key string) error {
	if _, err := t.c.Exec(ctx, `DELETE FROM settings WHERE key = $1`, key); err != nil {
		return fmt.Errorf("delete setting %q: %w", key, err)
	}
	return nil
}
