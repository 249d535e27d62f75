// Package api is the JSON and Server-Sent Events interface of Caduceus. It
// is the web tier: it reads the store and writes intents through the
// control package; it never executes a run.
package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/caduceus-dev/caduceus/internal/account"
	"github.com/caduceus-dev/caduceus/internal/auth"
	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/gitrepo"
	"github.com/caduceus-dev/caduceus/internal/hook"
	"github.com/caduceus-dev/caduceus/internal/httpguard"
	"github.com/caduceus-dev/caduceus/internal/identity"
	"github.com/caduceus-dev/caduceus/internal/journal"
	"github.com/caduceus-dev/caduceus/internal/logring"
	"github.com/caduceus-dev/caduceus/internal/models"
	"github.com/caduceus-dev/caduceus/internal/netlimit"
	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/secret"
	"github.com/caduceus-dev/caduceus/internal/secretbox"
	"github.com/caduceus-dev/caduceus/internal/skill"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/terminal"
)

// Info describes the running server for /api/meta.
type Info struct {
	Version       string
	SchemaVersion int
	DefaultModel  string
	Demo          bool // the default model is the offline demo
	// RunnerMode is where runs execute: "inprocess", or "none" when
	// separate runner processes execute them.
	RunnerMode string
	// Browser is whether the agent's browser tools are offered (h18-browser).
	Browser Capability
}

// Options tune the API. Zero values mean the defaults.
type Options struct {
	Heartbeat   time.Duration // SSE keep-alive comment interval; default 15s
	LeaseWindow time.Duration // a runner is live if it beat within this; default 45s
	// StreamWriteTimeout bounds each write of an event stream: a client
	// that stops reading is dropped once its buffers are full and a write
	// has waited this long. Default 30s.
	StreamWriteTimeout time.Duration
	// MaxStreamsPerAddr bounds the event streams one client address
	// (netlimit.Key) holds at once; 0 means no limit.
	MaxStreamsPerAddr int
	// Models lists providers and models for GET /api/models; nil lists
	// none.
	Models ModelLister
	// Writes tells health about a storage failure writes meet now (a full
	// disk, a database locked elsewhere); nil reports none.
	Writes interface{ Trouble() *journal.Trouble }
	// Streams counts open event streams; nil counts nothing.
	Streams StreamObserver
	// Tracer ties a queued run to the request's trace; nil: no tracing.
	Tracer Tracer
	// Identity resolves who asks; nil: a resolver over the store with no
	// server token on loopback (open until an account exists).
	Identity *identity.Resolver
	// SecureCookies marks the session cookie Secure on plain-HTTP requests
	// too, for a server behind a TLS-terminating proxy.
	SecureCookies bool
	// PasswordParams hashes passwords set through the API; nil means
	// auth.DefaultParams.
	PasswordParams *auth.Params
	// Now is the clock of sign-in rate limiting and accounts; nil means
	// time.Now.
	Now func() time.Time
	// GitEmailDomain is the domain of a signed-in person's author email
	// in Git panel commits (<name>@<domain>); "" means localhost.
	GitEmailDomain string
	// Git tunes the Git panel's git calls (binary, timeout, output bound).
	Git gitrepo.Options
	// Uploads bound attachments; zero values mean the defaults.
	Uploads UploadLimits
	// Images says which models take image input; nil: none does.
	Images ImageInput
	// Checkpoints records a checkpoint before a person's edit is saved;
	// nil takes none.
	Checkpoints EditCheckpointer

	// Terminal: the people's shells. Terminals nil turns the route off.
	Terminals *terminal.Manager
	// Origins are the browser origins besides the server's own
	// (httpguard's allowed origins) a terminal's WebSocket may come from.
	Origins []string
	// Redactor masks known secrets in the typed lines the log records.
	Redactor *secret.Redactor
	// Changes shows checkpoints and what runs changed, and rolls changes
	// back; nil answers those routes 503 checkpoints_unavailable.
	Changes Changes
	// Tools (h16-profiles) are the agent's tools GET /api/tools lists, the
	// ones a profile may enable; nil lists none.
	Tools []provider.ToolSpec

	// ApprovalMode (h16-policy) is the server's default approval mode
	// (--approval-mode), which a profile without its own takes.
	ApprovalMode string

	// The operator's console: processes and logs (h16-ops).
	// Processes is the process table of a runner in this process; nil
	// when runs execute in other processes.
	Processes ProcessTable
	// ProcessRecords are the process records under the data dir (every
	// runner and terminal of this host); nil: none.
	ProcessRecords ProcessRecords
	// Logs keeps the server's latest log lines; nil answers GET /api/logs
	// 503 logs_unavailable.
	Logs *logring.Buffer
	// Settings: providers and settings (issue 16, h16-providers); nil
	// answers those routes 503 settings_unavailable.
	Settings Settings
	// WebSearch is the web_search back-end (h18-web, websearch.go); nil
	// answers those routes 503 web_search_unavailable.
	WebSearch WebSearch

	// Skills (h16-skills) is the skills directory the console lists and
	// changes; nil answers the skills routes 503 skills_unavailable.
	Skills *skill.Dir

	// Webhooks and triggers (issue 17, h17-hooks). HookKeys seals and
	// opens their secrets (create: make the key when there is none); nil
	// answers those routes 503 hooks_unavailable. Hooks queues webhook
	// test deliveries; nil answers the test route 503.
	HookKeys func(create bool) (*secretbox.Box, error)
	Hooks    *hook.Deliverer
	// Jobs (h17-jobs) creates, changes and fires scheduled jobs; nil
	// answers those routes 503 jobs_unavailable (listing still works).
	Jobs Jobs
	// MCP (h18-mcpwire) configures MCP servers and shows their state; nil
	// answers /api/mcp routes 503 mcp_unavailable.
	MCP MCP
}

