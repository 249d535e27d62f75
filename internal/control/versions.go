package control

import (
	"context"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/transcript"
)

// Versions of a conversation (issue 15): retry, edit, continue, switching
// versions, undo and restore. None rewrites the journal: a retry or an edit
// is a new run hanging beside the one it redoes (run.queued's version_of),
// a continue is a new run after a cut answer, and the rest move the
// conversation's end (version.selected). transcript.Versions folds them.

// Codes of the versions intents.
const (
	// CodeNotRetryable: the run has no message of a person to answer again.
	CodeNotRetryable = "not_retryable"
	// CodeNothingToUndo, CodeNothingToRestore, CodeNothingToContinue: the
	// conversation has no such turns, no undo to take back (or a message
	// was sent after it), or does not end with an answer to go on from.
	CodeNothingToUndo     = "nothing_to_undo"
	CodeNothingToRestore  = "nothing_to_restore"
	CodeNothingToContinue = "nothing_to_continue"
)

// RunKindContinue marks a run that goes on from the answer before it.
const RunKindContinue = "continue"

// versionsView is what every versions intent reads first, in its
// transaction: the session, its events folded into the tree, and a refusal
// when a run is in progress (a running turn's history must not move).
type versionsView struct {
	sess store.Session
	evs  []event.Event
	tree *transcript.Tree
}

func (s *Service) versionsView(ctx context.Context, tx store.Tx, sessionID string) (versionsView, error) {
	sess, err := tx.GetSession(ctx, sessionID)
	if err != nil {
		return versionsView{}, err
	}
	runs, err := tx.SessionRuns(ctx, sessionID)
	if err != nil {
		return versionsView{}, err
	}
	for _, r := range runs {
		if r.Status.Busy() {
			return versionsView{}, &Error{Code: CodeSessionBusy, Message: "the session has a run in progress; stop it or wait",
				Details: map[string]any{"run_id": r.ID, "status": r.Status}}
		}
	}
	evs, err := tx.Events(ctx, store.EventQuery{SessionID: sessionID, NotTypes: []event.Type{event.MessageDelta, event.ReasoningDelta}})
	if err != nil {
		return versionsView{}, err
	}
	return versionsView{sess: sess, evs: evs, tree: transcript.Versions(evs)}, nil
}

// userMessage returns the person's message that started run, if any.
func (v versionsView) userMessage(runID string) (event.MessageUserPayload, bool) {
	for _, e := range v.evs {
		if e.RunID == runID && e.Type == event.MessageUser {
			var p event.MessageUserPayload
			if json.Unmarshal(e.Payload, &p) == nil {
				return p, true
			}
		}
	}
	return event.MessageUserPayload{}, false
}

// withdrawn reports a run cancelled before any runner took it (a queued
// message the person removed): it shows nothing, so it is no turn to undo.
func (v versionsView) withdrawn(runID string) bool {
	started, cancelled := false, false
	for _, e := range v.evs {
		if e.RunID != runID {
			continue
		}
		switch e.Type {
		case event.RunStarted:
			started = true
		case event.RunDone:
			var p event.RunDonePayload
			cancelled = json.Unmarshal(e.Payload, &p) == nil && p.Status == "cancelled"
		}
	}
	return cancelled && !started
}

// queue inserts a run and its run.queued (and message.user, when m is set).
func (s *Service) queue(ctx context.Context, tx store.Tx, v versionsView, q event.RunQueuedPayload, m *event.MessageUserPayload) (store.Run, error) {
	if q.Model == "" {
		q.Model = v.sess.Model
	}
	now, retry := time.Now().UTC(), s.retryPolicy()
	r := store.Run{ID: id.New("run"), SessionID: v.sess.ID, Status: run.Queued, Input: q.Input, Model: q.Model, CreatedAt: now,
		MaxRetries: retry.Max, RetryBackoff: retry.Backoff}
	if err := tx.InsertRun(ctx, r); err != nil {
		return store.Run{}, err
	}
	drafts := []event.Draft{{RunID: r.ID, SessionID: v.sess.ID, Type: event.RunQueued, Payload: q}}
	if m != nil {
		drafts = append(drafts, event.Draft{RunID: r.ID, SessionID: v.sess.ID, Type: event.MessageUser, Payload: *m})
	}
	if _, err := tx.AppendEvents(ctx, "", drafts...); err != nil {
		return store.Run{}, err
	}
	v.sess.UpdatedAt = now
	if err := tx.UpdateSession(ctx, v.sess); err != nil {
		return store.Run{}, err
	}
	return tx.GetRun(ctx, r.ID)
}

