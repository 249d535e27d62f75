package sqlite

// Skills per profile (issue 16, h16-skills).

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/caduceus-dev/caduceus/internal/store"
)

func (r reader) ProfileSkills(ctx context.Context, profileID string) ([]string, error) {
	rows, err := r.query(ctx, `SELECT skill FROM profile_skills WHERE profile_id = ? ORDER BY skill`, profileID)
	if err != nil {
		return nil, fmt.Errorf("skills of profile %q: %w", profileID, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, fmt.Errorf("skills of profile %q: %w", profileID, err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

func (r reader) SkillProfiles(ctx context.Context) (map[string][]string, error) {
	rows, err := r.query(ctx, `SELECT s.skill, s.profile_id FROM profile_skills s
		JOIN profiles p ON p.id = s.profile_id AND p.deleted_at_ms IS NULL ORDER BY s.skill, s.profile_id`)
	if err != nil {
		return nil, fmt.Errorf("profiles of skills: %w", err)
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var s, p string
		if err := rows.Scan(&s, &p); err != nil {
			return nil, fmt.Errorf("profiles of skills: %w", err)
		}
		out[s] = append(out[s], p)
	}
	return out, rows.Err()
}

func (t *txn) SetProfileSkills(ctx context.Context, profileID string, names []string) error {
	var one int
	err := t.tx.QueryRowContext(ctx, `SELECT 1 FROM profiles WHERE id = ? AND deleted_at_ms IS NULL`, profileID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("profile %q: %w", profileID, store.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("set skills of profile %q: %w", profileID, err)
	}
	if _, err := t.tx.ExecContext(ctx, `DELETE FROM profile_skills WHERE profile_id = ?`, profileID); err != nil {
		return fmt.Errorf("set skills of profile %q: %w", profileID, err)
	}
	for _, n := range slices.Compact(slices.Sorted(slices.Values(names))) {
		if _, err := t.tx.ExecContext(ctx, `INSERT INTO profile_skills (profile_id, skill) VALUES (?, ?)`, profileID, n); err != nil {
			return fmt.Errorf("set skills of profile %q: %w", profileID, err)
		}
	}
	return nil
}