// StreamObserver is told when an event stream opens and closes; stream is
// "tab", "session" or "run".
type StreamObserver interface {
	StreamOpened(stream string)
	StreamClosed(stream string)
}

// Tracer ties runs to the traced request that queues them.
type Tracer interface {
	// TraceParent is the W3C traceparent of the request's span ("" when
	// there is none); the run keeps it so its execution can link to it.
	TraceParent(ctx context.Context) string
	// TagRun names the run a request created on the request's span.
	TagRun(ctx context.Context, runID string)
}

// untraced is the Tracer of an API given none.
type untraced struct{}

func (untraced) TraceParent(context.Context) string { return "" }
func (untraced) TagRun(context.Context, string)     {}

// unwatched is the StreamObserver of an API given none.
type unwatched struct{}

func (unwatched) StreamOpened(string) {}
func (unwatched) StreamClosed(string) {}

// ModelLister describes the configured providers without their keys.
type ModelLister interface {
	List(ctx context.Context) []models.ProviderView
	Default() string
}

// API serves the HTTP interface.
type API struct {
	st   store.Store
	svc  *control.Service
	hub  *journal.Hub
	info Info
	opt  Options
	log  *slog.Logger
	// streams counts the open event streams per client address.
	streams *netlimit.PerAddr
	// reclaim hands memory back to the system after large replays end.
	reclaim *reclaimer
	// accounts adds, changes and verifies accounts.
	accounts *account.Manager
	// limiter slows repeated failed sign-ins.
	limiter *loginLimiter
	// gitLocks serialises the Git panel's writes per workspace.
	gitLocks *gitWriteLocks
	// terms watches the terminals' ends.
	terms terminals
}

