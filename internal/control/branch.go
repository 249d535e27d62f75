package control

import (
	"context"
	"time"
	"unicode/utf8"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// Branch makes a new session whose history is parent's up to and
// including the event at (a run event of parent's history: the caller
// finds it from a transcript item). The new session references that
// history instead of copying it (store.SessionHistory), so branching is
// one row and one session.created event whatever parent's length; the
// parent is not touched. The branch keeps parent's workspace and model.
func (s *Service) Branch(ctx context.Context, parent store.Session, at int64) (store.Session, error) {
	if at <= 0 {
		return store.Session{}, errorf(CodeInvalidInput, "branch point must be an event of the session")
	}
	title := parent.Title
	if title == "" {
		title = "Untitled"
	}
	title = "Branch of " + title
	if utf8.RuneCountInString(title) > MaxTitleRunes {
		title = string([]rune(title)[:MaxTitleRunes])
	}
	now := time.Now().UTC()
	sess := store.Session{ID: id.New("ses"), Title: title, Workspace: parent.Workspace, Model: parent.Model,
		CreatedAt: now, UpdatedAt: now, ParentSessionID: parent.ID, BranchedFromEventID: at}
	err := s.w.Do(ctx, func(tx store.Tx) error {
		// The parent may have been deleted since the caller read it.
		if _, err := tx.GetSession(ctx, parent.ID); err != nil {
			return err
		}
		if err := tx.InsertSession(ctx, sess); err != nil {
			return err
		}
		_, err := tx.AppendEvents(ctx, "", event.Draft{SessionID: sess.ID, Type: event.SessionCreated,
			Payload: event.SessionCreatedPayload{Session: SessionInfo(sess)}})
		return err
	})
	return sess, err
}
