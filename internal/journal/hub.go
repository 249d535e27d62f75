package journal

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// Hub tails the events table and fans committed events out to subscribers.
// It reads what was committed rather than trusting what a local writer says
// it wrote, so events appended by other processes on the same database are
// delivered in the same global ID order.
type Hub struct {
	st   store.Reader
	log  *slog.Logger
	poll time.Duration
	poke chan struct{}
	// replayBytes is the byte budget of a replay page (defaultReplayBytes;
	// a benchmark compares others).
	replayBytes int

	mu        sync.Mutex
	last      int64 // highest event ID dispatched
	stopped   bool  // Run ended: new subscriptions start closed
	all       map[*Sub]struct{}
	bySession map[string]map[*Sub]struct{}
	byRun     map[string]map[*Sub]struct{}
}

// mailboxCap and mailboxBytes bound a subscriber's undelivered events, in
// number and in payload bytes. A subscriber that falls further behind
// re-reads from the store instead of holding memory.
const (
	mailboxCap   = 4096
	mailboxBytes = 1 << 20
)

// tailPage and tailBytes bound one read of the journal's tail: a burst of
// large events is read and dispatched in pieces.
const (
	tailPage  = 1000
	tailBytes = 1 << 20
)

// NewHub returns a Hub over st. poll is how often it looks for events
// committed by other processes; local commits wake it at once via Poke.
func NewHub(st store.Reader, poll time.Duration, log *slog.Logger) *Hub {
	if poll <= 0 {
		poll = 250 * time.Millisecond
	}
	return &Hub{
		st: st, log: log, poll: poll, poke: make(chan struct{}, 1), replayBytes: defaultReplayBytes,
		all: map[*Sub]struct{}{}, bySession: map[string]map[*Sub]struct{}{}, byRun: map[string]map[*Sub]struct{}{},
	}
}

// Poke tells the Hub that new events were committed. It never blocks.
func (h *Hub) Poke() {
	select {
	case h.poke <- struct{}{}:
	default:
	}
}

// Run tails the journal until ctx ends.
func (h *Hub) Run(ctx context.Context) error {
	last, err := h.st.LastEventID(ctx)
	if err != nil {
		// Subscribers must not wait for a hub that never started, and a
		// hub stopped while it started has simply stopped.
		h.closeAll()
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	h.mu.Lock()
	h.last = last
	// A subscriber that registered before now may have finished its replay
	// before events at or below last were committed, and dispatch will
	// never offer those: make it re-read the store, as after an overflow.
	for _, s := range h.subsLocked() {
		s.mu.Lock()
		s.overflow, s.buf, s.bufBytes = true, nil, 0
		s.mu.Unlock()
		s.signal()
	}
	h.mu.Unlock()
	t := time.NewTicker(h.poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			h.closeAll()
			return nil
		case <-h.poke:
		case <-t.C:
		}
		h.drain(ctx)
	}
}

// drain dispatches everything committed since the last dispatch.
func (h *Hub) drain(ctx context.Context) {
	for {
		h.mu.Lock()
		after := h.last
		h.mu.Unlock()
		evs, err := h.st.Events(ctx, store.EventQuery{AfterID: after, Limit: tailPage, MaxBytes: tailBytes})
		if err != nil {
			if ctx.Err() == nil {
				h.log.Warn("journal tail failed", "err", err)
			}
			return
		}
		if len(evs) == 0 {
			return
		}
		h.dispatch(evs)
		if !fullPage(evs, tailPage, tailBytes) {
			return
		}
	}
}

func (h *Hub) dispatch(evs []event.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	touched := map[*Sub]struct{}{}
	for _, e := range evs {
		if e.ID <= h.last {
			continue
		}
		h.last = e.ID
		for s := range h.all {
			s.offer(e, touched)
		}
		for s := range h.bySession[e.SessionID] {
			s.offer(e, touched)
		}
		for s := range h.byRun[e.RunID] {
			s.offer(e, touched)
		}
	}
	for s := range touched {
		s.signal()
	}
}

// LastID returns the highest event ID the Hub has dispatched.
func (h *Hub) LastID() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last
}

// Filter selects the events a subscriber receives. At most one of SessionID
// and RunID is set; neither means every event. Types, when set, narrows to
// those types. Also adds the events of its types from everywhere; with
// neither SessionID nor RunID, only those are selected.
type Filter struct {
	SessionID string
	RunID     string
	Types     []event.Type
	Also      []event.Type
}

// Match reports whether the filter selects e.
func (f Filter) Match(e event.Event) bool {
	if slices.Contains(f.Also, e.Type) {
		return true
	}
	switch {
	case f.SessionID != "" && e.SessionID != f.SessionID,
		f.RunID != "" && e.RunID != f.RunID,
		f.SessionID == "" && f.RunID == "" && len(f.Also) > 0:
		return false
	}
	return len(f.Types) == 0 || slices.Contains(f.Types, e.Type)
}

// Subscribe returns a subscription delivering events after the cursor.
func (h *Hub) Subscribe(f Filter, after int64) *Sub {
	s := &Sub{h: h, f: f, cursor: after, wake: make(chan struct{}, 1), first: true}
	h.mu.Lock()
	defer h.mu.Unlock()
	s.closed = h.stopped
	switch {
	case len(f.Also) > 0: // spans sessions: offered everything, keeps what matches
		h.all[s] = struct{}{}
	case f.RunID != "":
		addTo(h.byRun, f.RunID, s)
	case f.SessionID != "":
		addTo(h.bySession, f.SessionID, s)
	default:
		h.all[s] = struct{}{}
	}
	return s
}

