package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/journal"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// Limits on client input.
const (
	MaxMessageBytes = 256 << 10
	MaxTitleRunes   = 200
)

// Busy policies for a message sent to a session with a busy run.
const (
	IfBusyEnqueue   = "enqueue"
	IfBusyInterrupt = "interrupt"
	IfBusyReject    = "reject"
)

// Service writes intents through the journal writer.
type Service struct {
	st        store.Store
	w         *journal.Writer
	workspace string // default workspace of new sessions
	// roots are the directories a session's workspace may be chosen
	// under, as configured and with their symlinks resolved.
	roots []workspaceRoot
	retry RetryPolicy
	// toolNames are the tools a profile may enable (KnowTools); nil
	// accepts any.
	toolNames []string
	// retryNow is the console's retry policy (SetRetryPolicy), nil until
	// set: retry's then.
	retryNow atomic.Pointer[RetryPolicy]
}

// SetRetryPolicy changes the policy given to the runs queued from now on
// (issue 16, h16-providers: the console's settings).
func (s *Service) SetRetryPolicy(p RetryPolicy) { s.retryNow.Store(&p) }

func (s *Service) retryPolicy() RetryPolicy {
	if p := s.retryNow.Load(); p != nil {
		return *p
	}
	return s.retry
}

type workspaceRoot struct{ given, real string }

// NewService returns a Service. retry is the policy given to every run it
// queues. New sessions may choose a workspace under workspace only until
// AllowWorkspaces says otherwise.
func NewService(st store.Store, w *journal.Writer, workspace string, retry RetryPolicy) *Service {
	s := &Service{st: st, w: w, workspace: workspace, retry: retry}
	if real, err := filepath.EvalSymlinks(workspace); err == nil {
		s.roots = []workspaceRoot{{given: workspace, real: real}}
	}
	return s
}

// AllowWorkspaces replaces the roots a new session's workspace must lie
// under (the directories themselves included). Each must be an existing
// directory; symlinks in them are resolved once, here. Call it before the
// Service serves requests: the roots are not guarded for concurrent use.
func (s *Service) AllowWorkspaces(roots []string) error {
	out := make([]workspaceRoot, 0, len(roots))
	for _, r := range roots {
		if !filepath.IsAbs(r) {
			return fmt.Errorf("workspace root %q is not an absolute path", r)
		}
		real, err := filepath.EvalSymlinks(r)
		if err != nil {
			return fmt.Errorf("workspace root: %w", err)
		}
		if fi, err := os.Stat(real); err != nil || !fi.IsDir() {
			return fmt.Errorf("workspace root %q is not a directory", r)
		}
		out = append(out, workspaceRoot{given: filepath.Clean(r), real: real})
	}
	s.roots = out
	return nil
}

// WorkspaceRoots returns the configured roots as given, for the new-session
// dialog to offer, and the default workspace of new sessions.
func (s *Service) WorkspaceRoots() (roots []string, def string) {
	for _, r := range s.roots {
		roots = append(roots, r.given)
	}
	return roots, s.workspace
}

// NewSession is the input of CreateSession.
type NewSession struct {
	Title     string
	Workspace string
	Model     string
	// ProjectID puts the session in a project, whose workspace and model
	// are the defaults for those left empty.
	ProjectID string
	// ProfileID (h16-profiles) names the session's profile; "" takes the
	// project's, else the default profile. The profile's workspace is the
	// default after the project's.
	ProfileID string
}

// CreateSession creates an empty session.
func (s *Service) CreateSession(ctx context.Context, in NewSession) (store.Session, error) {
	sess, err := s.PrepareSession(ctx, in)
	if err != nil {
		return store.Session{}, err
	}
	err = s.w.Do(ctx, func(tx store.Tx) error { return InsertSessionInTx(ctx, tx, sess) })
	return sess, err
}

