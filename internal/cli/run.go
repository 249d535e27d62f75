package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// runFlags are the flags of `caduceus run`.
type runFlags struct {
	common
	session, profile, workspace, model string
	follow, noWait                     bool
}

// runJSON is the part of the API's run the client reads.
type runJSON struct {
	ID          string `json:"id"`
	SessionID   string `json:"session_id"`
	Status      string `json:"status"`
	LastEventID int64  `json:"last_event_id"`
}

func runCommand(ctx context.Context, args []string, io IO) int {
	var f runFlags
	fs := newFlags("run", io, &f.common)
	fs.StringVar(&f.session, "session", "", "send to this session (ses_…) instead of a new one")
	fs.StringVar(&f.profile, "profile", "", "profile (prf_…) of the new session")
	fs.StringVar(&f.workspace, "workspace", "", "workspace directory of the new session (on the server's machine)")
	fs.StringVar(&f.model, "model", "", "model of this run (default: the session's)")
	fs.BoolVar(&f.follow, "follow", false, "stream the run until it ends; exit with its outcome")
	fs.BoolVar(&f.noWait, "no-wait", false, "with --follow: stop following when the run needs a person who is not at this terminal")
	fs.Usage = func() {
		fmt.Fprintln(io.Stderr, "Usage: caduceus run \"prompt\" [flags]")
		fs.PrintDefaults()
	}
	pos, err := parse(fs, args)
	if err != nil {
		return usageError(io, err)
	}
	prompt := strings.TrimSpace(strings.Join(pos, " "))
	switch {
	case prompt == "":
		return usageError(io, errors.New("run: the prompt is missing: caduceus run \"what to do\""))
	case f.session != "" && (f.profile != "" || f.workspace != ""):
		return usageError(io, errors.New("run: --profile and --workspace choose a new session's settings; they cannot go with --session"))
	case f.noWait && !f.follow:
		return usageError(io, errors.New("run: --no-wait goes with --follow"))
	}
	if f.workspace != "" {
		// The server wants an absolute path; a relative one means this
		// directory, which is right when client and server share a machine.
		if f.workspace, err = filepath.Abs(f.workspace); err != nil {
			return usageError(io, fmt.Errorf("run: --workspace: %w", err))
		}
	}
	c, err := f.client(io)
	if err != nil {
		return usageError(io, err)
	}
	sid := f.session
	if sid == "" {
		body := map[string]string{}
		for k, v := range map[string]string{"workspace": f.workspace, "profile_id": f.profile} {
			if v != "" {
				body[k] = v
			}
		}
		var s struct {
			ID string `json:"id"`
		}
		if err := c.do(ctx, "POST", "/api/sessions", body, &s); err != nil {
			return fail(io, err)
		}
		sid = s.ID
	}
	msg := map[string]string{"content": prompt}
	if f.model != "" {
		msg["model"] = f.model
	}
	var raw json.RawMessage
	if err := c.do(ctx, "POST", "/api/sessions/"+url.PathEscape(sid)+"/messages", msg, &raw); err != nil {
		return fail(io, err)
	}
	var r runJSON
	if err := json.Unmarshal(raw, &r); err != nil {
		return fail(io, fmt.Errorf("decode the run: %w", err))
	}
	if !f.follow {
		if f.json {
			fmt.Fprintf(io.Stdout, "{\"run\":%s}\n", raw)
		} else {
			fmt.Fprintf(io.Stdout, "run %s queued in session %s\n", r.ID, r.SessionID)
		}
		return ExitOK
	}
	fl := &follower{c: c, io: io, flags: f, run: r, in: io.Stdin,
		out: &renderer{w: io.Stdout, color: io.StdoutTTY && io.Getenv("NO_COLOR") == ""}}
	if !f.json {
		fmt.Fprintf(io.Stderr, "%s run %s in session %s\n", fl.out.paint(ansiDim, "caduceus:"), r.ID, r.SessionID)
	}
	return fl.follow(ctx)
}