// New returns the API.
func New(st store.Store, svc *control.Service, hub *journal.Hub, info Info, opt Options, log *slog.Logger) *API {
	if opt.Heartbeat <= 0 {
		opt.Heartbeat = 15 * time.Second
	}
	if opt.LeaseWindow <= 0 {
		opt.LeaseWindow = 45 * time.Second
	}
	if opt.StreamWriteTimeout <= 0 {
		opt.StreamWriteTimeout = 30 * time.Second
	}
	if opt.Streams == nil {
		opt.Streams = unwatched{}
	}
	if opt.Tracer == nil {
		opt.Tracer = untraced{}
	}
	if opt.Identity == nil {
		opt.Identity = identity.New(st, identity.Config{Loopback: true, Log: log})
	}
	params := auth.DefaultParams()
	if opt.PasswordParams != nil {
		params = *opt.PasswordParams
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	return &API{st: st, svc: svc, hub: hub, info: info, opt: opt, log: log, streams: netlimit.NewPerAddr(opt.MaxStreamsPerAddr),
		reclaim:  &reclaimer{free: debug.FreeOSMemory, threshold: reclaimThreshold, delay: reclaimDelay, gap: reclaimGap},
		accounts: account.New(st, params, opt.Now), limiter: newLoginLimiter(opt.Now), gitLocks: newGitWriteLocks()}
}

// route is one pattern of the mux and its handler.
type route struct {
	pattern string
	handler http.HandlerFunc
}

// routes lists every route of the API. Each needs an entry in
// routePerms (TestEveryRouteHasAPermission).
func (a *API) routes() []route {
	return []route{
		{"GET /api/health", a.health},
		{"GET /api/auth/me", a.me},
		{"POST /api/auth/login", a.login},
		{"POST /api/auth/logout", a.logout},
		{"POST /api/auth/password", a.changePassword},
		{"GET /api/tokens", a.listTokens},
		{"POST /api/tokens", a.createToken},
		{"DELETE /api/tokens/{id}", a.revokeToken},
		{"GET /api/users", a.listUsers},
		{"POST /api/users", a.createUser},
		{"PATCH /api/users/{id}", a.patchUser},
		{"GET /api/meta", a.meta},
		{"GET /api/models", a.listModels},
		{"GET /api/commands", a.listCommands},
		{"GET /api/events", a.tabEvents},
		// Search (issue 15).
		{"GET /api/search", a.search},
		{"GET /api/sessions", a.listSessions},
		{"POST /api/sessions", a.createSession},
		{"GET /api/sessions/{id}", a.getSession},
		{"PATCH /api/sessions/{id}", a.patchSession},
		{"DELETE /api/sessions/{id}", a.deleteSession},
		{"GET /api/sessions/{id}/messages", a.listMessages},
		{"POST /api/sessions/{id}/messages", a.sendMessage},
		{"GET /api/sessions/{id}/runs", a.listSessionRuns},
		{"POST /api/sessions/{id}/compact", a.compactSession},
		// Issue 15, branch + export/import.
		{"POST /api/sessions/{id}/branch", a.branchSession},
		{"GET /api/sessions/{id}/export", a.exportSession},
		{importPattern, a.importSession},
		{"GET /api/sessions/{id}/events", a.sessionEvents},
		{"GET /api/runs/{id}", a.getRun},
		{"POST /api/runs/{id}/cancel", a.cancelRun},
		{"POST /api/runs/{id}/resume", a.resumeRun},
		{"GET /api/runs/{id}/events", a.runEvents},
		// Versions of a conversation (versions.go).
		{"POST /api/runs/{id}/retry", a.retryRun},
		{"POST /api/runs/{id}/continue", a.continueRun},
		{"POST /api/sessions/{id}/edit", a.editMessage},
		{"POST /api/sessions/{id}/undo", a.undoTurns},
		{"POST /api/sessions/{id}/versions", a.selectVersion},
		{"GET /api/requests", a.listRequests},
		{"GET /api/requests/{id}", a.getRequest},
		{"POST /api/requests/{id}/respond", a.respond},
		// Attachments
		{uploadsPattern, a.uploadFiles},
		{"GET /api/sessions/{id}/uploads/{name}", a.getUpload},
		{"GET /api/rules", a.listRules},
		{"POST /api/rules", a.createRule},
		{"DELETE /api/rules/{id}", a.deleteRule},

		// Git panel (git.go).
		{"GET /api/sessions/{id}/git/status", a.gitStatus},
		{"GET /api/sessions/{id}/git/diff", a.gitDiff},
		{"GET /api/sessions/{id}/git/log", a.gitLog},
		{"GET /api/sessions/{id}/git/branches", a.gitBranches},
		{"POST /api/sessions/{id}/git/stage", a.gitStage},
		{"POST /api/sessions/{id}/git/unstage", a.gitUnstage},
		{"POST /api/sessions/{id}/git/commit", a.gitCommit},
		{"POST /api/sessions/{id}/git/switch", a.gitSwitch},
		// Files (files.go)
		{"GET /api/sessions/{id}/files", a.listFiles},
		{"GET /api/sessions/{id}/files/content", a.getFileContent},
		{"PUT /api/sessions/{id}/files/content", a.putFileContent},
		{"GET /api/sessions/{id}/files/search", a.searchFiles},
		{"GET /api/sessions/{id}/files/resolve", a.resolveFile},
		// Terminal
		{"GET /api/sessions/{id}/terminal", a.terminalSocket},
		// Changes and rollback (checkpoints).
		{"GET /api/sessions/{id}/checkpoints", a.listCheckpoints},
		{"GET /api/sessions/{id}/changes", a.sessionChanges},
		{"GET /api/checkpoints/{id}/diff", a.checkpointDiff},
		{"POST /api/checkpoints/{id}/restore", a.restoreCheckpoint},
		{"GET /api/runs/{id}/changes", a.runChanges},
		{"POST /api/runs/{id}/revert", a.revertRun},
		// Goals (goals.go).
		{"GET /api/sessions/{id}/goal", a.getGoal},
		{"PUT /api/sessions/{id}/goal", a.putGoal},
		{"DELETE /api/sessions/{id}/goal", a.deleteGoal},
		// Organising sessions: projects (pins and archive are PATCH
		// /api/sessions/{id}).
		{"GET /api/projects", a.listProjects},
		{"POST /api/projects", a.createProject},
		{"GET /api/projects/{id}", a.getProject},
		{"PATCH /api/projects/{id}", a.patchProject},
		{"DELETE /api/projects/{id}", a.deleteProject},
		// Profiles (h16-profiles, profiles.go).
		{"GET /api/profiles", a.listProfiles},
		{"POST /api/profiles", a.createProfile},
		{"GET /api/profiles/{id}", a.getProfile},
		{"PATCH /api/profiles/{id}", a.patchProfile},
		{"DELETE /api/profiles/{id}", a.deleteProfile},
		{"POST /api/profiles/{id}/duplicate", a.duplicateProfile},
		// Memory (h16-memory, memory.go).
		{"GET /api/profiles/{id}/memory", a.getMemory},
		{"POST /api/profiles/{id}/memory", a.addMemory},
		{"GET /api/profiles/{id}/memory/prompt", a.getMemoryPrompt},
		{"PATCH /api/profiles/{id}/memory/{entry}", a.patchMemory},
		{"DELETE /api/profiles/{id}/memory/{entry}", a.deleteMemory},
		{"GET /api/tools", a.listTools},
		// The operator's console: processes, logs, a run's raw journal
		// (h16-ops).
		{"GET /api/processes", a.listProcesses},
		{"GET /api/processes/{id}/log", a.processLog},
		{"POST /api/processes/{id}/kill", a.killProcess},
		{"GET /api/logs", a.listLogs},
		{"GET /api/runs/{id}/journal", a.runJournal},
		// Usage and cost (issue 16, h16-usage; usage.go).
		{"GET /api/usage", a.usage},
		// Providers and settings (issue 16, h16-providers; providers.go).
		{"GET /api/providers", a.listProviders},
		{"POST /api/providers", a.createProvider},
		{"GET /api/providers/{id}", a.getProvider},
		{"PATCH /api/providers/{id}", a.patchProvider},
		{"DELETE /api/providers/{id}", a.deleteProvider},
		{"POST /api/providers/{id}/test", a.testProvider},
		{"GET /api/settings", a.getSettings},
		{"PATCH /api/settings", a.patchSettings},
		// Web search (issue 18, h18-web; websearch.go).
		{"GET /api/settings/web-search", a.getWebSearch},
		{"PUT /api/settings/web-search", a.putWebSearch},
		{"DELETE /api/settings/web-search", a.deleteWebSearch},
		{"POST /api/settings/web-search/test", a.testWebSearch},
		// Skills (h16-skills, skills.go).
		{"GET /api/skills", a.listSkills},
		{"POST /api/skills", a.createSkill},
		{skillsInstallPattern, a.installSkill},
		{"GET /api/skills/{name}", a.getSkill},
		{"PUT /api/skills/{name}", a.putSkill},
		{"DELETE /api/skills/{name}", a.deleteSkill},
		{"GET /api/profiles/{id}/skills", a.getProfileSkills},
		{"PUT /api/profiles/{id}/skills", a.putProfileSkills},
		// The approval-policy page (h16-policy, approvals.go); rules are
		// above.
		{"GET /api/approvals/mode", a.approvalMode},
		{"GET /api/approvals/decisions", a.listDecisions},
		// Budgets, pause and health (h16-budgets, budgets.go).
		{"POST /api/runs/{id}/pause", a.pauseRun},
		{"GET /api/budgets", a.listBudgets},
		{"PUT /api/budgets", a.putBudget},
		// Webhooks and triggers (h17-hooks, webhooks.go, triggers.go).
		{"POST /hooks/{id}", a.fireTrigger},
		{"GET /api/webhooks", a.listWebhooks},
		{"POST /api/webhooks", a.createWebhook},
		{"GET /api/webhooks/{id}", a.getWebhook},
		{"PATCH /api/webhooks/{id}", a.patchWebhook},
		{"DELETE /api/webhooks/{id}", a.deleteWebhook},
		{"POST /api/webhooks/{id}/test", a.testWebhook},
		{"GET /api/webhooks/{id}/deliveries", a.listDeliveries},
		{"POST /api/webhooks/run-key", a.runKey},
		// MCP servers (h18-mcpwire, mcp.go).
		{"GET /api/mcp/servers", a.listMCPServers},
		{"POST /api/mcp/servers", a.createMCPServer},
		{"GET /api/mcp/servers/{id}", a.getMCPServer},
		{"PATCH /api/mcp/servers/{id}", a.patchMCPServer},
		{"DELETE /api/mcp/servers/{id}", a.deleteMCPServer},
		{"POST /api/mcp/servers/{id}/restart", a.restartMCPServer},
		{"GET /api/triggers", a.listTriggers},
		{"POST /api/triggers", a.createTrigger},
		{"GET /api/triggers/{id}", a.getTrigger},
		{"PATCH /api/triggers/{id}", a.patchTrigger},
		{"DELETE /api/triggers/{id}", a.deleteTrigger},
		// Scheduled jobs (h17-jobs, jobs.go).
		{"GET /api/jobs", a.listJobs},
		{"POST /api/jobs", a.createJob},
		{"GET /api/jobs/{id}", a.getJob},
		{"PATCH /api/jobs/{id}", a.patchJob},
		{"DELETE /api/jobs/{id}", a.deleteJob},
		{"POST /api/jobs/{id}/run", a.runJob},
		{"POST /api/jobs/{id}/pause", a.pauseJob},
		{"POST /api/jobs/{id}/resume", a.resumeJob},
		{"GET /api/jobs/{id}/runs", a.listJobRuns},
		{"GET /api/schedules/preview", a.previewSchedule},
	}
}

// Handler returns the routes behind sign-in (Options.Identity, unless an
// outer identity.Wrap resolved the request already). Wrap it with
// httpguard.
func (a *API) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range a.routes() {
		mux.HandleFunc(rt.pattern, rt.handler)
	}

	return a.opt.Identity.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, pattern := mux.Handler(r)
		if pattern == "" {
			// The mux's own 404 and 405 answers are plain text; keep their
			// status (and Allow header) but speak the API's error shape.
			h.ServeHTTP(&statusOnly{ResponseWriter: w}, r)
			return
		}
		if !a.permitted(w, r, pattern) {
			return
		}
		// Query parameters carry text too (a search, a filter): checked
		// once here so no handler sees or stores a broken string.
		if !validQuery(r.URL) {
			writeInvalidUTF8(w, "query parameters")
			return
		}
		mux.ServeHTTP(w, r)
	}))
}

