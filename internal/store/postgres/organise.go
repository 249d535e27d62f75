package postgres

// Organising sessions (issue 15): the session list's order and filters,
// and projects.

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlrow"
	"github.com/jackc/pgx/v5"
)

// Session cursors encode the last row's (pinned, updated_at_ms, id), the
// list's order: keyset pagination stays fast however deep the page.
func encodeCursor(s store.Session) string {
	p := "0"
	if s.Pinned {
		p = "1"
	}
	return base64.RawURLEncoding.EncodeToString([]byte(p + "|" + strconv.FormatInt(ms(s.UpdatedAt), 10) + "|" + s.ID))
}

func decodeCursor(c string) (pinned bool, at int64, id string, err error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return false, 0, "", err
	}
	parts := strings.SplitN(string(b), "|", 3)
	if len(parts) == 2 { // a cursor issued before pins: (updated_at_ms, id)
		parts = append([]string{"0"}, parts...)
	}
	if len(parts) != 3 || (parts[0] != "0" && parts[0] != "1") || parts[2] == "" {
		return false, 0, "", store.ErrBadCursor
	}
	n, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return false, 0, "", store.ErrBadCursor
	}
	return parts[0] == "1", n, parts[2], nil
}

// archivedWhere is written the way the partial indexes of migration 8 are,
// so the planner uses them.
func archivedWhere(f store.ArchivedFilter) string {
	switch f {
	case store.ArchivedOnly:
		return "archived_at_ms IS NOT NULL"
	case store.ArchivedAll:
		return "true"
	default:
		return "archived_at_ms IS NULL"
	}
}

func nullMS(s store.Session) any {
	if s.ArchivedAt.IsZero() {
		return nil
	}
	return ms(s.ArchivedAt)
}

func nullString(v string) any {
	if v == "" {
		return nil
	}
	return v
}

func (r reader) GetProject(ctx context.Context, id string) (store.Project, error) {
	v, err := sqlrow.ScanProject(r.q.QueryRow(ctx, `SELECT `+sqlrow.ProjectCols+` FROM projects WHERE id = $1`, id))
	if err != nil {
		return v, notFound(err, "project", id)
	}
	return v, nil
}

func (r reader) ListProjects(ctx context.Context) ([]store.Project, error) {
	rows, err := r.q.Query(ctx, `SELECT `+sqlrow.ProjectCols+` FROM projects ORDER BY name_key, id`)
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	out, err := collect(rows, sqlrow.ScanProject)
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	return out, nil
}

// InsertProject and UpdateProject treat a taken name as users do: looked
// for before writing, so the caller can carry on after ErrConflict.

func (t *txn) InsertProject(ctx context.Context, p store.Project) error {
	return t.exec(ctx, "project name", p.Name, store.ErrConflict, `INSERT INTO projects (id, name, name_key, workspace, model, instructions, created_at_ms, updated_at_ms, profile_id)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9) ON CONFLICT (name_key) DO NOTHING`,
		p.ID, p.Name, store.NameKey(p.Name), p.Workspace, p.Model, p.Instructions, ms(p.CreatedAt), ms(p.UpdatedAt), p.ProfileID)
}

func (t *txn) UpdateProject(ctx context.Context, p store.Project) error {
	var owner string
	err := t.c.QueryRow(ctx, `SELECT id FROM projects WHERE name_key = $1`, store.NameKey(p.Name)).Scan(&owner)
	switch {
	case err == nil && owner != p.ID:
		return fmt.Errorf("project name %q: %w", p.Name, store.ErrConflict)
	case err != nil && !errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("update project %q: %w", p.ID, err)
	}
	return t.exec(ctx, "project", p.ID, store.ErrNotFound, `UPDATE projects SET name = $1, name_key = $2, workspace = $3, model = $4, instructions = $5, updated_at_ms = $6, profile_id = $7
		WHERE id = $8`, p.Name, store.NameKey(p.Name), p.Workspace, p.Model, p.Instructions, ms(p.UpdatedAt), p.ProfileID, p.ID)
}

func (t *txn) DeleteProject(ctx context.Context, id string) error {
	// The foreign key would clear project_id too; saying it here keeps both
	// stores' code alike.
	if _, err := t.c.Exec(ctx, `UPDATE sessions SET project_id = NULL WHERE project_id = $1`, id); err != nil {
		return fmt.Errorf("delete project %q: %w", id, err)
	}
	return t.exec(ctx, "project", id, store.ErrNotFound, `DELETE FROM projects WHERE id = $1`, id)
}
