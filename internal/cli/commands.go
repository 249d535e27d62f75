package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"
)

// sessionsCommand lists the newest sessions.
func sessionsCommand(ctx context.Context, args []string, io IO) int {
	var f common
	fs := newFlags("sessions", io, &f)
	pos, err := parse(fs, args)
	if err != nil {
		return usageError(io, err)
	}
	if len(pos) > 0 {
		return usageError(io, fmt.Errorf("sessions: unexpected argument %q", pos[0]))
	}
	c, err := f.client(io)
	if err != nil {
		return usageError(io, err)
	}
	var raw json.RawMessage
	if err := c.do(ctx, "GET", "/api/sessions", nil, &raw); err != nil {
		return fail(io, err)
	}
	if f.json {
		fmt.Fprintf(io.Stdout, "%s\n", raw)
		return ExitOK
	}
	var list struct {
		Sessions []struct {
			ID        string `json:"id"`
			Title     string `json:"title"`
			Status    string `json:"status"`
			UpdatedAt string `json:"updated_at"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return fail(io, fmt.Errorf("decode the sessions: %w", err))
	}
	if len(list.Sessions) == 0 {
		fmt.Fprintln(io.Stdout, "no sessions")
		return ExitOK
	}
	tw := tabwriter.NewWriter(io.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tUPDATED\tTITLE")
	for _, s := range list.Sessions {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.ID, s.Status, s.UpdatedAt, oneLine(s.Title))
	}
	if err := tw.Flush(); err != nil {
		return fail(io, err)
	}
	return ExitOK
}

// respondCommand answers a request: approve (once, or remembered for the
// session or always) or deny, with an optional note, an approval; answer
// a question.
func respondCommand(ctx context.Context, cmd string, args []string, io IO) int {
	var f common
	var note, scope string
	fs := newFlags(cmd, io, &f)
	if cmd == "deny" {
		fs.StringVar(&note, "note", "", "what the agent should do instead")
	}
	if cmd == "approve" {
		fs.StringVar(&scope, "scope", "once", "once, session (remember for the session) or always (remember everywhere)")
	}
	pos, err := parse(fs, args)
	if err != nil {
		return usageError(io, err)
	}
	switch {
	case cmd == "answer" && len(pos) < 2:
		return usageError(io, errors.New("answer: want a request id (req_…) and the answer: caduceus answer req_… \"the answer\""))
	case cmd != "answer" && len(pos) != 1:
		return usageError(io, fmt.Errorf("%s: want one request id (req_…), as the run printed it", cmd))
	case scope != "" && scope != "once" && scope != "session" && scope != "always":
		return usageError(io, fmt.Errorf("approve: --scope %q: want once, session or always", scope))
	}
	id := pos[0]
	c, err := f.client(io)
	if err != nil {
		return usageError(io, err)
	}
	// The server would take an approval's choice as a question's answer:
	// check the kind first so that `approve` never answers "once" to a
	// question.
	var req struct {
		Kind string `json:"kind"`
	}
	if err := c.do(ctx, "GET", "/api/requests/"+url.PathEscape(id), nil, &req); err != nil {
		return fail(io, err)
	}
	var body map[string]string
	switch {
	case cmd == "answer" && req.Kind != "clarify":
		return usageError(io, fmt.Errorf("answer: %s is an approval: use caduceus approve or deny", id))
	case cmd != "answer" && req.Kind == "clarify":
		return usageError(io, fmt.Errorf("%s: %s is a question: use caduceus answer %s \"the answer\"", cmd, id, id))
	case cmd == "answer":
		body = map[string]string{"answer": strings.Join(pos[1:], " ")}
	case cmd == "deny":
		body = map[string]string{"choice": "deny"}
		if note != "" {
			body["note"] = note
		}
	default:
		body = map[string]string{"choice": scope}
	}
	var raw json.RawMessage
	if err := c.do(ctx, "POST", "/api/requests/"+url.PathEscape(id)+"/respond", body, &raw); err != nil {
		return fail(io, err)
	}
	switch {
	case f.json:
		fmt.Fprintf(io.Stdout, "%s\n", raw)
	case cmd == "deny":
		fmt.Fprintf(io.Stdout, "denied %s\n", id)
	case cmd == "answer":
		fmt.Fprintf(io.Stdout, "answered %s\n", id)
	default:
		fmt.Fprintf(io.Stdout, "approved %s (%s)\n", id, scope)
	}
	return ExitOK
}

// jobsCommand lists the scheduled jobs of servers that have them.
func jobsCommand(ctx context.Context, args []string, io IO) int {
	var f common
	fs := newFlags("jobs", io, &f)
	pos, err := parse(fs, args)
	if err != nil {
		return usageError(io, err)
	}
	if len(pos) > 0 {
		return usageError(io, fmt.Errorf("jobs: unexpected argument %q", pos[0]))
	}
	c, err := f.client(io)
	if err != nil {
		return usageError(io, err)
	}
	var raw json.RawMessage
	err = c.do(ctx, "GET", "/api/jobs", nil, &raw)
	var ae *apiError
	if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
		fmt.Fprintln(io.Stdout, "this server has no scheduled jobs")
		return ExitOK
	}
	if err != nil {
		return fail(io, err)
	}
	if f.json {
		fmt.Fprintf(io.Stdout, "%s\n", raw)
		return ExitOK
	}
	// Jobs are read loosely: the fields a person scans, whatever else a
	// job has.
	var list struct {
		Jobs []map[string]any `json:"jobs"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return fail(io, fmt.Errorf("decode the jobs: %w", err))
	}
	if len(list.Jobs) == 0 {
		fmt.Fprintln(io.Stdout, "no scheduled jobs")
		return ExitOK
	}
	tw := tabwriter.NewWriter(io.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tSCHEDULE\tENABLED\tNEXT RUN")
	for _, j := range list.Jobs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", field(j, "id"), oneLine(field(j, "name")), scheduleText(j), field(j, "enabled"), field(j, "next_fire_at"))
	}
	if err := tw.Flush(); err != nil {
		return fail(io, err)
	}
	return ExitOK
}

// scheduleText is a job's schedule in words (h17-deliver), else its
// expression.
func scheduleText(j map[string]any) string {
	sc, _ := j["schedule"].(map[string]any)
	for _, k := range []string{"words", "expr"} {
		if s, ok := sc[k].(string); ok && s != "" {
			return oneLine(s)
		}
	}
	return "-"
}

func field(m map[string]any, k string) string {
	v, ok := m[k]
	if !ok || v == nil {
		return "-"
	}
	return strings.TrimSpace(fmt.Sprint(v))
}