// PrepareSession checks in and makes the session CreateSession would
// insert, writing nothing (h17-jobs: a scheduled job inserts it in the
// transaction that claims its fire, with InsertSessionInTx).
func (s *Service) PrepareSession(ctx context.Context, in NewSession) (store.Session, error) {
	title, err := cleanTitle(in.Title)
	if err != nil {
		return store.Session{}, err
	}
	if in.ProjectID != "" {
		if in, err = s.withProjectDefaults(ctx, in); err != nil {
			return store.Session{}, err
		}
	}
	prof, err := sessionProfile(ctx, s.st, strings.TrimSpace(in.ProfileID), in.ProjectID)
	if err != nil {
		return store.Session{}, err
	}
	if in.Workspace == "" {
		in.Workspace = prof.Workspace
	}
	ws := s.workspace
	if in.Workspace != "" {
		if ws, err = s.checkWorkspace(in.Workspace); err != nil {
			return store.Session{}, err
		}
	}
	now := time.Now().UTC()
	sess := store.Session{ID: id.New("ses"), Title: title, Workspace: ws, Model: strings.TrimSpace(in.Model), CreatedAt: now, UpdatedAt: now, ProjectID: in.ProjectID, ProfileID: prof.ID}
	return sess, nil
}

// InsertSessionInTx inserts a session PrepareSession made and announces
// it (session.created).
func InsertSessionInTx(ctx context.Context, tx store.Tx, sess store.Session) error {
	if err := tx.InsertSession(ctx, sess); err != nil {
		return err
	}
	_, err := tx.AppendEvents(ctx, "", event.Draft{SessionID: sess.ID, Type: event.SessionCreated,
		Payload: event.SessionCreatedPayload{Session: SessionInfo(sess)}})
	return err
}

// SessionInfo is the session as session.created announces it.
func SessionInfo(s store.Session) event.SessionInfo {
	return event.SessionInfo{ID: s.ID, Title: s.Title, Workspace: s.Workspace, Model: s.Model, ProjectID: s.ProjectID, ProfileID: s.ProfileID,
		DelegatedSessionID: s.DelegatedSessionID, DelegatedRunID: s.DelegatedRunID, DelegatedCallID: s.DelegatedCallID,
		CreatedAt: event.Time{Time: s.CreatedAt}, UpdatedAt: event.Time{Time: s.UpdatedAt}}
}

// checkWorkspace accepts p when it is an existing directory that lies,
// after its symlinks are resolved, under one of the roots: a link inside a
// root that points elsewhere does not widen the allow-list.
func (s *Service) checkWorkspace(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", errorf(CodeInvalidInput, "workspace must be an absolute path")
	}
	fi, err := os.Stat(p)
	if err != nil || !fi.IsDir() {
		return "", errorf(CodeInvalidInput, "workspace %q is not an existing directory", p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", errorf(CodeInvalidInput, "workspace %q is not an existing directory", p)
	}
	for _, r := range s.roots {
		if within(r.real, real) {
			return filepath.Clean(p), nil
		}
	}
	roots, _ := s.WorkspaceRoots()
	return "", &Error{Code: CodeWorkspaceNotAllowed,
		Message: fmt.Sprintf("workspace %q is not under an allowed workspace root (the server's --workspace-root)", p),
		Details: map[string]any{"roots": roots}}
}

// within reports whether p is root or lies below it; both are clean and
// absolute.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

func cleanTitle(t string) (string, error) {
	t = strings.TrimSpace(t)
	if !utf8.ValidString(t) || strings.ContainsAny(t, "\x00\r\n") {
		return "", errorf(CodeInvalidInput, "title must be one line of UTF-8 text")
	}
	if utf8.RuneCountInString(t) > MaxTitleRunes {
		return "", errorf(CodeInvalidInput, "title is longer than %d characters", MaxTitleRunes)
	}
	return t, nil
}

// SessionPatch is the input of UpdateSession; nil fields stay unchanged.
type SessionPatch struct {
	Title *string
	Model *string
	// Organising sessions: ProjectID "" takes the session out of its
	// project.
	Pinned    *bool
	Archived  *bool
	ProjectID *string
	// ProfileID (h16-profiles): "" leaves the session without a profile.
	ProfileID *string
}

