package postgres

// Memory (issue 16, h16-memory): an agent's memory, per profile.

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlrow"
)

func (r reader) GetMemory(ctx context.Context, scope, target string) (store.Memory, error) {
	m := store.Memory{Scope: scope, Target: target}
	var entries string
	var u int64
	err := r.q.QueryRow(ctx, `SELECT entries, version, updated_at_ms FROM memory WHERE profile_id = $1 AND target = $2`, scope, target).
		Scan(&entries, &m.Version, &u)
	if errors.Is(err, pgx.ErrNoRows) {
		return m, nil
	}
	if err != nil {
		return m, fmt.Errorf("get memory %q/%s: %w", scope, target, err)
	}
	m.UpdatedAt = fromMS(u)
	if m.Entries, err = sqlrow.StringList(entries); err != nil {
		return m, fmt.Errorf("memory %q/%s entries: %w", scope, target, err)
	}
	return m, nil
}

func (t *txn) PutMemory(ctx context.Context, m store.Memory) error {
	var sql string
	args := []any{listJSON(m.Entries), ms(m.UpdatedAt), m.Scope, m.Target}
	if m.Version == 0 {
		// Two runners inserting at once: the later waits for the earlier
		// to commit and then inserts nothing, which is the conflict.
		sql = `INSERT INTO memory (entries, version, updated_at_ms, profile_id, target) VALUES ($1,1,$2,$3,$4)
			ON CONFLICT (profile_id, target) DO NOTHING`
	} else {
		sql = `UPDATE memory SET entries = $1, version = version + 1, updated_at_ms = $2
			WHERE profile_id = $3 AND target = $4 AND version = $5`
		args = append(args, m.Version)
	}
	tag, err := t.c.Exec(ctx, sql, args...)
	if err != nil {
		return fmt.Errorf("write memory %q/%s: %w", m.Scope, m.Target, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("memory %q/%s changed meanwhile: %w", m.Scope, m.Target, store.ErrConflict)
	}
	return nil
}
