package sqlite

// Memory (issue 16, h16-memory): an agent's memory, per profile.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlrow"
)

func (r reader) GetMemory(ctx context.Context, scope, target string) (store.Memory, error) {
	m := store.Memory{Scope: scope, Target: target}
	var entries string
	var u int64
	err := r.queryRow(ctx, `SELECT entries, version, updated_at_ms FROM memory WHERE profile_id = ? AND target = ?`, scope, target).
		Scan(&entries, &m.Version, &u)
	if errors.Is(err, sql.ErrNoRows) {
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
	var (
		res sql.Result
		err error
	)
	if m.Version == 0 {
		res, err = t.tx.ExecContext(ctx, `INSERT INTO memory (profile_id, target, entries, version, updated_at_ms) VALUES (?,?,?,1,?)
			ON CONFLICT (profile_id, target) DO NOTHING`, m.Scope, m.Target, listJSON(m.Entries), ms(m.UpdatedAt))
	} else {
		res, err = t.tx.ExecContext(ctx, `UPDATE memory SET entries = ?, version = version + 1, updated_at_ms = ?
			WHERE profile_id = ? AND target = ? AND version = ?`, listJSON(m.Entries), ms(m.UpdatedAt), m.Scope, m.Target, m.Version)
	}
	return expectOne(res, err)("memory", m.Scope+"/"+m.Target, store.ErrConflict)
}
