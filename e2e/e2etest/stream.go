package e2etest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
)

// Stream is a live SSE connection; Events carries what it reads.
type Stream struct {
	resp   *http.Response
	Events chan event.Event
	errc   chan error
	cancel context.CancelFunc
}

// OpenStream connects to an SSE endpoint; header may set Last-Event-ID.
// The connection closes when the test ends.
func OpenStream(t *testing.T, url string, header map[string]string) *Stream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		cancel()
		t.Fatalf("stream %s: status %d", url, resp.StatusCode)
	}
	st := &Stream{resp: resp, Events: make(chan event.Event, 100000), errc: make(chan error, 1), cancel: cancel}
	go st.read()
	t.Cleanup(st.Close)
	return st
}

func (st *Stream) read() {
	defer close(st.Events)
	sc := bufio.NewScanner(st.resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var data, id string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if data != "" {
				var e event.Event
				if err := json.Unmarshal([]byte(data), &e); err != nil {
					st.errc <- fmt.Errorf("bad event %q: %w", data, err)
					return
				}
				if id != "" && fmt.Sprint(e.ID) != id {
					st.errc <- fmt.Errorf("sse id %s != event id %d", id, e.ID)
					return
				}
				st.Events <- e
			}
			data, id = "", ""
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		case strings.HasPrefix(line, "id: "):
			id = strings.TrimPrefix(line, "id: ")
		}
	}
}

// Close ends the connection.
func (st *Stream) Close() {
	st.cancel()
	st.resp.Body.Close()
}

// Until reads events until pred holds for one (returned last) or the
// timeout.
func (st *Stream) Until(t *testing.T, what string, pred func(event.Event) bool) (seen []event.Event) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case e, ok := <-st.Events:
			if !ok {
				select {
				case err := <-st.errc:
					t.Fatalf("waiting for %s: %v", what, err)
				default:
				}
				t.Fatalf("stream ended while waiting for %s (saw %d events)", what, len(seen))
			}
			seen = append(seen, e)
			if pred(e) {
				return seen
			}
		case <-timeout:
			t.Fatalf("timed out waiting for %s (saw %d events)", what, len(seen))
		}
	}
}

// Drain reads until the stream closes.
func (st *Stream) Drain(t *testing.T) (seen []event.Event) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case e, ok := <-st.Events:
			if !ok {
				return seen
			}
			seen = append(seen, e)
		case <-timeout:
			t.Fatalf("stream did not end (saw %d events)", len(seen))
		}
	}
}

// IsType matches events of typ.
func IsType(typ event.Type) func(event.Event) bool {
	return func(e event.Event) bool { return e.Type == typ }
}

// IsDone matches the run.done of runID.
func IsDone(runID string) func(event.Event) bool {
	return func(e event.Event) bool { return e.Type == event.RunDone && e.RunID == runID }
}

// Deltas matches the n-th message.delta.
func Deltas(n int) func(event.Event) bool {
	seen := 0
	return func(e event.Event) bool {
		if e.Type == event.MessageDelta {
			seen++
		}
		return seen >= n
	}
}

// Payload decodes e's payload.
func Payload[T any](t testing.TB, e event.Event) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(e.Payload, &v); err != nil {
		t.Fatalf("payload of %s: %v", e.Type, err)
	}
	return v
}

// OfType decodes the payloads of the events of typ.
func OfType[T any](t testing.TB, evs []event.Event, typ event.Type) []T {
	t.Helper()
	var out []T
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, Payload[T](t, e))
		}
	}
	return out
}

// CheckJournal asserts seq is 1..n without gaps and ids strictly increase.
func CheckJournal(t testing.TB, evs []event.Event) {
	t.Helper()
	last := map[[2]string]int64{}
	for i, e := range evs {
		// Session lifecycle events belong to no run: their seq counts per
		// session.
		k := [2]string{e.RunID, ""}
		if e.RunID == "" {
			k[1] = e.SessionID
		}
		if e.Seq != last[k]+1 {
			t.Fatalf("event %d (%s): seq %d, want %d", i, e.Type, e.Seq, last[k]+1)
		}
		last[k] = e.Seq
		if i > 0 && e.ID <= evs[i-1].ID {
			t.Fatalf("event %d: id %d not after %d", i, e.ID, evs[i-1].ID)
		}
	}
}

// OfRuns drops the session lifecycle events (no run) a session stream
// carries, leaving what a run's journal can be compared with.
func OfRuns(evs []event.Event) []event.Event {
	var out []event.Event
	for _, e := range evs {
		if e.RunID != "" {
			out = append(out, e)
		}
	}
	return out
}

// CountType counts the events of typ.
func CountType(evs []event.Event, typ event.Type) int {
	n := 0
	for _, e := range evs {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// CheckOnce asserts what every finished run's journal must show: seqs
// 1..n, one terminal event, and it is the last one, with wantStatus.
func CheckOnce(t testing.TB, evs []event.Event, wantStatus string) {
	t.Helper()
	defer func() {
		if t.Failed() {
			t.Logf("journal:\n%s", Summarize(evs))
		}
	}()
	CheckJournal(t, evs)
	terminal := 0
	for _, e := range evs {
		if e.Terminal {
			terminal++
		}
	}
	if terminal != 1 || CountType(evs, event.RunDone) != 1 {
		t.Fatalf("journal has %d terminal events and %d run.done, want 1", terminal, CountType(evs, event.RunDone))
	}
	last := evs[len(evs)-1]
	if last.Type != event.RunDone {
		t.Fatalf("last event is %s, want run.done", last.Type)
	}
	if d := Payload[event.RunDonePayload](t, last); d.Status != wantStatus {
		t.Fatalf("run.done = %+v, want status %s", d, wantStatus)
	}
}

// Summarize lists a journal one event per line, runs of deltas folded,
// for failure messages.
func Summarize(evs []event.Event) string {
	var b strings.Builder
	for i := 0; i < len(evs); i++ {
		e := evs[i]
		if e.Type == event.MessageDelta {
			j := i
			for j+1 < len(evs) && evs[j+1].Type == event.MessageDelta {
				j++
			}
			fmt.Fprintf(&b, "  %d-%d message.delta x%d\n", e.Seq, evs[j].Seq, j-i+1)
			i = j
			continue
		}
		p := string(e.Payload)
		if len(p) > 300 {
			p = p[:300]
		}
		fmt.Fprintf(&b, "  %d %s %s %s\n", e.Seq, e.TS.Format("05.000"), e.Type, p)
	}
	return b.String()
}

// Percentile is the p-quantile (0..1) of v, nearest rank.
func Percentile(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}