// Retry answers runID's message again, with model ("" : the run's own
// model), as a new version beside it. Any finished run with a person's
// message can be retried: completed, failed, stopped or interrupted.
func (s *Service) Retry(ctx context.Context, runID, model string, by *event.Actor) (store.Run, error) {
	var out store.Run
	err := s.w.Do(ctx, func(tx store.Tx) error {
		old, err := tx.GetRun(ctx, runID)
		if err != nil {
			return err
		}
		v, err := s.versionsView(ctx, tx, old.SessionID)
		if err != nil {
			return err
		}
		msg, ok := v.userMessage(runID)
		if !ok {
			return &Error{Code: CodeNotRetryable, Message: "this run answers no message of a person (a compaction or a continue); retry the run whose message it follows",
				Details: map[string]any{"run_id": runID}}
		}
		if model == "" {
			model = old.Model
		}
		msg.MessageID, msg.By = id.New("msg"), by
		out, err = s.queue(ctx, tx, v, event.RunQueuedPayload{Input: msg.Content, Model: model, By: by, VersionOf: runID}, &msg)
		return err
	})
	return out, err
}

// Edit sends content in place of the person's message itemID (a
// message.user's message_id) as a new version beside its run: the new
// branch has the conversation before that message, then the edited one.
func (s *Service) Edit(ctx context.Context, sessionID, itemID, content string, by *event.Actor) (store.Run, error) {
	if strings.TrimSpace(content) == "" {
		return store.Run{}, errorf(CodeInvalidInput, "content must not be empty")
	}
	if len(content) > MaxMessageBytes || !utf8.ValidString(content) {
		return store.Run{}, errorf(CodeInvalidInput, "content must be UTF-8 text of at most %d bytes", MaxMessageBytes)
	}
	var out store.Run
	err := s.w.Do(ctx, func(tx store.Tx) error {
		v, err := s.versionsView(ctx, tx, sessionID)
		if err != nil {
			return err
		}
		var runID string
		var msg event.MessageUserPayload
		for _, e := range v.evs {
			var p event.MessageUserPayload
			if e.Type == event.MessageUser && json.Unmarshal(e.Payload, &p) == nil && p.MessageID == itemID {
				runID, msg = e.RunID, p
			}
		}
		if runID == "" {
			return &Error{Code: CodeNotFound, Message: "no message of a person with this item_id in the session", Details: map[string]any{"item_id": itemID}}
		}
		old, err := tx.GetRun(ctx, runID)
		if err != nil {
			return err
		}
		m := event.MessageUserPayload{MessageID: id.New("msg"), Content: content, By: by, Attachments: msg.Attachments}
		out, err = s.queue(ctx, tx, v, event.RunQueuedPayload{Input: content, Model: old.Model, By: by, VersionOf: runID}, &m)
		return err
	})
	return out, err
}

// Continue queues a run that goes on from runID's answer, which must end
// the conversation: the model gets the cut answer as the assistant's last
// message.
func (s *Service) Continue(ctx context.Context, runID string, by *event.Actor) (store.Run, error) {
	var out store.Run
	err := s.w.Do(ctx, func(tx store.Tx) error {
		old, err := tx.GetRun(ctx, runID)
		if err != nil {
			return err
		}
		v, err := s.versionsView(ctx, tx, old.SessionID)
		if err != nil {
			return err
		}
		if v.tree.Leaf != runID {
			return &Error{Code: CodeNothingToContinue, Message: "only the answer that ends the conversation on screen can be continued",
				Details: map[string]any{"run_id": runID, "end_run_id": v.tree.Leaf}}
		}
		items := transcript.FoldRuns(v.evs, v.tree.Path(runID), runID)
		last := -1
		for i, it := range items {
			if it.Kind != transcript.KindRunEnd && it.Kind != transcript.KindNotice {
				last = i
			}
		}
		if last < 0 || items[last].Kind != transcript.KindAssistant || items[last].Text == "" {
			return &Error{Code: CodeNothingToContinue, Message: "the conversation does not end with an answer to go on from", Details: map[string]any{"run_id": runID}}
		}
		// Its input names what it does, so lists and the activity tree (which
		// take a run without input for a compaction) label it truly.
		out, err = s.queue(ctx, tx, v, event.RunQueuedPayload{Kind: RunKindContinue, Input: "/continue", Model: old.Model, By: by}, nil)
		return err
	})
	return out, err
}