// UpdateSession renames a session or changes its model.
func (s *Service) UpdateSession(ctx context.Context, sessionID string, p SessionPatch) (store.Session, error) {
	var out store.Session
	if p.Title != nil {
		t, err := cleanTitle(*p.Title)
		if err != nil {
			return out, err
		}
		p.Title = &t
	}
	err := s.w.Do(ctx, func(tx store.Tx) error {
		sess, err := tx.GetSession(ctx, sessionID)
		if err != nil {
			return err
		}
		// The event names only what changed; a patch that changes nothing
		// still moves updated_at, so it is announced too and every tab
		// sorts the list the way a reload would.
		ev := event.SessionUpdatedPayload{ID: sessionID}
		if p.Title != nil && *p.Title != sess.Title {
			sess.Title = *p.Title
			ev.Title = &sess.Title
		}
		if p.Model != nil {
			if m := strings.TrimSpace(*p.Model); m != sess.Model {
				sess.Model = m
				ev.Model = &sess.Model
			}
		}
		now := time.Now().UTC()
		if err := organise(ctx, tx, &sess, &ev, p, now); err != nil {
			return err
		}
		if p.ProfileID != nil && strings.TrimSpace(*p.ProfileID) != sess.ProfileID {
			pid := strings.TrimSpace(*p.ProfileID)
			if err := checkProfileRef(ctx, tx, pid); err != nil {
				return err
			}
			sess.ProfileID = pid
			ev.ProfileID = &sess.ProfileID
		}
		// Pinning, archiving or filing a session is no activity in it: the
		// date groups of the sidebar and the list's order stay.
		if !onlyOrganises(p) {
			sess.UpdatedAt = now
		}
		ev.UpdatedAt = event.Time{Time: sess.UpdatedAt}
		out = sess
		if err := tx.UpdateSession(ctx, sess); err != nil {
			return err
		}
		_, err = tx.AppendEvents(ctx, "", event.Draft{SessionID: sessionID, Type: event.SessionUpdated, Payload: ev})
		return err
	})
	return out, err
}

// DeleteSession deletes a session and its journal but for the
// session.deleted event that announces it. A session with a busy run is
// refused: cancel the run first, so no runner writes into a void.
func (s *Service) DeleteSession(ctx context.Context, sessionID string) error {
	return s.w.Do(ctx, func(tx store.Tx) error {
		runs, err := tx.SessionRuns(ctx, sessionID)
		if err != nil {
			return err
		}
		if _, err := tx.GetSession(ctx, sessionID); err != nil {
			return err
		}
		for _, r := range runs {
			if r.Status.Busy() {
				return &Error{Code: CodeSessionBusy, Message: "the session has a run in progress; cancel it first",
					Details: map[string]any{"run_id": r.ID, "status": r.Status}}
			}
		}
		// The announcement first: its seq comes from the session's row.
		if _, err := tx.AppendEvents(ctx, "", event.Draft{SessionID: sessionID, Type: event.SessionDeleted,
			Payload: event.SessionDeletedPayload{ID: sessionID}}); err != nil {
			return err
		}
		return tx.DeleteSession(ctx, sessionID)
	})
}

// Message is the input of Send.
type Message struct {
	Content string
	IfBusy  string
	Model   string
	// TraceParent is the W3C trace context of the request that sends the
	// message ("" when not traced); run.queued keeps it.
	TraceParent string
	// By is who sends it; run.queued and message.user record it, and so
	// does the cancel of a run it interrupts. nil: nobody in particular.
	By *event.Actor
	// Attachments are files already saved in the session's workspace and
	// checked by the caller (the API); message.user records them.
	Attachments []event.Attachment
	// ExpiresIn (h17-expiry) is how long the run may take from now before
	// it ends expired; 0: no deadline. Bounded by MinExpiry and MaxExpiry.
	ExpiresIn time.Duration
	// WebhookURL (h17-hooks) is told of the queued run's end; the caller
	// checked it. A steered message queues no run and keeps none.
	WebhookURL string
	// JobID (h17-jobs) is the scheduled job sending the message; run.queued
	// records it.
	JobID string
}

// MaxAttachments bounds the attachments of one message.
const MaxAttachments = 20

// Send starts a run for a user message, obeying IfBusy when the session
// already has a busy run.
func (s *Service) Send(ctx context.Context, sessionID string, m Message) (store.Run, error) {
	r, _, err := s.Deliver(ctx, sessionID, m)
	return r, err
}

// Deliver is Send that also reports whether the message was steered into
// the session's running run (if_busy "steer"; the run returned is that
// run) rather than queued as a run of its own.
func (s *Service) Deliver(ctx context.Context, sessionID string, m Message) (store.Run, bool, error) {
	var steered bool
	out, err := s.deliver(ctx, sessionID, m, &steered)
	return out, steered, err
}