// statusOnly turns a plain-text error answer into the JSON error shape.
type statusOnly struct {
	http.ResponseWriter
	wrote bool
}

func (s *statusOnly) WriteHeader(code int) {
	if s.wrote {
		return
	}
	s.wrote = true
	if code == http.StatusMethodNotAllowed {
		writeError(s.ResponseWriter, code, "method_not_allowed", "method not allowed on this route", nil)
		return
	}
	writeError(s.ResponseWriter, code, control.CodeNotFound, "no such API route", nil)
}

func (s *statusOnly) Write(b []byte) (int, error) {
	if !s.wrote {
		s.WriteHeader(http.StatusOK)
	}
	return len(b), nil
}

// writeJSON writes v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, code, msg string, details map[string]any) {
	httpguard.WriteError(w, status, code, msg, details)
}

// statusOf maps stable error codes to HTTP statuses.
func statusOf(code string) int {
	switch code {
	case control.CodeNotFound:
		return http.StatusNotFound
	case control.CodeSessionBusy, control.CodeNotPending, control.CodeConflict, control.CodeNotResumable, control.CodeSuperseded,
		control.CodeProjectNameTaken: // organising sessions
		return http.StatusConflict
	// Profiles (h16-profiles). profile_not_found stays 400: it answers a
	// profile_id in a body; a route's unknown profile is not_found.
	case control.CodeProfileNameTaken:
		return http.StatusConflict
	// Budgets (h16-budgets): a run that is not running cannot pause.
	case control.CodeNotPausable:
		return http.StatusConflict
	// Versions of a conversation.
	case control.CodeNotRetryable, control.CodeNothingToUndo, control.CodeNothingToRestore, control.CodeNothingToContinue:
		return http.StatusConflict
	default:
		return http.StatusBadRequest
	}
}

