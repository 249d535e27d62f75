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

	mu        sync.Mutex
	last      int64 // highest event ID dispatched
	stopped   bool  // Run ended: new subscriptions start closed
	all       map[*Sub]struct{}
	bySession map[string]map[*Sub]struct{}
	byRun     map[string]map[*Sub]struct{}
}

// mailboxCap bounds a subscriber's undelivered events. A subscriber that
// falls further behind re-reads from the store instead of holding memory.
const mailboxCap = 4096

// NewHub returns a Hub over st. poll is how often it looks for events
// committed by other processes; local commits wake it at once via Poke.
func NewHub(st store.Reader, poll time.Duration, log *slog.Logger) *Hub {
	if poll <= 0 {
		poll = 250 * time.Millisecond
	}
	return &Hub{
		st: st, log: log, poll: poll, poke: make(chan struct{}, 1),
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
		return err
	}
	h.mu.Lock()
	h.last = last
	// A subscriber that registered before now may have finished its replay
	// before events at or below last were committed, and dispatch will
	// never offer those: make it re-read the store, as after an overflow.
	for _, s := range h.subsLocked() {
		s.mu.Lock()
		s.overflow, s.buf = true, nil
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
		evs, err := h.st.Events(ctx, store.EventQuery{AfterID: after, Limit: 1000})
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
		if len(evs) < 1000 {
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
	if len(s.buf) >= mailboxCap {
		s.overflow, s.buf = true, nil
	} else if !s.overflow {
		s.buf = append(s.buf, e)
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

// replayPage is how many events one store read returns while catching up.
const replayPage = 500

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
				AfterID: s.cursor, Limit: replayPage,
			})
			if err != nil {
				return nil, err
			}
			if len(evs) < replayPage {
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
		s.buf = nil
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
