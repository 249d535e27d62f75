// Package store is the source of truth: sessions, runs, the event journal,
// human requests, controls, approval rules, accounts and API tokens.
// Callers see only the interfaces here; internal/store/sqlite and
// internal/store/postgres implement them, and internal/store/storetest is
// the conformance suite both pass.
//
// Writes happen inside a Tx. The journal package serialises all writes of a
// process through one writer that group-commits several Tx bodies into one
// database transaction, each body isolated by a savepoint.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/caduceus-dev/caduceus/internal/budget"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
)

// Sentinel errors. Callers test them with errors.Is.
var (
	ErrNotFound  = errors.New("not found")
	ErrConflict  = errors.New("conflict")   // a precondition on current state failed
	ErrLeaseLost = errors.New("lease lost") // the runner no longer owns the run
	ErrBadCursor = errors.New("bad cursor") // a page cursor this store did not issue
)

// Session is a conversation in a workspace.
type Session struct {
	ID        string
	Title     string
	Workspace string
	Model     string
	CreatedAt time.Time
	UpdatedAt time.Time

	// Branch (issue 15): a session branched from another inherits the
	// parent's history up to and including event BranchedFromEventID
	// instead of copying it (see SessionHistory). Both zero for a session
	// that was not branched.
	ParentSessionID     string
	BranchedFromEventID int64
	// Organising sessions (issue 15): a pinned session lists first, an
	// archived one (ArchivedAt set) leaves the default list, and ProjectID
	// ("" for none) groups it under a Project.
	Pinned     bool
	ArchivedAt time.Time
	ProjectID  string
	// ProfileID (h16-profiles) is the agent profile the session's runs use
	// ("" for none).
	ProfileID string
	// Delegation (issue 18, h18-delegate): a session the delegate tool made
	// names the session, run and tool call that delegated to it; all ""
	// for any other session.
	DelegatedSessionID string
	DelegatedRunID     string
	DelegatedCallID    string
}

// Run is one unit of agent work started by a message.
type Run struct {
	ID             string
	SessionID      string
	Status         run.Status
	Input          string
	Model          string
	Priority       int
	Attempt        int
	RunnerID       string
	LeaseExpiresAt time.Time
	LastSeq        int64
	ErrorCode      string
	ErrorMessage   string
	Usage          event.UsageTotals
	CreatedAt      time.Time
	StartedAt      time.Time
	EndedAt        time.Time
	// Retry policy, fixed when the run is queued, and its use so far.
	Retries      int           // automatic retries used
	MaxRetries   int           // automatic retries allowed
	RetryBackoff time.Duration // wait before the first retry; doubles per retry
	RetryAt      time.Time     // when a recovering run may be claimed again
	// ExpiresAt (issue 17, h17-expiry) is the deadline by which the run
	// must have ended (zero: none), fixed when it is queued. A run past it
	// is never claimed and ends expired.
	ExpiresAt time.Time
}

// Request kinds and statuses.
const (
	KindApproval = "approval"
	KindClarify  = "clarify"

	RequestPending   = "pending"
	RequestResolved  = "resolved"
	RequestExpired   = "expired"
	RequestCancelled = "cancelled"
)

// Request is a durable question to a person: an approval or a clarify.
type Request struct {
	ID         string
	RunID      string
	SessionID  string
	Kind       string
	Status     string
	ToolCallID string
	Prompt     json.RawMessage // the approval.requested / clarify.requested payload
	Response   string
	CreatedAt  time.Time
	ExpiresAt  time.Time // zero: never
	ResolvedAt time.Time
}

// Control is a recorded intent on a run (cancel, ...), kept for audit and
// idempotency.
type Control struct {
	ID        string
	RunID     string
	Kind      string
	Payload   json.RawMessage
	CreatedAt time.Time
}

// Rule remembers an approval choice of "session" or "always".
type Rule struct {
	ID        string
	Tool      string
	Pattern   string
	Scope     string
	SessionID string
	CreatedAt time.Time
	// Where it came from (h16-policy): who answered or created it (nil:
	// not recorded) and the approval request it answered ("": none).
	CreatedBy *event.Actor
	RequestID string
}