// SelectVersion shows version (from 1) of the run behind itemID (any item
// of the conversation; usually the person's message showing "2 / 3"),
// where that branch was left.
func (s *Service) SelectVersion(ctx context.Context, sessionID, itemID string, version int, by *event.Actor) (string, error) {
	var leaf string
	err := s.w.Do(ctx, func(tx store.Tx) error {
		v, err := s.versionsView(ctx, tx, sessionID)
		if err != nil {
			return err
		}
		runID := itemRun(v.evs, itemID)
		if runID == "" || !v.tree.Has(runID) {
			return &Error{Code: CodeNotFound, Message: "no item with this item_id in the session", Details: map[string]any{"item_id": itemID}}
		}
		sib := v.tree.Siblings(runID)
		if version < 1 || version > len(sib) {
			return &Error{Code: CodeInvalidInput, Message: "version must be between 1 and the number of versions",
				Details: map[string]any{"versions": len(sib)}}
		}
		leaf = v.tree.EndBelow(sib[version-1])
		return s.selectLeaf(ctx, tx, sessionID, event.VersionSelectedPayload{Leaf: leaf, Cause: "select", From: v.tree.Leaf, By: by})
	})
	return leaf, err
}

// Undo takes the last turns (runs answering a person's message, with what
// followed them) out of the conversation. They stay in the journal and
// come back with Restore, or as another version once a message is sent.
func (s *Service) Undo(ctx context.Context, sessionID string, turns int, by *event.Actor) (string, error) {
	if turns < 1 || turns > 1000 {
		return "", errorf(CodeInvalidInput, "turns must be between 1 and 1000")
	}
	var leaf string
	err := s.w.Do(ctx, func(tx store.Tx) error {
		v, err := s.versionsView(ctx, tx, sessionID)
		if err != nil {
			return err
		}
		path := v.tree.Path(v.tree.Leaf)
		n, cut := 0, -1
		for i := len(path) - 1; i >= 0 && n < turns; i-- {
			if _, ok := v.userMessage(path[i]); ok && !v.withdrawn(path[i]) {
				n, cut = n+1, i
			}
		}
		if n < turns {
			return &Error{Code: CodeNothingToUndo, Message: "the conversation has fewer turns than that", Details: map[string]any{"turns": n}}
		}
		leaf = v.tree.Parent(path[cut])
		return s.selectLeaf(ctx, tx, sessionID, event.VersionSelectedPayload{Leaf: leaf, Cause: "undo", From: v.tree.Leaf, Turns: turns, By: by})
	})
	return leaf, err
}

// Restore takes back the last undo, while nothing was sent after it.
func (s *Service) Restore(ctx context.Context, sessionID string, by *event.Actor) (string, error) {
	var leaf string
	err := s.w.Do(ctx, func(tx store.Tx) error {
		v, err := s.versionsView(ctx, tx, sessionID)
		if err != nil {
			return err
		}
		u := v.tree.LastUndo
		if u == nil {
			return &Error{Code: CodeNothingToRestore, Message: "there is no undo to take back (or something happened after it); undone turns stay one version away"}
		}
		leaf = u.From
		return s.selectLeaf(ctx, tx, sessionID, event.VersionSelectedPayload{Leaf: leaf, Cause: "restore", From: v.tree.Leaf, Turns: u.Turns, By: by})
	})
	return leaf, err
}

func (s *Service) selectLeaf(ctx context.Context, tx store.Tx, sessionID string, p event.VersionSelectedPayload) error {
	_, err := tx.AppendEvents(ctx, "", event.Draft{SessionID: sessionID, Type: event.VersionSelected, Payload: p})
	return err
}

// itemRun returns the run of a transcript item by its id: a message id,
// a text or reasoning segment, a tool call, or a run id itself.
func itemRun(evs []event.Event, itemID string) string {
	if itemID == "" {
		return ""
	}
	for _, e := range evs {
		if e.RunID == itemID {
			return e.RunID
		}
		var p struct {
			MessageID  string `json:"message_id"`
			ID         string `json:"id"`
			ToolCallID string `json:"tool_call_id"`
		}
		switch e.Type {
		case event.MessageUser, event.MessageDone, event.ReasoningDone, event.ToolStarted:
			if json.Unmarshal(e.Payload, &p) == nil && (p.MessageID == itemID || p.ID == itemID || p.ToolCallID == itemID) {
				return e.RunID
			}
		}
	}
	return ""
}
