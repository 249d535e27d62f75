package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
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
	fl := &follower{c: c, io: io, flags: f, run: r, in: bufio.NewReader(io.Stdin),
		out: &renderer{w: io.Stdout, color: io.StdoutTTY && io.Getenv("NO_COLOR") == ""}}
	if !f.json {
		fmt.Fprintf(io.Stderr, "%s run %s in session %s\n", fl.out.paint(ansiDim, "caduceus:"), r.ID, r.SessionID)
	}
	return fl.follow(ctx)
}

// follower streams one run's events and answers its requests.
type follower struct {
	c     *client
	io    IO
	flags runFlags
	run   runJSON
	in    *bufio.Reader
	out   *renderer
	code  int
	// ctx bounds the answers given from the stream handler.
	ctx context.Context
}

func (f *follower) follow(ctx context.Context) int {
	f.ctx = ctx
	st := &streamer{c: f.c, retry: time.Second, attempts: 30, onReconnect: func(err error) {
		fmt.Fprintf(f.io.Stderr, "caduceus: stream dropped (%v); reconnecting\n", err)
	}}
	// From the run's cursor at its creation: the events before it are the
	// message just sent.
	path := "/api/sessions/" + url.PathEscape(f.run.SessionID) + "/events"
	err := st.follow(ctx, path, f.run.LastEventID, f.handle)
	if err != nil {
		return fail(f.io, err)
	}
	if f.flags.json {
		var raw json.RawMessage
		if err := f.c.do(ctx, "GET", "/api/runs/"+url.PathEscape(f.run.ID), nil, &raw); err != nil {
			return fail(f.io, err)
		}
		fmt.Fprintf(f.io.Stdout, "{\"run\":%s}\n", raw)
	}
	return f.code
}

// handle prints one event of the session stream; only the followed run's
// events matter (the stream carries the session's other runs too).
func (f *follower) handle(e event.Event) error {
	if e.RunID != f.run.ID && e.Type != event.Resync && e.Type != event.SessionDeleted {
		return nil
	}
	if f.flags.json {
		b, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("encode event %d: %w", e.ID, err)
		}
		fmt.Fprintf(f.io.Stdout, "%s\n", b)
	} else {
		f.out.render(e)
	}
	switch e.Type {
	case event.RunDone:
		var p event.RunDonePayload
		_ = json.Unmarshal(e.Payload, &p)
		f.code = doneCode(p.Status)
		return errStop
	case event.SessionDeleted:
		fmt.Fprintln(f.io.Stderr, "caduceus: the session was deleted")
		f.code = ExitStopped
		return errStop
	case event.ApprovalRequested:
		var p event.ApprovalRequestedPayload
		if err := json.Unmarshal(e.Payload, &p); err == nil {
			return f.approval(p)
		}
	case event.ClarifyRequested:
		var p event.ClarifyRequestedPayload
		if err := json.Unmarshal(e.Payload, &p); err == nil {
			return f.clarify(p)
		}
	}
	return nil
}

func doneCode(status string) int {
	switch status {
	case "completed":
		return ExitOK
	case "failed":
		return ExitFailed
	}
	return ExitStopped
}

// approval asks the person at the terminal, or says how to answer from
// elsewhere and keeps waiting for the answer on the stream.
func (f *follower) approval(p event.ApprovalRequestedPayload) error {
	if !f.io.StdinTTY {
		return f.elsewhere(p.RequestID, "caduceus approve "+p.RequestID+"  (or deny)")
	}
	choices := map[string]string{"o": "once", "s": "session", "a": "always", "d": "deny"}
	offered := map[string]bool{}
	for _, c := range p.Choices {
		offered[c] = true
	}
	for {
		ask := "Allow once / session / always / deny? [o/s/a/d] "
		if !offered["session"] {
			ask = "Allow once / deny? [o/d] "
		}
		fmt.Fprint(f.io.Stderr, f.out.paint(ansiCyan, ask))
		line, err := f.in.ReadString('\n')
		answer := strings.ToLower(strings.TrimSpace(line))
		if err != nil && answer == "" {
			// The terminal closed: leave the request to someone else.
			return f.elsewhere(p.RequestID, "caduceus approve "+p.RequestID)
		}
		choice, ok := choices[answer]
		if !ok {
			choice = answer
		}
		if !offered[choice] {
			continue
		}
		body := map[string]string{"choice": choice}
		if choice == "deny" {
			fmt.Fprint(f.io.Stderr, "What should it do instead? (Enter for nothing) ")
			note, _ := f.in.ReadString('\n')
			if note = strings.TrimSpace(note); note != "" {
				body["note"] = note
			}
		}
		return f.respond(p.RequestID, body)
	}
}

func (f *follower) clarify(p event.ClarifyRequestedPayload) error {
	if !f.io.StdinTTY {
		return f.elsewhere(p.RequestID, "the web UI, or POST /api/requests/"+p.RequestID+"/respond")
	}
	for {
		fmt.Fprint(f.io.Stderr, f.out.paint(ansiCyan, "Answer: "))
		line, err := f.in.ReadString('\n')
		answer := strings.TrimSpace(line)
		if answer == "" {
			if err != nil {
				return f.elsewhere(p.RequestID, "the web UI")
			}
			continue
		}
		return f.respond(p.RequestID, map[string]string{"answer": answer})
	}
}

// respond answers a request; an answer someone else gave first is fine:
// the stream shows it.
func (f *follower) respond(id string, body map[string]string) error {
	err := f.c.do(f.ctx, "POST", "/api/requests/"+url.PathEscape(id)+"/respond", body, nil)
	var ae *apiError
	if errors.As(err, &ae) && ae.Code == "not_pending" {
		fmt.Fprintln(f.io.Stderr, "caduceus: the request was already answered")
		return nil
	}
	return err
}

// elsewhere tells how to answer a request from another place; with
// --no-wait it stops following (the run waits on the server).
func (f *follower) elsewhere(id, how string) error {
	fmt.Fprintf(f.io.Stderr, "caduceus: run %s waits for request %s; answer with %s\n", f.run.ID, id, how)
	if f.flags.noWait {
		f.code = ExitOK
		return errStop
	}
	return nil
}
