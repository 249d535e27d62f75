package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
)

// follower streams one run's events, prints them and answers the run's
// requests from the terminal.
type follower struct {
	c     *client
	io    IO
	flags runFlags
	run   runJSON
	in    io.Reader
	out   *renderer
	code  int

	// lines delivers what the person types, read by one goroutine so that
	// the stream goes on while a question waits: an answer given elsewhere
	// (the browser) ends the question here too. nil until the first
	// question, and again once stdin ends (in is nil then).
	lines chan string
	// ask is the question waiting for the person's line; nil when none.
	ask *ask
}

// ask is one request waiting for an answer typed on the terminal.
type ask struct {
	id      string
	clarify bool
	offered map[string]bool // approval choices the request allows
	deny    bool            // "d" was typed; the line now is the deny note
}

var shortChoices = map[string]string{"o": "once", "s": "session", "a": "always", "d": "deny"}

func (f *follower) follow(ctx context.Context) int {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st := &streamer{c: f.c, retry: time.Second, attempts: 30, onReconnect: func(err error) {
		fmt.Fprintf(f.io.Stderr, "caduceus: stream dropped (%v); reconnecting\n", err)
	}}
	// From the run's cursor at its creation: the events before it are the
	// message just sent.
	path := "/api/sessions/" + url.PathEscape(f.run.SessionID) + "/events"
	events := make(chan event.Event)
	streamErr := make(chan error, 1)
	go func() {
		streamErr <- st.follow(ctx, path, f.run.LastEventID, func(e event.Event) error {
			select {
			case events <- e:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	for done := false; !done; {
		var err error
		select {
		case e := <-events:
			err = f.handle(ctx, e)
		case err = <-streamErr:
			if err == nil {
				err = errors.New("the stream ended before the run did")
			}
		case line, ok := <-f.lines:
			if !ok {
				f.lines, f.in = nil, nil
				err = f.stdinClosed()
				break
			}
			err = f.typed(ctx, line)
		}
		switch {
		case errors.Is(err, errStop):
			done = true
		case err != nil && ctx.Err() != nil:
			fmt.Fprintf(f.io.Stderr, "\ncaduceus: stopped following; run %s goes on on the server\n", f.run.ID)
			return ExitInterrupted
		case err != nil:
			return fail(f.io, err)
		}
	}
	cancel()
	<-streamErr
	if f.flags.json {
		var raw json.RawMessage
		if err := f.c.do(context.WithoutCancel(ctx), "GET", "/api/runs/"+url.PathEscape(f.run.ID), nil, &raw); err != nil {
			return fail(f.io, err)
		}
		fmt.Fprintf(f.io.Stdout, "{\"run\":%s}\n", raw)
	}
	return f.code
}

// handle prints one event of the session stream; only the followed run's
// events matter (the stream carries the session's other runs too).
func (f *follower) handle(ctx context.Context, e event.Event) error {
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
		if json.Unmarshal(e.Payload, &p) == nil {
			a := &ask{id: p.RequestID, offered: map[string]bool{}}
			for _, c := range p.Choices {
				a.offered[c] = true
			}
			return f.open(a, "caduceus approve "+p.RequestID+"  (or caduceus deny)")
		}
	case event.ClarifyRequested:
		var p event.ClarifyRequestedPayload
		if json.Unmarshal(e.Payload, &p) == nil {
			return f.open(&ask{id: p.RequestID, clarify: true}, "caduceus answer "+p.RequestID+" \"the answer\"")
		}
	case event.ApprovalResolved, event.ClarifyResolved:
		var p event.ResolvedPayload
		if json.Unmarshal(e.Payload, &p) == nil && f.ask != nil && f.ask.id == p.RequestID {
			// Still open here: someone answered elsewhere; end the
			// prompt's line.
			fmt.Fprintln(f.io.Stderr)
			f.ask = nil
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

// open asks a request on the terminal, or says how to answer it from
// elsewhere and keeps waiting for the answer on the stream.
func (f *follower) open(a *ask, how string) error {
	if !f.io.StdinTTY || f.in == nil {
		return f.elsewhere(a.id, how)
	}
	if f.lines == nil {
		f.lines = make(chan string)
		go readLines(f.in, f.lines)
	}
	f.ask = a
	f.prompt()
	return nil
}

// readLines sends each line of r; it ends with r. Reading a terminal
// cannot be interrupted, so it outlives a follow that ends first: the
// process ends right after.
func readLines(r io.Reader, out chan<- string) {
	defer close(out)
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if line != "" || err == nil {
			out <- strings.TrimSpace(line)
		}
		if err != nil {
			return
		}
	}
}

func (f *follower) prompt() {
	var q string
	switch a := f.ask; {
	case a.clarify:
		q = "Answer: "
	case a.deny:
		q = "What should it do instead? (Enter for nothing) "
	case a.offered["session"]:
		q = "Allow once / session / always / deny? [o/s/a/d] "
	default:
		q = "Allow once / deny? [o/d] "
	}
	fmt.Fprint(f.io.Stderr, f.out.paint(ansiCyan, q))
}

// typed takes a line the person typed for the open question.
func (f *follower) typed(ctx context.Context, line string) error {
	a := f.ask
	if a == nil {
		return nil // typed while nothing was asked
	}
	var body map[string]string
	switch {
	case a.clarify:
		if line == "" {
			f.prompt()
			return nil
		}
		body = map[string]string{"answer": line}
	case a.deny:
		body = map[string]string{"choice": "deny"}
		if line != "" {
			body["note"] = line
		}
	default:
		choice := strings.ToLower(line)
		if c, ok := shortChoices[choice]; ok {
			choice = c
		}
		switch {
		case !a.offered[choice]:
			f.prompt()
			return nil
		case choice == "deny":
			a.deny = true
			f.prompt()
			return nil
		}
		body = map[string]string{"choice": choice}
	}
	f.ask = nil
	return f.respond(ctx, a.id, body)
}

// stdinClosed: nobody can answer here any more.
func (f *follower) stdinClosed() error {
	if f.ask == nil {
		return nil
	}
	a := f.ask
	f.ask = nil
	fmt.Fprintln(f.io.Stderr)
	how := "caduceus approve " + a.id + "  (or caduceus deny)"
	if a.clarify {
		how = "caduceus answer " + a.id + " \"the answer\""
	}
	return f.elsewhere(a.id, how)
}

// respond answers a request; an answer someone else gave first is fine:
// the stream shows it.
func (f *follower) respond(ctx context.Context, id string, body map[string]string) error {
	err := f.c.do(ctx, "POST", "/api/requests/"+url.PathEscape(id)+"/respond", body, nil)
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
