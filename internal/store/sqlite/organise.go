package sqlite

// Organising sessions (issue 15): the session list's order and filters,
// and projects.

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlrow"
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

func decodeCursor(c string) (pinned int, at int64, id string, err error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return 0, 0, "", err
	}
	parts := strings.SplitN(string(b), "|", 3)
	if len(parts) == 2 { // a cursor issued before pins: (updated_at_ms, id)
		parts = append([]string{"0"}, parts...)
	}
	if len(parts) != 3 || (parts[0] != "0" && parts[0] != "1") || parts[2] == "" {
		return 0, 0, "", store.ErrBadCursor
	}
	n, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return 0, 0, "", store.ErrBadCursor
	}
	pinned, _ = strconv.Atoi(parts[0])
	return pinned, n, parts[2], nil
}

// listSessionsQuery is ListSessions' statement: limit+1 rows of the page
// p selects, in the list's order.
func listSessionsQuery(p store.SessionPage, limit int) (string, []any, error) {
	where, args := []string{"1=1"}, []any{}
	if p.Cursor != "" {
		pinned, at, id, err := decodeCursor(p.Cursor)
		if err != nil {
			return "", nil, store.ErrBadCursor
		}
		where = append(where, "(pinned < ? OR (pinned = ? AND (updated_at_ms < ? OR (updated_at_ms = ? AND id < ?))))")
		args = append(args, pinned, pinned, at, at, id)
	}
	where = append(where, archivedWhere(p.Archived))
	if p.ProjectID != "" {
		where = append(where, "project_id = ?")
		args = append(args, p.ProjectID)
	}
	if p.Query != "" {
		where = append(where, "title LIKE ? ESCAPE '\\'")
		args = append(args, "%"+likeEscape(p.Query)+"%")
	}
	args = append(args, limit+1)
	return `SELECT ` + sqlrow.SessionCols + ` FROM sessions WHERE ` + strings.Join(where, " AND ") +
		` ORDER BY pinned DESC, updated_at_ms DESC, id DESC LIMIT ?`, args, nil
}

// archivedWhere is written the way the partial indexes of migration 8 are,
// so the planner uses them.
func archivedWhere(f store.ArchivedFilter) string {
	switch f {
	case store.ArchivedOnly:
		return "archived_at_ms IS NOT NULL"
	case store.ArchivedAll:
		return "1=1"
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
	v, err := sqlrow.ScanProject(r.queryRow(ctx, `SELECT `+sqlrow.ProjectCols+` FROM projects WHERE id = ?`, id))
	if err != nil {
		return v, notFound(err, "project", id)
	}
	return v, nil
}

func (r reader) ListProjects(ctx context.Context) ([]store.Project, error) {
	rows, err := r.query(ctx, `SELECT `+sqlrow.ProjectCols+` FROM projects ORDER BY name_key, id`)
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	defer rows.Close()
	out, err := sqlrow.Collect(rows, sqlrow.ScanProject)
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	return out, nil
}

// InsertProject and UpdateProject treat a taken name as users do: looked
// for before writing, so the caller can carry on after ErrConflict.

func (t *txn) InsertProject(ctx context.Context, p store.Project) error {
	res, err := t.tx.ExecContext(ctx, `INSERT INTO projects (id, name, name_key, workspace, model, instructions, created_at_ms, updated_at_ms, profile_id)
		VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT (name_key) DO NOTHING`,
		p.ID, p.Name, store.NameKey(p.Name), p.Workspace, p.Model, p.Instructions, ms(p.CreatedAt), ms(p.UpdatedAt), p.ProfileID)
	return expectOne(res, err)("project name", p.Name, store.ErrConflict)
}

func (t *txn) UpdateProject(ctx context.Context, p store.Project) error {
	var owner string
	err := t.tx.QueryRowContext(ctx, `SELECT id FROM projects WHERE name_key = ?`, store.NameKey(p.Name)).Scan(&owner)
	switch {
	case err == nil && owner != p.ID:
		return fmt.Errorf("project name %q: %w", p.Name, store.ErrConflict)
	case err != nil && !errors.Is(err, sql.ErrNoRows):
		return fmt.Errorf("update project %q: %w", p.ID, err)
	}
	return expectOne(t.tx.ExecContext(ctx, `UPDATE projects SET name = ?, name_key = ?, workspace = ?, model = ?, instructions = ?, updated_at_ms = ?, profile_id = ?
		WHERE id = ?`, p.Name, store.NameKey(p.Name), p.Workspace, p.Model, p.Instructions, ms(p.UpdatedAt), p.ProfileID, p.ID))("project", p.ID, store.ErrNotFound)
}

func (t *txn) DeleteProject(ctx context.Context, id string) error {
	// The foreign key would clear project_id too; saying it here keeps the
	// contract off the pragma.
	if _, err := t.tx.ExecContext(ctx, `UPDATE sessions SET project_id = NULL WHERE project_id = ?`, id); err != nil {
		return fmt.Errorf("delete project %q: %w", id, err)
	}
	return expectOne(t.tx.ExecContext(ctx, `DELETE FROM projects WHERE id = ?`, id))("project", id, store.ErrNotFound)
}
