package tool

import (
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// capBuffer keeps the first and last bytes of a stream: the head says what
// a command set out to do, the tail how it ended (errors, summaries).
type capBuffer struct {
	mu      sync.Mutex
	headCap int
	tailCap int
	head    []byte
	tail    []byte // the last tailCap bytes, once head is full
	total   int64
}

func newCapBuffer(limit int) *capBuffer {
	h := limit / 2
	return &capBuffer{headCap: h, tailCap: limit - h}
}

func (b *capBuffer) Write(p []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.total += int64(len(p))
	if room := b.headCap - len(b.head); room > 0 {
		n := min(room, len(p))
		b.head = append(b.head, p[:n]...)
		p = p[n:]
	}
	if len(p) == 0 {
		return
	}
	if len(p) >= b.tailCap {
		b.tail = append(b.tail[:0], p[len(p)-b.tailCap:]...)
		return
	}
	b.tail = append(b.tail, p...)
	// Slide only when twice the capacity is used, so copying is amortised.
	if len(b.tail) >= 2*b.tailCap {
		b.tail = append(b.tail[:0], b.tail[len(b.tail)-b.tailCap:]...)
	}
}

// String returns the kept output as valid UTF-8, with a marker where the
// middle was dropped, and whether anything was dropped.
func (b *capBuffer) String() (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.total <= int64(b.headCap+b.tailCap) {
		return strings.ToValidUTF8(string(b.head)+string(b.tail), "\uFFFD"), false
	}
	tail := b.tail[len(b.tail)-b.tailCap:]
	// Cut at rune boundaries so neither side shows a broken character.
	head := trimPartialRune(b.head)
	for i := 0; i < utf8.UTFMax-1 && len(tail) > 0 && !utf8.RuneStart(tail[0]); i++ {
		tail = tail[1:]
	}
	marker := fmt.Sprintf("\n… [output truncated: %d bytes total, showing first %d and last %d]\n",
		b.total, len(head), len(tail))
	return strings.ToValidUTF8(string(head), "\uFFFD") + marker + strings.ToValidUTF8(string(tail), "\uFFFD"), true
}

const (
	// progressInterval merges output into chunks, so a chatty command makes
	// a few events per second instead of one per write.
	progressInterval = 100 * time.Millisecond
	// progressBatch sends early when this much is pending, bounding latency
	// and event size for fast output.
	progressBatch = 16 << 10
	// progressBudget bounds what a single command streams live; the final
	// result still carries the head and tail.
	progressBudget = 1 << 20
)

type progressChunk struct {
	stream string
	text   []byte
}

// progressPump forwards output to Env.Progress from one goroutine, merged
// and throttled. Writers never call Progress, so a slow consumer cannot
// stall the pipes and Progress is never called concurrently.
type progressPump struct {
	fn func(stream, text string)

	mu      sync.Mutex
	pending []progressChunk
	size    int
	carry   map[string][]byte // an incomplete UTF-8 sequence per stream
	sent    int
	stopped bool // budget exhausted

	wake chan struct{}
	stop chan struct{}
	done chan struct{}
}

func newProgressPump(fn func(stream, text string)) *progressPump {
	p := &progressPump{
		fn:    fn,
		carry: map[string][]byte{},
		wake:  make(chan struct{}, 1),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	go p.loop()
	return p
}

func (p *progressPump) Write(stream string, b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	// Hold back a split UTF-8 sequence so no chunk carries a broken rune.
	buf := append(p.carry[stream], b...)
	whole := trimPartialRune(buf)
	p.carry[stream] = append([]byte(nil), buf[len(whole):]...)
	p.add(stream, whole)
	if p.size >= progressBatch {
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
}

// add queues text, merging it with the previous chunk of the same stream.
// Callers hold mu.
func (p *progressPump) add(stream string, b []byte) {
	if len(b) == 0 {
		return
	}
	if n := len(p.pending); n > 0 && p.pending[n-1].stream == stream {
		p.pending[n-1].text = append(p.pending[n-1].text, b...)
	} else {
		p.pending = append(p.pending, progressChunk{stream: stream, text: append([]byte(nil), b...)})
	}
	p.size += len(b)
}

func (p *progressPump) loop() {
	defer close(p.done)
	t := time.NewTicker(progressInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-p.wake:
		case <-p.stop:
			p.mu.Lock()
			for _, s := range []string{"stdout", "stderr"} {
				p.add(s, p.carry[s])
			}
			p.mu.Unlock()
			p.flush()
			return
		}
		p.flush()
	}
}

func (p *progressPump) flush() {
	p.mu.Lock()
	chunks := p.pending
	p.pending, p.size = nil, 0
	var out []progressChunk
	for _, c := range chunks {
		if p.stopped {
			break
		}
		if p.sent+len(c.text) > progressBudget {
			c.text = trimPartialRune(c.text[:progressBudget-p.sent])
			out = append(out, c, progressChunk{stream: c.stream,
				text: []byte("\n… [live output stopped after 1 MiB; the result keeps the head and tail]\n")})
			p.stopped = true
			continue
		}
		p.sent += len(c.text)
		out = append(out, c)
	}
	p.mu.Unlock()
	for _, c := range out {
		if len(c.text) > 0 {
			p.fn(c.stream, strings.ToValidUTF8(string(c.text), "\uFFFD"))
		}
	}
}

// Close sends what is pending and waits until the pump goroutine is gone.
func (p *progressPump) Close() {
	close(p.stop)
	<-p.done
}
