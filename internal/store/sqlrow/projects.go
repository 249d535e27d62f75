package sqlrow

// Projects that organise sessions.

import (
	"github.com/caduceus-dev/caduceus/internal/store"
)

// ProjectCols are the columns ScanProject reads, in its order.
const ProjectCols = `id, name, workspace, model, instructions, created_at_ms, updated_at_ms, profile_id`

// ScanProject reads one row of ProjectCols.
func ScanProject(s Scanner) (store.Project, error) {
	var v store.Project
	var c, u int64
	err := s.Scan(&v.ID, &v.Name, &v.Workspace, &v.Model, &v.Instructions, &c, &u, &v.ProfileID)
	v.CreatedAt, v.UpdatedAt = fromMS(c), fromMS(u)
	return v, err
}