func addTo(m map[string]map[*Sub]struct{}, k string, s *Sub) {
	if m[k] == nil {
		m[k] = map[*Sub]struct{}{}
	}
	m[k][s] = struct{}{}
}

func (h *Hub) unsubscribe(s *Sub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.all, s)
	for _, m := range []map[string]map[*Sub]struct{}{h.bySession, h.byRun} {
		for _, k := range []string{s.f.SessionID, s.f.RunID} {
			if set, ok := m[k]; ok {
				delete(set, s)
				if len(set) == 0 {
					delete(m, k)
				}
			}
		}
	}
}

// subsLocked lists every subscriber; h.mu must be held.
func (h *Hub) subsLocked() []*Sub {
	var subs []*Sub
	for s := range h.all {
		subs = append(subs, s)
	}
	for _, m := range []map[string]map[*Sub]struct{}{h.bySession, h.byRun} {
		for _, set := range m {
			for s := range set {
				subs = append(subs, s)
			}
		}
	}
	return subs
}

func (h *Hub) closeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stopped = true
	for _, s := range h.subsLocked() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		s.signal()
	}
}

// Sub is one subscriber. Next is not safe for concurrent use.
type Sub struct {
	h      *Hub
	f      Filter
	cursor int64
	first  bool
	wake   chan struct{}

	mu       sync.Mutex
	buf      []event.Event
	bufBytes int // payload bytes in buf
	overflow bool
	replay   bool // still catching up from the store
	closed   bool
}

// offer is called with h.mu held.
func (s *Sub) offer(e event.Event, touched map[*Sub]struct{}) {
	if !s.f.Match(e) {
		return
	}
	s.mu.Lock()
	if len(s.buf) >= mailboxCap || (len(s.buf) > 0 && s.bufBytes+len(e.Payload) > mailboxBytes) {
		s.overflow, s.buf, s.bufBytes = true, nil, 0
	} else if !s.overflow {
		s.buf = append(s.buf, e)
		s.bufBytes += len(e.Payload)
	}
	s.mu.Unlock()
	touched[s] = struct{}{}
}

func (s *Sub) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// ErrHubClosed is returned by Next after the Hub stopped.
var ErrHubClosed = errors.New("journal hub closed")

// Cursor returns the ID of the last event Next returned.
func (s *Sub) Cursor() int64 { return s.cursor }

// Close unsubscribes.
func (s *Sub) Close() { s.h.unsubscribe(s) }

// replayPage and defaultReplayBytes bound one store read while catching
// up: a page ends at 500 events or with the event that reaches 64 KiB of
// payload, whichever comes first. Next returns one page at a time, so a
// subscriber never holds more of the history than that ahead of its
// reader, however long the history and however slow the reader. Smaller
// pages cost little: BenchmarkReplayLarge reads 20 MB of large events at
// about 85% of the rate of unbounded pages (docs/BENCHMARKS.md).
const (
	replayPage         = 500
	defaultReplayBytes = 64 << 10
)

// fullPage reports whether a page read with these bounds ended at one of
// them, so more may follow; a shorter page reached the end.
func fullPage(evs []event.Event, rows, bytes int) bool {
	if len(evs) >= rows {
		return true
	}
	n := 0
	for _, e := range evs {
		n += len(e.Payload)
	}
	return n >= bytes
}

// Next blocks until events after the cursor exist and returns them in ID
// order, never one twice. The first call may return a single synthetic
// resync event when the cursor is ahead of the journal; replay then restarts
// from the beginning of the filter.
func (s *Sub) Next(ctx context.Context) ([]event.Event, error) {
	if s.first {
		s.first = false
		s.replay = true
		if s.cursor > 0 {
			last, err := s.h.st.LastEventID(ctx)
			if err != nil {
				return nil, err
			}
			if s.cursor > last {
				rs := resyncEvent(s.f, s.cursor, last)
				s.cursor = 0
				return []event.Event{rs}, nil
			}
		}
	}
	for {
		s.mu.Lock()
		if s.overflow {
			s.overflow, s.replay = false, true
		}
		replay, closed := s.replay, s.closed
		s.mu.Unlock()
		if closed {
			return nil, ErrHubClosed
		}
		if replay {
			evs, err := s.h.st.Events(ctx, store.EventQuery{
				SessionID: s.f.SessionID, RunID: s.f.RunID, Types: s.f.Types, AlsoTypes: s.f.Also,
				AfterID: s.cursor, Limit: replayPage, MaxBytes: s.h.replayBytes,
			})
			if err != nil {
				return nil, err
			}
			if !fullPage(evs, replayPage, s.h.replayBytes) {
				s.mu.Lock()
				s.replay = false
				s.mu.Unlock()
			}
			if len(evs) > 0 {
				s.cursor = evs[len(evs)-1].ID
				return evs, nil
			}
			continue
		}
		s.mu.Lock()
		buf := s.buf
		s.buf, s.bufBytes = nil, 0
		s.mu.Unlock()
		out := buf[:0]
		for _, e := range buf {
			if e.ID > s.cursor {
				out = append(out, e)
			}
		}
		if len(out) > 0 {
			s.cursor = out[len(out)-1].ID
			return out, nil
		}
		select {
		case <-s.wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func resyncEvent(f Filter, cursor, last int64) event.Event {
	p, _ := json.Marshal(event.ResyncPayload{Reason: "cursor_ahead", Cursor: cursor, LastID: last})
	return event.Event{
		SessionID: f.SessionID, RunID: f.RunID, Type: event.Resync,
		TS: event.Time{Time: time.Now().UTC()}, Payload: p,
	}
}
