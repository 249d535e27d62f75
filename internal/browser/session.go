package browser

import (
	"context"
	"os"
	"sync"
	"time"

	"github.com/caduceus-dev/caduceus/internal/netguard"
)

// session is one session's browser: one Chromium, one tab, one proxy.
type session struct {
	id     string
	tab    context.Context
	cancel context.CancelFunc
	proxy  *netguard.Proxy
	dir    string // the profile, removed at close

	// op serialises the tool calls on the tab; a second call waits.
	op sync.Mutex

	mu      sync.Mutex
	used    time.Time
	busy    int
	refused []string // hosts the proxy refused since the last take
	shots   int
}

func (s *session) begin() {
	s.mu.Lock()
	s.busy++
	s.mu.Unlock()
}

func (s *session) end() {
	s.mu.Lock()
	s.busy--
	s.used = time.Now()
	s.mu.Unlock()
}

// idleSince is how long the session has had no call; 0 while one runs.
func (s *session) idleSince(now time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.busy > 0 {
		return 0
	}
	return now.Sub(s.used)
}

func (s *session) noteRefused(host string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.refused) < 32 {
		s.refused = append(s.refused, err.Error())
	}
}

// takeRefused returns and forgets the refusals since the last call.
func (s *session) takeRefused() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.refused
	s.refused = nil
	return r
}

func (s *session) nextShot() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shots++
	return s.shots
}

// alive: the tab's context ends when Chromium exits, asked or not.
func (s *session) alive() bool { return s.tab.Err() == nil }

func (s *session) close() {
	s.cancel() // ends the tab, then the browser process
	s.proxy.Close()
	os.RemoveAll(s.dir)
}