// fail writes err: a client error with its code, anything else as a 500
// whose details stay in the log.
func (a *API) fail(w http.ResponseWriter, r *http.Request, err error) {
	if ce, ok := control.AsError(err); ok {
		writeError(w, statusOf(ce.Code), ce.Code, ce.Message, ce.Details)
		return
	}
	if r.Context().Err() != nil {
		return // the client went away
	}
	switch {
	case store.Full(err):
		a.log.Error("storage full", "method", r.Method, "path", r.URL.Path, "err", err)
		writeError(w, http.StatusInsufficientStorage, CodeStorageFull,
			"the server's disk is full: nothing was saved; free some space and try again", nil)
		return
	case store.Transient(err):
		a.log.Warn("store unavailable", "method", r.Method, "path", r.URL.Path, "err", err)
		w.Header().Set("Retry-After", "2")
		writeError(w, http.StatusServiceUnavailable, CodeStoreUnavailable,
			"the server's database is busy or unreachable right now: nothing was saved; try again shortly", nil)
		return
	}
	a.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	writeError(w, http.StatusInternalServerError, "internal_error", "internal error; see the server log", nil)
}

// CodeRequestTimeout answers a request whose body did not arrive within
// the server's read timeout; the connection is closed after it.
const CodeRequestTimeout = "request_timeout"

