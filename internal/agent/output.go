package agent

import (
	"sync"

	"github.com/caduceus-dev/caduceus/internal/secret"
)

// redactedOutput passes a tool's streamed output on with known secrets
// replaced, one secret.Stream per output stream (stdout, stderr), so a
// secret cut between two chunks is caught too. What a stream holds back
// at the end is sent by flush.
type redactedOutput struct {
	red  *secret.Redactor
	emit func(stream, text string)

	mu      sync.Mutex
	streams map[string]*secret.Stream
	order   []string
}

func newRedactedOutput(red *secret.Redactor, emit func(stream, text string)) *redactedOutput {
	return &redactedOutput{red: red, emit: emit, streams: map[string]*secret.Stream{}}
}

// write is the tool's Progress callback.
func (o *redactedOutput) write(stream, text string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	s, ok := o.streams[stream]
	if !ok {
		s = o.red.Stream()
		o.streams[stream] = s
		o.order = append(o.order, stream)
	}
	if t := s.Write(text); t != "" {
		o.emit(stream, t)
	}
}

// flush sends what the streams held back; the tool has returned.
func (o *redactedOutput) flush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, name := range o.order {
		if t := o.streams[name].Flush(); t != "" {
			o.emit(name, t)
		}
	}
}
