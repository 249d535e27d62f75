package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
)

// errStop, returned by a stream handler, ends the stream without error.
var errStop = errors.New("stop streaming")

// streamer follows one SSE stream of the server, resuming from the last
// event seen when the connection drops: the server replays every event
// after the cursor, so nothing is lost, and events seen twice are dropped.
type streamer struct {
	c *client
	// retry is the wait before reconnecting; attempts bounds the
	// reconnections in a row that fail before the stream gives up.
	retry    time.Duration
	attempts int
	// onReconnect, if set, is told of each dropped connection.
	onReconnect func(err error)
}

// follow streams path from the cursor after, calling handle for every new
// event, until handle returns errStop (nil is returned), ctx ends, the
// server refuses the stream, or it stays unreachable.
func (s *streamer) follow(ctx context.Context, path string, after int64, handle func(event.Event) error) error {
	last := after
	failures := 0
	for {
		progressed, err := s.once(ctx, path, &last, handle)
		if errors.Is(err, errStop) {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var ae *apiError
		if errors.As(err, &ae) {
			return err
		}
		if progressed {
			failures = 0
		}
		failures++
		if failures > s.attempts {
			return err
		}
		if s.onReconnect != nil {
			s.onReconnect(err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(s.retry):
		}
	}
}

// once reads one connection of the stream; progressed reports whether it
// delivered anything, so that a long stream that drops now and then never
// runs out of attempts.
func (s *streamer) once(ctx context.Context, path string, last *int64, handle func(event.Event) error) (progressed bool, err error) {
	req, err := s.c.newRequest(ctx, "GET", path, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if *last > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(*last, 10))
	}
	resp, err := s.c.send(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	// An event is one line of JSON; tool output is capped well below this.
	sc.Buffer(make([]byte, 64<<10), 8<<20)
	var data strings.Builder
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "data:"):
			data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
			continue
		case line != "":
			continue // id:, retry:, comments: the envelope carries the id
		}
		if data.Len() == 0 {
			continue
		}
		var e event.Event
		err := json.Unmarshal([]byte(data.String()), &e)
		data.Reset()
		if err != nil {
			return progressed, fmt.Errorf("malformed event on the stream: %w", err)
		}
		progressed = true
		if e.Type == event.Resync {
			// The server replays the stream from its start: the old
			// cursor no longer means anything.
			*last = 0
		} else if e.ID <= *last {
			continue
		}
		*last = e.ID
		if err := handle(e); err != nil {
			return progressed, err
		}
	}
	if err := sc.Err(); err != nil {
		return progressed, &unreachableError{base: s.c.base, err: err}
	}
	return progressed, &unreachableError{base: s.c.base, err: errors.New("the stream ended")}
}
