package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/transcript"
)

// Export format of a session as JSON. The version changes when an older
// importer could not read what a newer exporter writes.
const (
	exportFormat  = "caduceus.session"
	exportVersion = 1
	// MaxImportBytes caps POST /api/sessions/import, the one JSON route
	// allowed more than the guard's cap: a long session's journal.
	MaxImportBytes = 64 << 20
	importPattern  = "POST /api/sessions/import"
)

// sessionExport is the JSON export: the session, and its whole history
// (a branch's inherited part included, so the file stands alone) run by
// run, each run with its journaled events in order.
type sessionExport struct {
	Format     string       `json:"format"`
	Version    int          `json:"version"`
	ExportedAt event.Time   `json:"exported_at"`
	Session    exportedSess `json:"session"`
	Runs       []exportRun  `json:"runs"`
}

type exportedSess struct {
	ID                  string     `json:"id"`
	Title               string     `json:"title"`
	Workspace           string     `json:"workspace"`
	Model               string     `json:"model"`
	CreatedAt           event.Time `json:"created_at"`
	ParentSessionID     string     `json:"parent_session_id,omitempty"`
	BranchedFromEventID int64      `json:"branched_from_event_id,omitempty"`
}

type exportRun struct {
	ID        string            `json:"id"`
	Status    run.Status        `json:"status"`
	Input     string            `json:"input"`
	Model     string            `json:"model"`
	Usage     event.UsageTotals `json:"usage"`
	CreatedAt event.Time        `json:"created_at"`
	Events    []exportEvent     `json:"events"`
}

type exportEvent struct {
	ID      int64           `json:"id"`
	Seq     int64           `json:"seq"`
	Type    event.Type      `json:"type"`
	TS      event.Time      `json:"ts"`
	Payload json.RawMessage `json:"payload"`
}

func (a *API) exportSession(w http.ResponseWriter, r *http.Request) {
	sid, ok := pathID(w, r, "ses", "session")
	if !ok {
		return
	}
	format := r.URL.Query().Get("format")
	if format == "" {
		format = "json"
	}
	if format != "json" && format != "md" {
		writeError(w, http.StatusBadRequest, control.CodeInvalidInput, "format must be md or json", map[string]any{"format": format})
		return
	}
	ses, err := a.st.GetSession(r.Context(), sid)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	name := exportName(ses)
	if format == "md" {
		items, err := a.sessionItems(r.Context(), ses)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`.md"`)
		_, _ = w.Write(markdownTranscript(ses, items))
		return
	}
	out, err := a.exportJSON(r, ses)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`.json"`)
	writeJSON(w, http.StatusOK, out)
}

func (a *API) exportJSON(r *http.Request, ses store.Session) (sessionExport, error) {
	evs, runIDs, err := store.SessionHistory(r.Context(), a.st, ses.ID)
	if err != nil {
		return sessionExport{}, err
	}
	out := sessionExport{Format: exportFormat, Version: exportVersion, ExportedAt: event.Time{Time: time.Now().UTC()},
		Session: exportedSess{ID: ses.ID, Title: ses.Title, Workspace: ses.Workspace, Model: ses.Model,
			CreatedAt: event.Time{Time: ses.CreatedAt}, ParentSessionID: ses.ParentSessionID, BranchedFromEventID: ses.BranchedFromEventID},
		Runs: make([]exportRun, 0, len(runIDs))}
	at := make(map[string]int, len(runIDs))
	for _, id := range runIDs {
		ru, err := a.st.GetRun(r.Context(), id)
		if err != nil {
			return sessionExport{}, err
		}
		at[id] = len(out.Runs)
		out.Runs = append(out.Runs, exportRun{ID: ru.ID, Status: ru.Status, Input: ru.Input, Model: ru.Model, Usage: ru.Usage,
			CreatedAt: event.Time{Time: ru.CreatedAt}, Events: []exportEvent{}})
	}
	for _, e := range evs {
		i, ok := at[e.RunID]
		if !ok {
			continue // the session's own lifecycle events: an import makes its own
		}
		out.Runs[i].Events = append(out.Runs[i].Events, exportEvent{ID: e.ID, Seq: e.Seq, Type: e.Type, TS: e.TS, Payload: e.Payload})
	}
	return out, nil
}

// exportName is a file name for the session: its title's letters and
// digits, else its id.
func exportName(s store.Session) string {
	var b strings.Builder
	for _, c := range s.Title {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
			b.WriteRune(c)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
		if b.Len() >= 60 {
			break
		}
	}
	if n := strings.Trim(b.String(), "-"); n != "" {
		return n
	}
	return s.ID
}

// markdownTranscript is the session for people to read: the title, each
// message, and each tool call in a line.
func markdownTranscript(s store.Session, items []transcript.Item) []byte {
	var b bytes.Buffer
	title := s.Title
	if title == "" {
		title = "New session"
	}
	fmt.Fprintf(&b, "# %s\n\n", title)
	fmt.Fprintf(&b, "_Exported from Caduceus · session %s · created %s_\n", s.ID, s.CreatedAt.UTC().Format(time.RFC3339))
	for _, it := range items {
		switch it.Kind {
		case transcript.KindUser:
			who := "You"
			if it.By != "" {
				who = it.By
			}
			fmt.Fprintf(&b, "\n## %s\n\n%s\n", who, it.Text)
		case transcript.KindAssistant:
			if it.Superseded || it.Text == "" {
				continue
			}
			fmt.Fprintf(&b, "\n## Assistant\n\n%s\n", it.Text)
		case transcript.KindTool:
			if it.Tool == nil {
				continue
			}
			label := it.Tool.Label
			if label == "" {
				label = it.Tool.Name
			}
			fmt.Fprintf(&b, "\n> Tool `%s`: %s — %s\n", it.Tool.Name, strings.ReplaceAll(label, "\n", " "), it.Tool.Status)
		case transcript.KindRunEnd:
			fmt.Fprintf(&b, "\n_Run %s_\n", it.Status)
		case transcript.KindCompaction:
			b.WriteString("\n_Older messages were summarised for the model here._\n")
		}
	}
	return b.Bytes()
}

// importSession makes a new session from a JSON export. Bad input writes
// nothing.
func (a *API) importSession(w http.ResponseWriter, r *http.Request) {
	var in sessionExport
	if !decode(w, r, &in) {
		return
	}
	switch {
	case in.Format != exportFormat:
		writeError(w, http.StatusBadRequest, control.CodeInvalidInput, "not a Caduceus session export (format must be "+exportFormat+")", map[string]any{"format": in.Format})
		return
	case in.Version != exportVersion:
		writeError(w, http.StatusBadRequest, CodeUnsupportedVersion, fmt.Sprintf("export version %d is not supported (this server reads %d)", in.Version, exportVersion),
			map[string]any{"version": in.Version, "supported": []int{exportVersion}})
		return
	}
	ni := control.NewImport{Title: in.Session.Title, Workspace: in.Session.Workspace, Model: in.Session.Model}
	for _, ru := range in.Runs {
		ir := control.ImportRun{Status: ru.Status, Input: ru.Input, Model: ru.Model, Usage: ru.Usage}
		for _, e := range ru.Events {
			ir.Events = append(ir.Events, control.ImportEvent{Type: e.Type, Payload: e.Payload})
		}
		ni.Runs = append(ni.Runs, ir)
	}
	ses, err := a.svc.ImportSession(r.Context(), ni)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	v, err := a.sessionView(r, ses.ID)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, v)
}

// CodeUnsupportedVersion: an import of an export version this server
// cannot read.
const CodeUnsupportedVersion = "unsupported_version"