// checkMessage refuses a message Send would refuse before reading
// anything, and fills IfBusy's default.
func checkMessage(m *Message) error {
	if strings.TrimSpace(m.Content) == "" && len(m.Attachments) == 0 {
		return errorf(CodeInvalidInput, "content must not be empty")
	}
	if len(m.Attachments) > MaxAttachments {
		return errorf(CodeInvalidInput, "a message carries at most %d attachments", MaxAttachments)
	}
	if len(m.Content) > MaxMessageBytes || !utf8.ValidString(m.Content) {
		return errorf(CodeInvalidInput, "content must be UTF-8 text of at most %d bytes", MaxMessageBytes)
	}
	if err := checkExpiresIn(m.ExpiresIn); err != nil {
		return err
	}
	switch m.IfBusy {
	case "":
		m.IfBusy = IfBusyEnqueue
	case IfBusyEnqueue, IfBusyInterrupt, IfBusyReject:
	case IfBusySteer:
		if len(m.Attachments) > 0 {
			return errorf(CodeInvalidInput, "a steer carries text only; send attachments as a message")
		}
	default:
		return errorf(CodeInvalidInput, "if_busy must be one of enqueue, interrupt, reject, steer")
	}
	return nil
}

func (s *Service) deliver(ctx context.Context, sessionID string, m Message, steered *bool) (store.Run, error) {
	if err := checkMessage(&m); err != nil {
		return store.Run{}, err
	}
	var out store.Run
	err := s.w.Do(ctx, func(tx store.Tx) error {
		var err error
		out, err = s.deliverInTx(ctx, tx, sessionID, m, steered)
		return err
	})
	return out, err
}

// SendInTx is Send in the caller's transaction (h17-jobs: a scheduled
// job's claim and the run it queues commit together).
func (s *Service) SendInTx(ctx context.Context, tx store.Tx, sessionID string, m Message) (store.Run, error) {
	if err := checkMessage(&m); err != nil {
		return store.Run{}, err
	}
	var steered bool
	return s.deliverInTx(ctx, tx, sessionID, m, &steered)
}

func (s *Service) deliverInTx(ctx context.Context, tx store.Tx, sessionID string, m Message, steered *bool) (store.Run, error) {
	sess, err := tx.GetSession(ctx, sessionID)
	if err != nil {
		return store.Run{}, err
	}
	runs, err := tx.SessionRuns(ctx, sessionID)
	if err != nil {
		return store.Run{}, err
	}
	now := time.Now().UTC()
	if m.IfBusy == IfBusySteer {
		if target, ok := steerTarget(runs); ok {
			if err := steerInTx(ctx, tx, target, m, now); err != nil {
				return store.Run{}, err
			}
			*steered = true
			return target, nil
		}
	}
	priority := 0
	for _, r := range runs {
		if !r.Status.Busy() {
			continue
		}
		switch m.IfBusy {
		case IfBusyReject:
			return store.Run{}, &Error{Code: CodeSessionBusy, Message: "the session has a run in progress",
				Details: map[string]any{"run_id": r.ID, "status": r.Status}}
		case IfBusyInterrupt:
			priority = 1
			if r.Status != run.Queued {
				if err := cancelInTx(ctx, tx, r, now, "interrupted by a new message", m.By); err != nil {
					return store.Run{}, err
				}
			}
		}
	}
	model := m.Model
	if model == "" {
		model = sess.Model
	}
	r := store.Run{ID: id.New("run"), SessionID: sessionID, Status: run.Queued, Input: m.Content,
		Model: model, Priority: priority, CreatedAt: now, MaxRetries: s.retryPolicy().Max, RetryBackoff: s.retryPolicy().Backoff}
	if m.ExpiresIn > 0 {
		r.ExpiresAt = now.Add(m.ExpiresIn)
	}
	if err := tx.InsertRun(ctx, r); err != nil {
		return store.Run{}, err
	}
	if m.WebhookURL != "" { // in the run's transaction: its end cannot come first
		if err := tx.PutRunWebhook(ctx, r.ID, m.WebhookURL); err != nil {
			return store.Run{}, err
		}
	}
	drafts := []event.Draft{
		{RunID: r.ID, SessionID: sessionID, Type: event.RunQueued, Payload: event.RunQueuedPayload{Input: m.Content, Model: model, IfBusy: m.IfBusy, TraceParent: m.TraceParent, By: m.By, JobID: m.JobID}},
		{RunID: r.ID, SessionID: sessionID, Type: event.MessageUser, Payload: event.MessageUserPayload{MessageID: id.New("msg"), Content: m.Content, By: m.By, Attachments: m.Attachments}},
	}
	if sess.Title == "" {
		sess.Title = titleFrom(m.Content)
		if sess.Title == "" && len(m.Attachments) > 0 {
			sess.Title = titleFrom(m.Attachments[0].Name)
		}
		drafts = append(drafts, event.Draft{RunID: r.ID, SessionID: sessionID, Type: event.TitleUpdated, Payload: event.TitlePayload{Title: sess.Title}})
	}
	if _, err := tx.AppendEvents(ctx, "", drafts...); err != nil {
		return store.Run{}, err
	}
	sess.UpdatedAt = now
	if err := tx.UpdateSession(ctx, sess); err != nil {
		return store.Run{}, err
	}
	return tx.GetRun(ctx, r.ID)
}

