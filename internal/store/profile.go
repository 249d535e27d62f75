package store

import "time"

// Profiles (issue 16, h16-profiles): several agents.

// Profile is an agent: its name and colour, the instructions added to the
// system prompt of its sessions' runs, the model it uses when a session
// names none (and the fallbacks tried in order when that model is
// unavailable), the tools it may use (empty: all), its approval mode ("":
// the server's) and the workspace its new sessions start in ("": the
// server's). At most one live profile is the Default, the one a session
// in no project (or in a project naming none) takes.
//
// Deleting a profile marks it deleted rather than removing the row:
// sessions and projects that name it keep the name to show, and runs of
// them go on without it (each run's run.started keeps a snapshot of the
// profile it ran with).
type Profile struct {
	ID           string
	Name         string // unique among live profiles regardless of case (NameKey)
	Color        string // "#rrggbb"
	Instructions string
	Model        string
	Fallbacks    []string
	Tools        []string
	ApprovalMode string
	Workspace    string
	Default      bool
	CreatedAt    time.Time
	UpdatedAt    time.Time
	DeletedAt    time.Time // zero: live
}

// Live reports whether the profile has not been deleted.
func (p Profile) Live() bool { return p.DeletedAt.IsZero() }
