package processes

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/id"
	"github.com/caduceus-dev/caduceus/internal/run"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlite"
)

// seedHistory writes one session of completed runs whose event payloads
// add up to at least size bytes straight into a fresh data dir, before the
// server starts. Most of the bytes are tool outputs of 32 KiB (a file read,
// a long test log), the shape that makes a session's history large; each
// run also has the small events of a turn. It returns the session id and
// the payload bytes written.
func seedHistory(tb testing.TB, dataDir, workspace string, size int) (string, int) {
	tb.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(dataDir, "caduceus.db"))
	if err != nil {
		tb.Fatal(err)
	}
	defer st.Close()
	now := time.Now().UTC().Add(-time.Hour)
	sess := store.Session{ID: id.New("ses"), Title: "A long history", Workspace: workspace, CreatedAt: now, UpdatedAt: now}
	if err := st.Write(ctx, func(tx store.Tx) error { return tx.InsertSession(ctx, sess) }); err != nil {
		tb.Fatal(err)
	}
	var out strings.Builder
	for i := 0; out.Len() < 32<<10; i++ {
		fmt.Fprintf(&out, "internal/pkg/file_%04d.go:%d: func handler%d(w http.ResponseWriter, r *http.Request) { /* ... */ }\n", i%97, i, i)
	}
	output := out.String()
	const toolsPerRun = 6
	written := 0
	for i := 0; written < size; i++ {
		at := now.Add(time.Duration(i) * time.Second)
		err := st.Write(ctx, func(tx store.Tx) error {
			input := fmt.Sprintf("Look through the handlers again (%d)", i)
			r := store.Run{ID: id.New("run"), SessionID: sess.ID, Status: run.Completed, Input: input, Attempt: 1,
				CreatedAt: at, StartedAt: at, EndedAt: at.Add(time.Second)}
			if err := tx.InsertRun(ctx, r); err != nil {
				return err
			}
			turn, msg := id.New("trn"), id.New("msg")
			d := func(typ event.Type, p any) event.Draft {
				return event.Draft{RunID: r.ID, SessionID: sess.ID, Type: typ, Payload: p}
			}
			drafts := []event.Draft{
				d(event.RunQueued, event.RunQueuedPayload{Input: input, IfBusy: "enqueue"}),
				d(event.MessageUser, event.MessageUserPayload{MessageID: id.New("msg"), Content: input}),
				d(event.RunStarted, event.RunStartedPayload{RunnerID: "seed", Attempt: 1, Model: "demo", Provider: "demo", Demo: true}),
				d(event.TurnStarted, event.TurnStartedPayload{TurnID: turn}),
			}
			for k := range toolsPerRun {
				call := id.New("call")
				drafts = append(drafts,
					d(event.ToolStarted, event.ToolStartedPayload{ToolCallID: call, Name: "read_file", Label: "read file " + strconv.Itoa(k),
						Args: []byte(`{"path":"internal/pkg/file.go"}`), TurnID: turn}),
					d(event.ToolDone, event.ToolDonePayload{ToolCallID: call, Name: "read_file", Status: "ok", DurationMS: 3, Output: output}))
			}
			text := "I read the handlers; nothing in them needs to change."
			drafts = append(drafts,
				d(event.MessageDelta, event.DeltaPayload{ID: msg, TurnID: turn, Delta: text}),
				d(event.MessageDone, event.DonePayload{ID: msg, TurnID: turn, Text: text}),
				d(event.TurnEnded, event.TurnEndedPayload{TurnID: turn, StopReason: "end_turn", DurationMS: 900}),
				d(event.RunDone, event.RunDonePayload{Status: "completed"}))
			evs, err := tx.AppendEvents(ctx, "", drafts...)
			for _, e := range evs {
				written += len(e.Payload)
			}
			return err
		})
		if err != nil {
			tb.Fatal(err)
		}
	}
	return sess.ID, written
}

// readRSS is the resident set size of process pid (VmRSS).
func readRSS(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("VmRSS %q: %w", v, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}

func rssBytes(tb testing.TB, pid int) int64 {
	tb.Helper()
	n, err := readRSS(pid)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// peakRSS samples pid's RSS every 50 ms until stop is called, which
// returns the highest sample.
func peakRSS(tb testing.TB, pid int) (stop func() int64) {
	var peak atomic.Int64
	peak.Store(rssBytes(tb, pid))
	done, quit := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			if n, err := readRSS(pid); err == nil && n > peak.Load() {
				peak.Store(n)
			}
		}
	}()
	return func() int64 {
		close(quit)
		<-done
		return peak.Load()
	}
}

// slowLoad describes clients that replay a stream through a small
// receive window and read it slowly.
type slowLoad struct {
	clients int
	rcvbuf  int           // SO_RCVBUF of each client socket
	chunk   int           // bytes read at a time
	pause   time.Duration // between reads
}

// slowReplays opens load.clients streams of path on the server at addr
// ("127.0.0.1:port"), each from its own loopback address (127.0.0.2,
// 127.0.0.3, ...: 200 clients are 200 client addresses, as on a network,
// each within the per-address limits), and reads them slowly until
// stop is called, which closes them and returns the bytes the clients
// read and how many clients the server refused or closed before that.
// It returns once every client has been answered (or refused).
func slowReplays(tb testing.TB, addr, path string, load slowLoad) (stop func() (read int64, dropped int)) {
	tb.Helper()
	var (
		total    atomic.Int64
		dropped  atomic.Int64
		stopping atomic.Bool
		settled  atomic.Int64 // clients answered or refused
		why      atomic.Value // the first drop's reason, for the failure message
		mu       sync.Mutex
		conns    []net.Conn
		wg       sync.WaitGroup
	)
	for i := range load.clients {
		local := e2etest.LoopbackClient(i)
		c, err := e2etest.DialFrom(addr, local, load.rcvbuf)
		if err != nil {
			tb.Fatalf("client %d from %s: %v", i, local, err)
		}
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
		if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n", path, addr); err != nil {
			tb.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rd := bufio.NewReaderSize(c, load.chunk)
			status, err := rd.ReadString('\n')
			settled.Add(1)
			if err != nil || !strings.Contains(status, " 200 ") {
				dropped.Add(1)
				why.CompareAndSwap(nil, fmt.Sprintf("client %d from %s: status %q, %v", i, local, strings.TrimSpace(status), err))
				return
			}
			buf := make([]byte, load.chunk)
			for {
				n, err := rd.Read(buf)
				total.Add(int64(n))
				if err != nil {
					if !stopping.Load() {
						dropped.Add(1)
						why.CompareAndSwap(nil, fmt.Sprintf("client %d from %s: closed (all clients had read %d bytes): %v", i, local, total.Load(), err))
					}
					return
				}
				time.Sleep(load.pause)
			}
		}()
	}
	stop = func() (int64, int) {
		stopping.Store(true)
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
		if w, ok := why.Load().(string); ok {
			tb.Logf("first dropped: %s", w)
		}
		return total.Load(), int(dropped.Load())
	}
	// The load is all the clients streaming at once: on a loaded machine
	// the last ones are answered seconds after the first, and stopping
	// before then would take a client still waiting for its first byte
	// for one the server dropped.
	for deadline := time.Now().Add(time.Minute); settled.Load() < int64(load.clients); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			stop()
			tb.Fatalf("%d of %d clients got no answer within a minute", int64(load.clients)-settled.Load(), load.clients)
		}
	}
	return stop
}