// RunKindCompact marks a run that only compacts the session's context.
const RunKindCompact = "compact"

// Compact queues a run that summarises the session's older turns for the
// model (the transcript people see keeps everything). A busy session is
// refused: compaction rewrites what the running turn is based on.
func (s *Service) Compact(ctx context.Context, sessionID string) (store.Run, error) {
	var out store.Run
	err := s.w.Do(ctx, func(tx store.Tx) error {
		sess, err := tx.GetSession(ctx, sessionID)
		if err != nil {
			return err
		}
		runs, err := tx.SessionRuns(ctx, sessionID)
		if err != nil {
			return err
		}
		for _, r := range runs {
			if r.Status.Busy() {
				return &Error{Code: CodeSessionBusy, Message: "the session has a run in progress; compact when it is idle",
					Details: map[string]any{"run_id": r.ID, "status": r.Status}}
			}
		}
		now := time.Now().UTC()
		r := store.Run{ID: id.New("run"), SessionID: sessionID, Status: run.Queued, Model: sess.Model, CreatedAt: now,
			MaxRetries: s.retryPolicy().Max, RetryBackoff: s.retryPolicy().Backoff}
		if err := tx.InsertRun(ctx, r); err != nil {
			return err
		}
		if _, err := tx.AppendEvents(ctx, "", event.Draft{RunID: r.ID, SessionID: sessionID, Type: event.RunQueued,
			Payload: event.RunQueuedPayload{Kind: RunKindCompact, Model: sess.Model}}); err != nil {
			return err
		}
		out, err = tx.GetRun(ctx, r.ID)
		return err
	})
	return out, err
}

// titleFrom makes a session title from the first message's first line.
func titleFrom(content string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(content), "\n")
	line = strings.TrimSpace(line)
	if utf8.RuneCountInString(line) > 60 {
		r := []rune(line)
		line = strings.TrimSpace(string(r[:60])) + "…"
	}
	return line
}

// Cancel asks a run to stop on behalf of by (nil: nobody in particular),
// whom the cancelling status and the terminal event record. It is
// idempotent: cancelling a finished or already-cancelling run changes
// nothing and returns its current state.
func (s *Service) Cancel(ctx context.Context, runID string, by *event.Actor) (store.Run, error) {
	var out store.Run
	err := s.w.Do(ctx, func(tx store.Tx) error {
		r, err := tx.GetRun(ctx, runID)
		if err != nil {
			return err
		}
		if err := cancelInTx(ctx, tx, r, time.Now().UTC(), "cancelled by request", by); err != nil {
			return err
		}
		out, err = tx.GetRun(ctx, runID)
		return err
	})
	return out, err
}

// CancelInTx cancels a run in the caller's transaction with reason
// (h17-jobs: a scheduled job's fire replacing its busy last run).
func CancelInTx(ctx context.Context, tx store.Tx, runID, reason string) error {
	r, err := tx.GetRun(ctx, runID)
	if err != nil {
		return err
	}
	return cancelInTx(ctx, tx, r, time.Now().UTC(), reason, nil)
}

