package postgres

// Skills per profile (issue 16, h16-skills).

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/caduceus-dev/caduceus/internal/store"
)

func (r reader) ProfileSkills(ctx context.Context, profileID string) ([]string, error) {
	rows, err := r.q.Query(ctx, `SELECT skill FROM profile_skills WHERE profile_id = $1 ORDER BY skill`, profileID)
	if err != nil {
		return nil, fmt.Errorf("skills of profile %q: %w", profileID, err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("skills of profile %q: %w", profileID, err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

func (r reader) SkillProfiles(ctx context.Context) (map[string][]string, error) {
	rows, err := r.q.Query(ctx, `SELECT s.skill, s.profile_id FROM profile_skills s
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
	err := t.c.QueryRow(ctx, `SELECT 1 FROM profiles WHERE id = $1 AND deleted_at_ms IS NULL FOR UPDATE`, profileID).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("profile %q: %w", profileID, store.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("set skills of profile %q: %w", profileID, err)
	}
	if _, err := t.c.Exec(ctx, `DELETE FROM profile_skills WHERE profile_id = $1`, profileID); err != nil {
		return fmt.Errorf("set skills of profile %q: %w", profileID, err)
	}
	if len(names) == 0 {
		return nil
	}
	if _, err := t.c.Exec(ctx, `INSERT INTO profile_skills (profile_id, skill) SELECT $1, unnest($2::text[])`,
		profileID, slices.Compact(slices.Sorted(slices.Values(names)))); err != nil {
		return fmt.Errorf("set skills of profile %q: %w", profileID, err)
	}
	return nil
}