// RunnerInfo is a runner's registration and heartbeat.
type RunnerInfo struct {
	ID          string
	Host        string
	PID         int
	Version     string
	StartedAt   time.Time
	HeartbeatAt time.Time
}

// User is an account. Name is unique regardless of case; Role and the
// password hash are kept as text the auth package parses (the store does
// not judge them). PasswordHash never leaves the server.
type User struct {
	ID           string
	Name         string
	Role         string
	PasswordHash string
	Disabled     bool
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// NameKey is the form in which user names are compared and kept unique:
// Unicode lower case, computed here so that every store folds alike.
func NameKey(name string) string { return strings.ToLower(name) }

// APIToken is a personal API token. Only its hash and a short display
// prefix are stored; the token itself is shown once when it is made.
type APIToken struct {
	ID        string
	UserID    string
	Name      string
	Scope     string
	Hash      string // unique
	Prefix    string
	CreatedAt time.Time
	LastUsed  time.Time // zero: never
	RevokedAt time.Time // zero: live
}

// WebSession is a browser's sign-in session. ID is the hex SHA-256 of the
// cookie value and CSRFHash the hex SHA-256 of the session's CSRF token:
// neither secret is stored, so a copy of the database signs nobody in.
type WebSession struct {
	ID        string
	UserID    string
	CSRFHash  string
	CreatedAt time.Time
	ExpiresAt time.Time
	LastSeen  time.Time
}

// Checkpoint is the record of one checkpoint of a session's workspace
// (internal/checkpoint holds the files; this row says whose it is). The
// counts are of the change since Parent, the workspace's previous
// checkpoint.
type Checkpoint struct {
	ID         string
	SessionID  string
	RunID      string // "" for a person's edit or a rollback outside a run
	ToolCallID string // "" for the end of a run, an edit or a rollback
	Workspace  string
	Commit     string
	Parent     string // "" for the workspace's first
	Reason     string
	Files      int // files changed since Parent
	Added      int // lines added
	Removed    int // lines removed
	// By is the actor as JSON (event.Actor) for a person's edit or a
	// rollback; "" for the agent.
	By        string
	CreatedAt time.Time
}

// CheckpointQuery selects checkpoints, oldest first; every field that is
// set must match.
type CheckpointQuery struct {
	SessionID  string
	RunID      string
	ToolCallID string
	Workspace  string
	Parent     string
	Limit      int // 0: no limit
}

// Goal is what a session works towards across runs (issue 15, goals): its
// text, status, limits and what the runs under it have used so far.
type Goal struct {
	SessionID string
	Text      string
	Status    string // active, paused, met, blocked, cleared
	// Limits; zero: none.
	MaxRuns     int
	MaxTokens   int64
	MaxCostUSD  float64
	MaxDuration time.Duration
	// Counters of the runs that ended under the goal since it was set.
	Runs    int
	Tokens  int64
	CostUSD float64
	// Note is the agent's last report (update_goal) or why it stopped.
	Note string
	// Reason is why an inactive goal stopped ("met", "limit_runs", ...).
	Reason string
	// By is the actor as JSON (event.Actor) who set the goal last.
	By        string
	StartedAt time.Time // when it was set or last resumed: max_duration counts from here
	CreatedAt time.Time
	UpdatedAt time.Time
}

// SessionPage asks for one page of sessions, newest activity first.
type SessionPage struct {
	Limit  int
	Cursor string // opaque; empty for the first page
	Query  string // case-insensitive title substring
	// Organising sessions: which archived state to list (unarchived by
	// default) and, when set, only the sessions of one project. Pinned
	// sessions come first, then newest activity.
	Archived  ArchivedFilter
	ProjectID string
}

// ArchivedFilter selects sessions by their archived state.
type ArchivedFilter int

const (
	ArchivedExclude ArchivedFilter = iota // only sessions not archived
	ArchivedOnly                          // only archived sessions
	ArchivedAll                           // both
)

// Project groups sessions and carries defaults for new ones: a workspace,
// a model, and instructions added to the system prompt of their runs.
// Names are unique regardless of case (NameKey).
type Project struct {
	ID           string
	Name         string
	Workspace    string
	Model        string
	Instructions string
	ProfileID    string // h16-profiles: the profile its new sessions take ("": the default)
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// Provider is a model provider added in the console (issue 16); the
// environment's and config.json's are not stored. APIKeySealed is the key
// sealed by internal/secretbox, never the key; APIKeyHint its masked form
// ("sk-…4f2a", "" for short keys), so lists need no key to show it.
// Names are unique regardless of case (NameKey).
type Provider struct {
	ID           string
	Name         string
	Kind         string // openai | anthropic
	BaseURL      string
	APIKeySealed string
	APIKeyHint   string
	DefaultModel string
	Models       []string // empty: ask the server
	// HeadersSealed are extra HTTP headers sent to the provider, a JSON
	// object sealed like the key (values may be credentials);
	// HeaderNames their names, for display.
	HeadersSealed string
	HeaderNames   []string
	Enabled       bool
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// Setting is one console setting: a key and its JSON value.
type Setting struct {
	Key       string
	Value     string // JSON
	UpdatedAt time.Time
}

// EventQuery selects events in ID order.
type EventQuery struct {
	SessionID string // optional
	RunID     string // optional
	AfterID   int64
	Limit     int // 0: no limit
	// MaxBytes bounds a page by size as Limit does by rows: the page ends
	// with the first event that brings its payloads to MaxBytes or more
	// (so it always holds at least one event). 0: no limit.
	MaxBytes int
	Types    []event.Type // optional allow-list
	NotTypes []event.Type // optional deny-list
	// AlsoTypes adds the events of these types from every session and run
	// to what the other fields select: a browser tab's one stream carries
	// all of the session on screen and the lifecycle of every other.
	AlsoTypes []event.Type
	// Fold reads only what a transcript fold uses: ID, RunID, Type, TS and
	// Payload; SessionID, Seq and Terminal are left zero. Opening a long
	// session reads thousands of rows, and every column is a cost per row.
	Fold bool
}

// RunState is a run's id and status (Reader.SessionRunStates).
type RunState struct {
	ID     string
	Status run.Status
}

// RequestQuery selects human requests.
type RequestQuery struct {
	Status    string // optional
	SessionID string // optional
	RunID     string // optional
}

// Reader is the read side, usable outside and inside transactions.
type Reader interface {
	GetSession(ctx context.Context, id string) (Session, error)
	ListSessions(ctx context.Context, p SessionPage) (sessions []Session, next string, err error)
	GetRun(ctx context.Context, id string) (Run, error)
	// SessionRuns lists a session's runs, oldest first.
	SessionRuns(ctx context.Context, sessionID string) ([]Run, error)
	// DelegatedSessions lists the sessions the delegate tool made for the
	// run's calls (h18-delegate), oldest first.
	DelegatedSessions(ctx context.Context, runID string) ([]Session, error)
	// SessionRunStates lists a session's runs as SessionRuns does, only
	// their ids and statuses: what reading a transcript needs of them.
	SessionRunStates(ctx context.Context, sessionID string) ([]RunState, error)
	// RunsWithStatus lists runs in any of the statuses, highest priority
	// first, then oldest first.
	RunsWithStatus(ctx context.Context, statuses ...run.Status) ([]Run, error)
	GetRequest(ctx context.Context, id string) (Request, error)
	ListRequests(ctx context.Context, q RequestQuery) ([]Request, error)
	Events(ctx context.Context, q EventQuery) ([]event.Event, error)
	LastEventID(ctx context.Context) (int64, error)
	// RunCursor is the ID of the run's newest event (0 when it has none).
	RunCursor(ctx context.Context, runID string) (int64, error)
	FindRule(ctx context.Context, tool, pattern, sessionID string) (Rule, error)
	ListRules(ctx context.Context) ([]Rule, error)
	ListRunners(ctx context.Context) ([]RunnerInfo, error)

	GetUser(ctx context.Context, id string) (User, error)
	// GetUserByName finds a user by name regardless of case.
	GetUserByName(ctx context.Context, name string) (User, error)
	// ListUsers lists users, oldest first, then by id.
	ListUsers(ctx context.Context) ([]User, error)
	// GetTokenByHash finds a live token: a revoked one is ErrNotFound.
	GetTokenByHash(ctx context.Context, hash string) (APIToken, error)
	// ListTokens lists a user's tokens, revoked ones included, oldest
	// first, then by id.
	ListTokens(ctx context.Context, userID string) ([]APIToken, error)
	// GetWebSession finds a sign-in session by ID (the cookie's hash),
	// expired or not: the caller judges ExpiresAt.
	GetWebSession(ctx context.Context, id string) (WebSession, error)

	// GetCheckpoint finds a checkpoint's record; ErrNotFound if none.
	GetCheckpoint(ctx context.Context, id string) (Checkpoint, error)
	// ListCheckpoints lists the checkpoints q selects, oldest first (by
	// creation, then id).
	ListCheckpoints(ctx context.Context, q CheckpointQuery) ([]Checkpoint, error)

	// Goals (issue 15): GetGoal finds a session's goal; ErrNotFound if it
	// never had one.
	GetGoal(ctx context.Context, sessionID string) (Goal, error)
	// Organising sessions: projects.
	// GetProject finds a project; ErrNotFound if none.
	GetProject(ctx context.Context, id string) (Project, error)
	// ListProjects lists every project by name (NameKey), then id.
	ListProjects(ctx context.Context) ([]Project, error)
	// Search (issue 15): Search ranks the searchable events q.Text matches
	// (titles, the person's messages, complete assistant answers, tool
	// commands), best first, and returns the cursor of the next page ("" at
	// the end). Any text is safe: what is not a word is ignored, and text
	// with no word finds nothing. A cursor this store did not issue is
	// ErrBadCursor.
	Search(ctx context.Context, q SearchQuery) (hits []SearchHit, next string, err error)

	// Profiles (h16-profiles). GetProfile finds a profile, deleted or not;
	// ErrNotFound if none.
	GetProfile(ctx context.Context, id string) (Profile, error)
	// ListProfiles lists the live profiles by name (NameKey), then id.
	ListProfiles(ctx context.Context) ([]Profile, error)
	// DefaultProfile finds the live default profile; ErrNotFound if none.
	DefaultProfile(ctx context.Context) (Profile, error)
	// Usage and cost (issue 16, h16-usage): Usage sums the journal's usage
	// events in q's period per q's group, from a rollup the append keeps
	// (no scan of the events), rows in key order (bucket start for
	// UsageByBucket). It outlives a session's delete. An unknown GroupBy is
	// an error.
	Usage(ctx context.Context, q UsageQuery) ([]UsageRow, error)
	// Providers and settings (issue 16, h16-providers).
	// GetProvider finds a provider kept in the database; ErrNotFound if
	// none.
	GetProvider(ctx context.Context, id string) (Provider, error)
	// ListProviders lists the database's providers by name (NameKey), then
	// id.
	ListProviders(ctx context.Context) ([]Provider, error)
	// ListSettings lists every stored setting by key.
	ListSettings(ctx context.Context) ([]Setting, error)

	// Skills per profile (h16-skills). ProfileSkills lists the names of
	// the skills a profile enables, sorted (nil: none listed, which means
	// every skill); a profile never given any, or unknown, has none.
	ProfileSkills(ctx context.Context, profileID string) ([]string, error)
	// SkillProfiles maps each skill name some live profile enables to
	// those profiles' ids, sorted.
	SkillProfiles(ctx context.Context) (map[string][]string, error)

	// Approval decisions (h16-policy). ApprovalDecisions lists the
	// approval.decided events q selects, newest first.
	ApprovalDecisions(ctx context.Context, q DecisionQuery) ([]event.Event, error)

	// Memory (h16-memory). GetMemory reads one target of a scope's memory;
	// one never written is empty with Version 0, not an error.
	GetMemory(ctx context.Context, scope, target string) (Memory, error)

	// Budgets (h16-budgets). GetBudget finds the limits of a scope's
	// target; ErrNotFound if none are set. ListBudgets lists those of one
	// scope ("" every scope) by scope, then target. DayUsage is what the
	// server spent on the UTC day (budget.Day); zero when nothing yet.
	GetBudget(ctx context.Context, scope, target string) (Budget, error)
	ListBudgets(ctx context.Context, scope string) ([]Budget, error)
	DayUsage(ctx context.Context, day string) (DayUsage, error)

	// Webhooks and triggers (issue 17, h17-hooks). Get* are ErrNotFound
	// for an unknown id. ListWebhooks and ListTriggers order by name, then
	// id. ListDeliveries lists a webhook's attempts ("" the per-run
	// webhook_url ones), newest first, at most limit.
	GetWebhook(ctx context.Context, id string) (Webhook, error)
	ListWebhooks(ctx context.Context) ([]Webhook, error)
	ListDeliveries(ctx context.Context, webhookID string, limit int) ([]Delivery, error)
	GetTrigger(ctx context.Context, id string) (Trigger, error)
	ListTriggers(ctx context.Context) ([]Trigger, error)
	// RunWebhook is the webhook_url a run was queued with ("" for none).
	RunWebhook(ctx context.Context, runID string) (string, error)
	// MCP servers (issue 18, h18-mcpwire). GetMCPServer is ErrNotFound for
	// an unknown id; ListMCPServers orders by name, then id.
	GetMCPServer(ctx context.Context, id string) (MCPServer, error)
	ListMCPServers(ctx context.Context) ([]MCPServer, error)
	// Scheduled jobs (issue 17, h17-jobs). GetJob finds a job (ErrNotFound);
	// ListJobs lists every job by name, then id. LastRunStatus is read from
	// the job's last run. JobRuns lists the runs a job started, newest
	// first, at most limit.
	GetJob(ctx context.Context, id string) (Job, error)
	ListJobs(ctx context.Context) ([]Job, error)
	JobRuns(ctx context.Context, jobID string, limit int) ([]JobRun, error)
	// Job delivery (issue 17, h17-deliver). JobOfRun is the job that
	// started a run ("" for none). DeliveryCursor is the journal id up to
	// which ended runs were turned into deliveries; ok is false before
	// any was kept.
	JobOfRun(ctx context.Context, runID string) (string, error)
	// JobsOfRuns is JobOfRun for many runs in one read: the job of each
	// of runIDs a job started (runs no job started are left out).
	JobsOfRuns(ctx context.Context, runIDs []string) (map[string]string, error)
	DeliveryCursor(ctx context.Context) (eventID int64, ok bool, err error)
	// DeliveryDue reports whether an attempt is due at now (what
	// ClaimDelivery would take), read without a write transaction, so
	// the senders of every process can look each second for free.
	DeliveryDue(ctx context.Context, now time.Time) (bool, error)
}

// DecisionQuery selects approval.decided events (h16-policy). Every field
// is optional.
type DecisionQuery struct {
	From, To  time.Time // From <= ts < To
	SessionID string
	ProfileID string // the payload's profile_id
	Outcome   string // the payload's outcome
	BeforeID  int64  // paging: only events older than this id (0: none)
	Limit     int    // 0: no limit
}

// Tx is one transaction's view: reads see its own writes.
//
// A Tx runs its statements detached from the cancellation (and deadline)
// of the context a body passes them; the context's values still reach
// the driver. Bodies share a transaction (WriteBatch), and a statement
// interrupted part way can end it for all of them (SQLite rolls the whole
// transaction back on an interrupted write, pgx closes the connection),
// and a body's caller that gave up must not decide its batch mates' fate.
type Tx interface {
	Reader

	// AppendEvents assigns IDs and Seqs and inserts the drafts, all for runs
	// or sessions that exist. A run's events are numbered per run; session
	// lifecycle events (event.IsSession; RunID "") have a gap-free Seq of
	// their own per session. When fence is non-empty each run must be leased
	// to that runner, else ErrLeaseLost, and no draft may be a session
	// event. A second terminal event for a run, or a draft whose RunID does
	// not fit its type, is ErrConflict.
	AppendEvents(ctx context.Context, fence string, drafts ...event.Draft) ([]event.Event, error)

	InsertSession(ctx context.Context, s Session) error
	// UpdateSession writes s's title, model, UpdatedAt, organisation
	// (Pinned, ArchivedAt, ProjectID) and ProfileID: callers read the
	// session first.
	UpdateSession(ctx context.Context, s Session) error
	TouchSession(ctx context.Context, id string, at time.Time) error
	// DeleteSession deletes the session, its runs, requests, controls and
	// events, except a session.deleted event of the session: append that
	// first (it needs the session) and it stays, so streams can announce the
	// delete and a cursor taken before it finds it.
	DeleteSession(ctx context.Context, id string) error

	InsertRun(ctx context.Context, r Run) error
	// UpdateRun writes r's mutable fields (status, runner, lease, attempt,
	// error, usage, timestamps) if the stored status is one of from (any
	// when from is empty); otherwise ErrConflict.
	UpdateRun(ctx context.Context, r Run, from ...run.Status) error
	// ClaimNext leases the next runnable run to runnerID: first an
	// awaiting_* run that no live runner holds (parked, or its runner's
	// lease expired) and none of whose requests is still pending and
	// unexpired; else a queued run whose session has no other busy run
	// (highest priority, oldest first) or a recovering run whose retry time
	// has come. A queued or recovering run becomes running with its attempt
	// counted; an awaiting_* run keeps its status. ok is false when nothing
	// is claimable.
	ClaimNext(ctx context.Context, runnerID string, now, leaseUntil time.Time) (r Run, prev run.Status, ok bool, err error)
	// RenewLeases extends the lease of every run held by runnerID in an owned
	// status, returning the IDs renewed.
	RenewLeases(ctx context.Context, runnerID string, until time.Time) ([]string, error)

	InsertRequest(ctx context.Context, q Request) error
	// ResolveRequest moves a pending request to status with response, or
	// returns ErrConflict when it is no longer pending.
	ResolveRequest(ctx context.Context, id, status, response string, at time.Time) error

	InsertControl(ctx context.Context, c Control) error
	ListControls(ctx context.Context, runID string) ([]Control, error)

	InsertRule(ctx context.Context, r Rule) error
	DeleteRule(ctx context.Context, id string) error

	UpsertRunner(ctx context.Context, r RunnerInfo) error
	DeleteRunner(ctx context.Context, id string) error

	// InsertUser adds a user; a name taken regardless of case is
	// ErrConflict.
	InsertUser(ctx context.Context, u User) error
	// UpdateUser writes u's name, role, password hash, disabled flag and
	// UpdatedAt; an unknown id is ErrNotFound, a taken name ErrConflict.
	UpdateUser(ctx context.Context, u User) error
	// InsertToken adds a token of an existing user.
	InsertToken(ctx context.Context, k APIToken) error
	// RevokeToken marks a live token revoked; an unknown or already
	// revoked one is ErrNotFound.
	RevokeToken(ctx context.Context, id string, at time.Time) error
	// TouchToken records a use of the token.
	TouchToken(ctx context.Context, id string, at time.Time) error

	// InsertWebSession adds a sign-in session of an existing user.
	InsertWebSession(ctx context.Context, s WebSession) error
	// TouchWebSession records a use of the session and moves its expiry;
	// an unknown id is ErrNotFound.
	TouchWebSession(ctx context.Context, id string, lastSeen, expiresAt time.Time) error
	// DeleteWebSession ends a session; an unknown id is ErrNotFound.
	DeleteWebSession(ctx context.Context, id string) error
	// DeleteUserWebSessions ends every session of the user but the one
	// with id except ("" for none) and returns how many ended.
	DeleteUserWebSessions(ctx context.Context, userID, except string) (int, error)
	// DeleteExpiredWebSessions removes the sessions expired at now and
	// returns how many.
	DeleteExpiredWebSessions(ctx context.Context, now time.Time) (int, error)

	// InsertCheckpoint records a checkpoint of an existing session; an id
	// taken is ErrConflict.
	InsertCheckpoint(ctx context.Context, c Checkpoint) error

	// Goals (issue 15): PutGoal writes a session's goal, replacing the one
	// it had; an unknown session is ErrNotFound. Deleting the session
	// deletes its goal.
	PutGoal(ctx context.Context, g Goal) error
	// Organising sessions: projects. A name taken regardless of case is
	// ErrConflict; an unknown id is ErrNotFound.
	InsertProject(ctx context.Context, p Project) error
	// UpdateProject writes p's name, workspace, model, instructions,
	// ProfileID and UpdatedAt.
	UpdateProject(ctx context.Context, p Project) error
	// DeleteProject deletes the project; its sessions stay, in no project.
	DeleteProject(ctx context.Context, id string) error

	// Profiles (h16-profiles). A name a live profile holds regardless of
	// case is ErrConflict; an unknown or deleted id is ErrNotFound. A
	// profile written with Default set takes the default from any other.
	InsertProfile(ctx context.Context, p Profile) error
	// UpdateProfile writes every field of p but ID, CreatedAt and
	// DeletedAt.
	UpdateProfile(ctx context.Context, p Profile) error
	// DeleteProfile marks a live profile deleted at at (and no longer the
	// default); sessions and projects keep naming it.
	DeleteProfile(ctx context.Context, id string, at time.Time) error
	// Providers and settings (issue 16, h16-providers). A provider name
	// taken regardless of case is ErrConflict; an unknown id ErrNotFound.
	InsertProvider(ctx context.Context, p Provider) error
	// UpdateProvider writes every field of p but ID and CreatedAt.
	UpdateProvider(ctx context.Context, p Provider) error
	DeleteProvider(ctx context.Context, id string) error
	// PutSetting writes a setting, replacing its value; DeleteSetting
	// removes it (a key never set is no error: the default is back
	// either way).
	PutSetting(ctx context.Context, s Setting) error
	DeleteSetting(ctx context.Context, key string) error

	// Skills per profile (h16-skills). SetProfileSkills replaces the set
	// of skill names a live profile enables (empty: every skill); an
	// unknown or deleted profile is ErrNotFound. Names are stored as given
	// (duplicates once): the caller checks them.
	SetProfileSkills(ctx context.Context, profileID string, names []string) error

	// Memory (h16-memory). PutMemory writes m.Entries as version
	// m.Version+1 when the stored version is still m.Version (the one the
	// caller read), else it is ErrConflict and nothing changes.
	PutMemory(ctx context.Context, m Memory) error

	// Budgets (h16-budgets). PutBudget sets (replaces) the limits of a
	// scope's target; DeleteBudget removes them (none set is no error).
	// AddDayUsage adds u's counters to its day's.
	PutBudget(ctx context.Context, b Budget) error
	DeleteBudget(ctx context.Context, scope, target string) error
	AddDayUsage(ctx context.Context, u DayUsage) error

	// Webhooks and triggers (issue 17, h17-hooks). Update* write every
	// field but ID and CreatedAt and are ErrNotFound for an unknown id;
	// Delete* of an unknown id is no error. DeleteWebhook removes its
	// deliveries too, DeleteTrigger its seen signatures.
	InsertWebhook(ctx context.Context, w Webhook) error
	UpdateWebhook(ctx context.Context, w Webhook) error
	DeleteWebhook(ctx context.Context, id string) error
	// MCP servers (issue 18, h18-mcpwire). UpdateMCPServer writes every
	// field but ID and CreatedAt (ErrNotFound for an unknown id);
	// DeleteMCPServer of an unknown id is no error. Names are unique
	// (the API checks; the table's unique index makes a race fail).
	InsertMCPServer(ctx context.Context, s MCPServer) error
	UpdateMCPServer(ctx context.Context, s MCPServer) error
	DeleteMCPServer(ctx context.Context, id string) error
	// InsertDelivery adds an attempt; one whose ID is already there is
	// left as it is, so processes that each see a run end and derive the
	// same ID queue it once.
	InsertDelivery(ctx context.Context, d Delivery) error
	// ClaimDelivery takes the oldest attempt due at now (pending, or
	// sending whose claim ran out: its sender died) by a conditional
	// update, so several processes send each attempt once: it becomes
	// sending until until. ok is false when none is due.
	ClaimDelivery(ctx context.Context, now, until time.Time) (d Delivery, ok bool, err error)
	// FinishDelivery records an attempt's outcome: d's State, StatusCode,
	// Error and Duration.
	FinishDelivery(ctx context.Context, d Delivery) error
	InsertTrigger(ctx context.Context, tr Trigger) error
	UpdateTrigger(ctx context.Context, tr Trigger) error
	DeleteTrigger(ctx context.Context, id string) error
	// SeeTriggerSignature records a signature a trigger accepted at at and
	// forgets those seen before forgetBefore. fresh is false when the
	// signature was already seen (a replay); nothing changes then.
	SeeTriggerSignature(ctx context.Context, triggerID, signature string, at, forgetBefore time.Time) (fresh bool, err error)
	// PutRunWebhook keeps the webhook_url a run is queued with.
	PutRunWebhook(ctx context.Context, runID, url string) error
	// Scheduled jobs (issue 17, h17-jobs). InsertJob stores a new job;
	// UpdateJob writes every field but ID, CreatedAt, FireCount, LastRunID
	// and SessionID if the stored NextFireAt is still readNext, the one the
	// caller read (else ErrConflict: a claim moved it, and writing the old
	// time back would fire a due time twice); ErrNotFound when unknown.
	// DeleteJob removes a job and its run history (ErrNotFound when
	// unknown).
	InsertJob(ctx context.Context, j Job) error
	UpdateJob(ctx context.Context, j Job, readNext time.Time) error
	DeleteJob(ctx context.Context, id string) error
	// ClaimDueJobs claims every enabled job whose NextFireAt is set and
	// not after now: for each it moves NextFireAt to next(job) (zero: no
	// further fire) and counts the fire, with an update conditional on the
	// NextFireAt it read, so that of several processes claiming at once
	// exactly one gets each due time. It returns the jobs claimed, each
	// with NextFireAt still the due time claimed.
	ClaimDueJobs(ctx context.Context, now time.Time, next func(Job) time.Time) ([]Job, error)
	// RecordJobRun notes that a job's fire at fireAt started runID in
	// sessionID: the job's last run (and its session, which an
	// accumulating job reuses) and a row of its history.
	RecordJobRun(ctx context.Context, r JobRun) error
	// AdvanceDeliveryCursor moves the delivery cursor to eventID; a
	// cursor already past it stays (several processes advance it).
	AdvanceDeliveryCursor(ctx context.Context, eventID int64) error
}

// Job is a scheduled job (issue 17, h17-jobs): a prompt sent on a
// schedule.
type Job struct {
	ID        string
	Name      string
	Prompt    string
	ProfileID string
	Workspace string
	// Schedule: kind cron|interval|once (internal/schedule), its
	// expression and the IANA zone of a cron expression.
	ScheduleKind string
	ScheduleExpr string
	TZ           string
	Enabled      bool
	RepeatLimit  int // fires allowed in all (0: no limit)
	FireCount    int // fires so far
	// Overlap is skip|queue|replace: what a fire does while the last run
	// is still busy. Missed is skip|once: what a process does with fire
	// times missed while nothing ran. SessionPolicy is new|accumulate;
	// SessionID is the accumulating session once it exists.
	Overlap       string
	Missed        string
	SessionPolicy string
	SessionID     string
	RunExpiry     time.Duration // 0: none
	NextFireAt    time.Time     // zero: no further fire
	LastRunID     string
	LastRunStatus run.Status // read from the run; "" when none
	Delivery      JobDelivery
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// JobDelivery is where a job's ended runs are told (h17-deliver): a
// browser notification, and the webhooks named here besides those that
// match the run by their own filter. Deleting a webhook removes it here.
type JobDelivery struct {
	Notify     bool
	WebhookIDs []string // in the order given; nil when none
}

// JobRun is one run a job started (h17-jobs). FireAt is the due time the
// run is for; a run started by hand has Manual set.
type JobRun struct {
	JobID     string
	RunID     string
	SessionID string
	FireAt    time.Time
	Manual    bool
}

// Budget is the limits of one scope's target (h16-budgets): a run, a
// session or a profile by id, or the server per day (target "").
type Budget struct {
	Scope     string
	Target    string
	Limits    budget.Limits
	UpdatedAt time.Time
}

// DayUsage is what the server's runs spent on one UTC day (h16-budgets).
type DayUsage struct {
	Day       string
	Tokens    int64
	CostUSD   float64
	ToolCalls int64
}

// Append is one draft to append under a fence, as Tx.AppendEvents would
// (for stores that append many at once: see postgres.DB.AppendEach).
type Append struct {
	Fence string
	Draft event.Draft
}

// Store is a database of Caduceus state.
type Store interface {
	Reader
	// Write runs fn in one transaction: all of it commits or none.
	Write(ctx context.Context, fn func(Tx) error) error
	// WriteBatch runs several bodies in one transaction, each isolated by a
	// savepoint: a body that fails is rolled back alone and its error is
	// returned at its index; the rest commit together. The returned error is
	// for the transaction as a whole.
	WriteBatch(ctx context.Context, fns []func(Tx) error) ([]error, error)
	Close() error
}