// cancelInTx records a cancel intent. A run no live runner holds is finished
// here and now; a held run moves to cancelling and its runner stops it.
func cancelInTx(ctx context.Context, tx store.Tx, r store.Run, now time.Time, reason string, by *event.Actor) error {
	if r.Status.Terminal() || r.Status == run.Cancelling {
		return nil
	}
	if err := cancelChildren(ctx, tx, r, now, by); err != nil {
		return err
	}
	if err := tx.InsertControl(ctx, store.Control{ID: id.New("ctl"), RunID: r.ID, Kind: "cancel", CreatedAt: now}); err != nil {
		return err
	}
	if r.Status.Owned() && r.LeaseExpiresAt.After(now) {
		r.Status = run.Cancelling
		if err := tx.UpdateRun(ctx, r, run.Running, run.AwaitingApproval, run.AwaitingClarify); err != nil {
			return err
		}
		_, err := tx.AppendEvents(ctx, "", event.Draft{RunID: r.ID, SessionID: r.SessionID, Type: event.RunStatus,
			Payload: event.RunStatusPayload{Status: string(run.Cancelling), Reason: reason, By: by}})
		return err
	}
	return finishInTx(ctx, tx, r.ID, "", Outcome{Status: run.Cancelled, By: by}, now)
}

// cancelChildren cancels the busy runs of the sessions r delegated to
// (h18-delegate), in r's cancel's transaction. The delegate call of a held
// parent cancels them too when it stops, but a parent nobody holds (its
// runner died: interrupted, recovering) is finished right here, and no
// delegate call would run again to do it. Children never delegate, so this
// goes one level deep.
func cancelChildren(ctx context.Context, tx store.Tx, r store.Run, now time.Time, by *event.Actor) error {
	kids, err := tx.DelegatedSessions(ctx, r.ID)
	if err != nil {
		return err
	}
	for _, k := range kids {
		runs, err := tx.SessionRuns(ctx, k.ID)
		if err != nil {
			return err
		}
		for _, cr := range runs {
			if cr.Status.Busy() {
				if err := cancelInTx(ctx, tx, cr, now, "its parent run was cancelled", by); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Response is the input of Respond.
type Response struct {
	Choice string
	Answer string
	// Note goes with a deny: what to do instead. The model receives it
	// as the tool call's result.
	Note string
	// By is who answers; approval.resolved or clarify.resolved records
	// it. nil: nobody in particular.
	By *event.Actor
}

// Approval choices (seed 001).
const (
	ChoiceOnce    = "once"
	ChoiceSession = "session"
	ChoiceAlways  = "always"
	ChoiceDeny    = "deny"
)

// ApprovalChoices lists the choices of every approval request.
func ApprovalChoices() []string { return []string{ChoiceOnce, ChoiceSession, ChoiceAlways, ChoiceDeny} }

// Respond answers a pending human request. The first response wins; later
// ones get not_pending and change nothing.
func (s *Service) Respond(ctx context.Context, requestID string, resp Response) (store.Request, error) {
	var out store.Request
	err := s.w.Do(ctx, func(tx store.Tx) error {
		q, err := tx.GetRequest(ctx, requestID)
		if err != nil {
			return err
		}
		if q.Status != store.RequestPending {
			return &Error{Code: CodeNotPending, Message: "the request is no longer pending",
				Details: map[string]any{"status": q.Status}}
		}
		if ru, err := tx.GetRun(ctx, q.RunID); err != nil {
			return err
		} else if ru.Status == run.Cancelling || ru.Status.Terminal() {
			return &Error{Code: CodeNotPending, Message: "the run is being cancelled; the request no longer takes answers",
				Details: map[string]any{"status": q.Status, "run_status": ru.Status}}
		}
		value, err := validateResponse(q, resp)
		if err != nil {
			return err
		}
		note, err := validateNote(q, value, resp.Note)
		if err != nil {
			return err
		}
		now := time.Now().UTC()
		if err := resolveWithNote(ctx, tx, q, store.RequestResolved, value, note, now, resp.By); err != nil {
			return err
		}
		if q.Kind == store.KindApproval && (value == ChoiceSession || value == ChoiceAlways) {
			if err := rememberRule(ctx, tx, q, value, now, resp.By); err != nil {
				return err
			}
		}
		out, err = tx.GetRequest(ctx, requestID)
		return err
	})
	if errors.Is(err, store.ErrConflict) {
		return out, &Error{Code: CodeNotPending, Message: "the request is no longer pending"}
	}
	return out, err
}

func validateResponse(q store.Request, resp Response) (string, error) {
	if q.Kind == store.KindApproval {
		// The request offers its own choices: a dangerous command cannot be
		// remembered, so it offers no session or always.
		choices := ApprovalChoices()
		var p event.ApprovalRequestedPayload
		if json.Unmarshal(q.Prompt, &p) == nil && len(p.Choices) > 0 {
			choices = p.Choices
		}
		for _, c := range choices {
			if resp.Choice == c {
				return c, nil
			}
		}
		return "", &Error{Code: CodeInvalidChoice, Message: "choice must be one of " + strings.Join(choices, ", "),
			Details: map[string]any{"choices": choices}}
	}
	answer := strings.TrimSpace(resp.Answer)
	if answer == "" {
		answer = strings.TrimSpace(resp.Choice)
	}
	if answer == "" {
		return "", errorf(CodeInvalidInput, "answer must not be empty")
	}
	if len(answer) > MaxMessageBytes || !utf8.ValidString(answer) {
		return "", errorf(CodeInvalidInput, "answer must be UTF-8 text of at most %d bytes", MaxMessageBytes)
	}
	return answer, nil
}

// resolveInTx closes a pending request and journals its resolution.
func resolveInTx(ctx context.Context, tx store.Tx, q store.Request, status, value string, now time.Time, by *event.Actor) error {
	return resolveWithNote(ctx, tx, q, status, value, "", now, by)
}

// resolveWithNote is resolveInTx with a deny's note, which only the
// journal keeps (the request row keeps the choice).
func resolveWithNote(ctx context.Context, tx store.Tx, q store.Request, status, value, note string, now time.Time, by *event.Actor) error {
	if err := tx.ResolveRequest(ctx, q.ID, status, value, now); err != nil {
		return err
	}
	typ, p := event.ClarifyResolved, event.ResolvedPayload{RequestID: q.ID, Status: status, By: by, Note: note}
	if q.Kind == store.KindApproval {
		typ, p.Choice = event.ApprovalResolved, value
	} else {
		p.Answer = value
	}
	_, err := tx.AppendEvents(ctx, "", event.Draft{RunID: q.RunID, SessionID: q.SessionID, Type: typ, Payload: p})
	return err
}

func rememberRule(ctx context.Context, tx store.Tx, q store.Request, choice string, now time.Time, by *event.Actor) error {
	var p event.ApprovalRequestedPayload
	if err := json.Unmarshal(q.Prompt, &p); err != nil {
		return fmt.Errorf("request %s prompt: %w", q.ID, err)
	}
	pattern := p.Pattern
	if pattern == "" {
		pattern = p.Action
	}
	r := store.Rule{ID: id.New("rul"), Tool: p.Tool, Pattern: pattern, Scope: choice, CreatedAt: now, CreatedBy: by, RequestID: q.ID}
	if choice == ChoiceSession {
		r.SessionID = q.SessionID
	}
	return tx.InsertRule(ctx, r)
}

// NewRule is the input of CreateRule.
type NewRule struct {
	Tool      string
	Pattern   string
	SessionID string       // set: the rule holds for this session only
	By        *event.Actor // who creates it (h16-policy)
}

// CreateRule remembers an approval ahead of time, as an "always" answer
// (or a "session" one when SessionID is set) would. Patterns use
// policy.Match syntax: `*` matches any run of characters.
func (s *Service) CreateRule(ctx context.Context, in NewRule) (store.Rule, error) {
	in.Tool, in.Pattern = strings.TrimSpace(in.Tool), strings.TrimSpace(in.Pattern)
	if in.Tool == "" || len(in.Tool) > 64 {
		return store.Rule{}, errorf(CodeInvalidInput, "tool must name a tool")
	}
	if in.Pattern == "" || len(in.Pattern) > 4096 || !utf8.ValidString(in.Pattern) || strings.Trim(in.Pattern, "* ") == "" {
		return store.Rule{}, errorf(CodeInvalidInput, "pattern must be UTF-8 text of at most 4096 bytes and more than wildcards")
	}
	r := store.Rule{ID: id.New("rul"), Tool: in.Tool, Pattern: in.Pattern, Scope: ChoiceAlways, CreatedAt: time.Now().UTC(), CreatedBy: in.By}
	err := s.w.Do(ctx, func(tx store.Tx) error {
		if in.SessionID != "" {
			if _, err := tx.GetSession(ctx, in.SessionID); err != nil {
				return err
			}
			r.Scope, r.SessionID = ChoiceSession, in.SessionID
		}
		return tx.InsertRule(ctx, r)
	})
	return r, err
}

// DeleteRule removes a remembered approval.
func (s *Service) DeleteRule(ctx context.Context, ruleID string) error {
	return s.w.Do(ctx, func(tx store.Tx) error { return tx.DeleteRule(ctx, ruleID) })
}