// CodeTooManyStreams refuses an event stream to a client address that
// holds Options.MaxStreamsPerAddr already.
const CodeTooManyStreams = "too_many_streams"

// Storage error codes: the request changed nothing and may be repeated.
const (
	CodeStorageFull      = "storage_full"
	CodeStoreUnavailable = "store_unavailable"
)

// decode reads a JSON body into v strictly: unknown fields, trailing data
// and non-JSON content types are rejected before anything changes.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			writeError(w, http.StatusUnsupportedMediaType, "unsupported_media_type", "send the body as application/json", nil)
			return false
		}
	}
	// The body is read whole (the guard bounds it) so its text can be
	// checked before any of it is decoded.
	b, err := io.ReadAll(r.Body)
	if err != nil {
		var ne net.Error
		switch {
		case httpguard.IsBodyTooLarge(err):
			writeError(w, http.StatusRequestEntityTooLarge, httpguard.CodeBodyTooLarge, "request body is too large", nil)
		case errors.As(err, &ne) && ne.Timeout():
			// The server's read timeout passed: the client sent the headers
			// and then too little of the body, too slowly.
			writeError(w, http.StatusRequestTimeout, CodeRequestTimeout,
				"the request body did not arrive within the server's read timeout; nothing was changed", nil)
		default:
			writeError(w, http.StatusBadRequest, control.CodeInvalidInput, "could not read the request body", nil)
		}
		return false
	}
	if !validJSONText(b) {
		writeInvalidUTF8(w, "the request body")
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	err = dec.Decode(v)
	if err == nil && dec.More() {
		err = errors.New("unexpected data after the JSON value")
	}
	if err == nil {
		if _, terr := dec.Token(); terr != io.EOF {
			err = errors.New("unexpected data after the JSON value")
		}
	}
	switch {
	case err == nil:
		return true
	case httpguard.IsBodyTooLarge(err):
		writeError(w, http.StatusRequestEntityTooLarge, httpguard.CodeBodyTooLarge, "request body is too large", nil)
	case errors.Is(err, io.EOF):
		writeError(w, http.StatusBadRequest, control.CodeInvalidInput, "request body must be a JSON object", nil)
	default:
		writeError(w, http.StatusBadRequest, control.CodeInvalidInput, "invalid JSON body: "+strings.TrimPrefix(err.Error(), "json: "), nil)
	}
	return false
}
