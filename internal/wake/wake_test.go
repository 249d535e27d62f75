package wake

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// waitLong bounds every wait for something that should happen promptly. It
// is generous on purpose (-race on a noisy 2-core VM): no test times latency.
const waitLong = 5 * time.Second

var discard = slog.New(slog.DiscardHandler)

type mode struct {
	name string
	opts options
}

// modes are the two socket flavours; the file flavour is what non-Linux
// platforms use, and it works on Linux too, so both are tested here.
func modes() []mode {
	ms := []mode{{"file", options{abstract: false}}}
	if runtime.GOOS == "linux" {
		ms = append(ms, mode{"abstract", options{abstract: true}})
	}
	return ms
}

func openT(t testing.TB, dir string, o options) *Bus {
	t.Helper()
	b, err := open(dir, discard, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func woken(b *Bus, d time.Duration) bool {
	select {
	case <-b.C():
		return true
	case <-time.After(d):
		return false
	}
}

func mustWake(t *testing.T, b *Bus, what string) {
	t.Helper()
	if !woken(b, waitLong) {
		t.Fatalf("%s: no wake-up within %v", what, waitLong)
	}
}

func exists(t *testing.T, path string) bool {
	t.Helper()
	_, err := os.Stat(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

func TestNotifyWakesOthersNotItself(t *testing.T) {
	for _, m := range modes() {
		t.Run(m.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "wake")
			a := openT(t, dir, m.opts)
			b := openT(t, dir, m.opts)
			mustWake(t, a, "hello from b")

			a.Notify()
			mustWake(t, b, "a.Notify -> b")
			b.Notify()
			mustWake(t, a, "b.Notify -> a")

			if got := a.Peers(); got != 1 {
				t.Errorf("a.Peers() = %d, want 1", got)
			}
			if got := b.Peers(); got != 1 {
				t.Errorf("b.Peers() = %d, want 1", got)
			}
			// Nothing can prove a datagram will never come; a quiet spell
			// after a.Notify reached b is as good as it gets.
			a.Notify()
			mustWake(t, b, "second a.Notify -> b")
			if woken(a, 100*time.Millisecond) {
				t.Error("a.Notify woke a itself")
			}
		})
	}
}

func TestLoneBusDoesNotWakeItself(t *testing.T) {
	a := openT(t, filepath.Join(t.TempDir(), "wake"), defaultOptions())
	a.Notify()
	if woken(a, 100*time.Millisecond) {
		t.Error("a lone Bus woke itself")
	}
	if got := a.Peers(); got != 0 {
		t.Errorf("Peers() = %d, want 0", got)
	}
}

// A member that joins after the others scanned is found through its hello,
// not the rescan interval, which is set out of reach here.
func TestHelloFindsLateJoiner(t *testing.T) {
	for _, m := range modes() {
		t.Run(m.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "wake")
			o := m.opts
			o.rescan = time.Hour
			a := openT(t, dir, o)
			b := openT(t, dir, o)
			mustWake(t, a, "hello from b")
			a.Notify()
			mustWake(t, b, "a.Notify -> b")

			c := openT(t, dir, o)
			mustWake(t, a, "hello from c")
			a.Notify()
			mustWake(t, c, "a.Notify -> late joiner c")
			mustWake(t, b, "a.Notify -> b (with c)")
			if got := b.Peers(); got != 2 {
				t.Errorf("b.Peers() = %d, want 2", got)
			}
		})
	}
}

// Markers left behind by members that did not clean up are removed on the
// next send round; markers of members this process cannot reach (another
// network namespace or host) are left alone.
func TestForeignMarkers(t *testing.T) {
	for _, m := range modes() {
		t.Run(m.name, func(t *testing.T) {
			cases := []struct {
				name        string
				marker      func(dir, id string, self marker) marker
				wantRemoved bool
				needBoot    bool
			}{
				{"nobody bound", func(_, id string, self marker) marker {
					self.Addr = addrFor(id, m.opts.abstract)
					return self
				}, true, false},
				{"closed without cleanup", func(dir, id string, self marker) marker {
					self.Addr = addrFor(id, m.opts.abstract)
					closedSocket(t, dir, self.Addr)
					return self
				}, true, false},
				{"other network namespace", func(_, id string, self marker) marker {
					self.Addr = abstractPref + id
					self.NetNS = "net:[1]"
					return self
				}, false, false},
				{"other host", func(_, id string, self marker) marker {
					self.Addr = addrFor(id, m.opts.abstract)
					self.Host, self.Boot = "elsewhere.invalid", "boot-elsewhere"
					return self
				}, false, false},
				{"before reboot", func(_, id string, self marker) marker {
					self.Addr = addrFor(id, m.opts.abstract)
					self.Boot = "an-earlier-boot"
					return self
				}, true, true},
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					dir := filepath.Join(t.TempDir(), "wake")
					o := m.opts
					o.rescan = time.Nanosecond // every round rescans: "the next Notify"
					b := openT(t, dir, o)
					a := openT(t, dir, o)
					mustWake(t, b, "hello from a")
					if tc.needBoot && a.self.Boot == "" {
						t.Skip("no boot id on this platform")
					}

					id := "00112233445566ff"
					fm := tc.marker(dir, id, a.self)
					if err := writeMarker(dir, id, fm); err != nil {
						t.Fatal(err)
					}
					a.Notify()
					// The rescan precedes the sends of a round, so once b
					// is woken the foreign marker has been judged.
					mustWake(t, b, "a.Notify -> b")
					if got := !exists(t, filepath.Join(dir, id)); got != tc.wantRemoved {
						t.Errorf("marker removed = %v, want %v", got, tc.wantRemoved)
					}
					if got := a.Peers(); got != 1 {
						t.Errorf("a.Peers() = %d, want 1", got)
					}
				})
			}
		})
	}
}

// A peer that dies after it was found is dropped when a send is refused.
func TestPeerDiesAfterDiscovery(t *testing.T) {
	for _, m := range modes() {
		t.Run(m.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "wake")
			o := m.opts
			o.rescan = time.Hour // only a refused send can tell
			a := openT(t, dir, o)
			b := openT(t, dir, o)
			c := openT(t, dir, o)
			mustWake(t, a, "hellos from b and c")
			if got := a.Peers(); got != 2 {
				t.Fatalf("a.Peers() = %d, want 2", got)
			}
			// c "crashes": its socket goes, its marker stays.
			marker := filepath.Join(dir, c.id)
			saved, err := os.ReadFile(marker)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(marker, saved, 0o600); err != nil {
				t.Fatal(err)
			}
			for range 2 { // the first round meets the refusal
				for len(b.C()) > 0 {
					<-b.C()
				}
				a.Notify()
				mustWake(t, b, "a.Notify -> b")
			}
			deadline := time.Now().Add(waitLong)
			for exists(t, marker) && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			if exists(t, marker) {
				t.Error("marker of the dead peer is still there")
			}
			if got := a.Peers(); got != 1 {
				t.Errorf("a.Peers() = %d, want 1", got)
			}
		})
	}
}

func TestClose(t *testing.T) {
	for _, m := range modes() {
		t.Run(m.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "wake")
			o := m.opts
			o.rescan = time.Nanosecond
			a, err := open(dir, discard, o)
			if err != nil {
				t.Fatal(err)
			}
			b := openT(t, dir, o)
			if got := b.Peers(); got != 1 {
				t.Fatalf("b.Peers() = %d, want 1", got)
			}
			for i := range 2 {
				if err := a.Close(); err != nil {
					t.Fatalf("Close #%d: %v", i+1, err)
				}
			}
			if exists(t, filepath.Join(dir, a.id)) {
				t.Error("marker still there after Close")
			}
			if exists(t, filepath.Join(dir, a.id+socketSuffix)) {
				t.Error("socket file still there after Close")
			}
			a.Notify() // no-op, must not panic or block
			for len(a.C()) > 0 {
				<-a.C() // b's hello, from before Close
			}
			if got := a.Peers(); got != 0 {
				t.Errorf("a.Peers() after Close = %d, want 0", got)
			}
			if got := b.Peers(); got != 0 {
				t.Errorf("b.Peers() after a.Close = %d, want 0", got)
			}
			b.Notify()
			if woken(a, 50*time.Millisecond) {
				t.Error("a closed Bus was woken")
			}
		})
	}
}

// A marker removed by mistake (a peer took this process for dead, or the
// dir was wiped) is put back at the next rescan, so later members find it.
func TestOwnMarkerRewritten(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "wake")
	o := defaultOptions()
	o.rescan = time.Nanosecond
	a := openT(t, dir, o)
	removals := []func() error{func() error { return os.Remove(filepath.Join(dir, a.id)) }}
	if o.abstract { // a wiped dir takes a socket file with it, for good
		removals = append(removals, func() error { return os.RemoveAll(dir) })
	}
	for _, remove := range removals {
		if err := remove(); err != nil {
			t.Fatal(err)
		}
		a.Peers()
		if !exists(t, filepath.Join(dir, a.id)) {
			t.Fatal("own marker was not rewritten")
		}
	}
	b := openT(t, dir, defaultOptions())
	mustWake(t, a, "hello from b")
	if got := b.Peers(); got != 1 {
		t.Errorf("b.Peers() = %d, want 1", got)
	}
}

// A peer that never reads fills its queue; sends to it are dropped at once,
// its marker stays (it is alive), and the others are still woken.
func TestNotifyWithPeerThatNeverReads(t *testing.T) {
	for _, m := range modes() {
		t.Run(m.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "wake")
			a := openT(t, dir, m.opts)
			b := openT(t, dir, m.opts)

			// The stuck peer: bound, announced, never read.
			id := "ffeeddccbbaa0099"
			self := a.self
			self.Addr = addrFor(id, m.opts.abstract)
			addr, _ := a.resolve(self.Addr)
			stuck, err := net.ListenUnixgram("unixgram", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer stuck.Close()
			fillQueue(t, addr)
			if err := writeMarker(dir, id, self); err != nil {
				t.Fatal(err)
			}
			a.dirty.Store(true) // as its hello would

			done := make(chan struct{})
			go func() {
				defer close(done)
				for range 50 {
					a.Notify()
					if !woken(b, waitLong) {
						t.Error("a.Notify did not wake b beside a stuck peer")
						return
					}
				}
			}()
			select {
			case <-done:
			case <-time.After(4 * waitLong):
				t.Fatal("Notify rounds did not finish")
			}
			if got := a.Peers(); got != 2 {
				t.Errorf("a.Peers() = %d, want 2 (the stuck peer is alive)", got)
			}
			if !exists(t, filepath.Join(dir, id)) {
				t.Error("the marker of a live but stuck peer was removed")
			}
			// Each wake-up of b came from a round that also tried the
			// stuck peer, or from the one before it.
			if got := a.dropped.Load(); got < 49 {
				t.Errorf("dropped = %d, want at least 49", got)
			}
		})
	}
}

func TestNilBus(t *testing.T) {
	var b *Bus
	b.Notify()
	if b.C() != nil || b.Peers() != 0 || b.Close() != nil {
		t.Error("a nil Bus is not inert")
	}
}

func TestSocketPathTooLong(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", 120), "wake")
	_, err := open(dir, discard, options{abstract: false})
	if !errors.Is(err, ErrPathTooLong) {
		t.Fatalf("err = %v, want ErrPathTooLong", err)
	}
	if runtime.GOOS == "linux" {
		b, err := open(dir, discard, options{abstract: true})
		if err != nil {
			t.Fatalf("abstract socket with a long dir: %v", err)
		}
		_ = b.Close()
	}
}

func TestAddrID(t *testing.T) {
	cases := []struct {
		addr, want string
	}{
		{"@caduceus-wake-0123456789abcdef", "0123456789abcdef"},
		{"0123456789abcdef.sock", "0123456789abcdef"},
		{"@caduceus-wake-0123456789ABCDEF", ""},
		{"../0123456789abcdef.sock", ""},
		{"/tmp/0123456789abcdef.sock", ""},
		{"@other-0123456789abcdef", ""},
		{"", ""},
	}
	for _, tc := range cases {
		if got := addrID(tc.addr); got != tc.want {
			t.Errorf("addrID(%q) = %q, want %q", tc.addr, got, tc.want)
		}
	}
}

func addrFor(id string, abstract bool) string {
	if abstract {
		return abstractPref + id
	}
	return id + socketSuffix
}

// closedSocket leaves what a crashed member leaves: for a socket file, the
// file; for an abstract address, nothing.
func closedSocket(t *testing.T, dir, addr string) {
	t.Helper()
	name := addr
	if !strings.HasPrefix(addr, "@") {
		name = filepath.Join(dir, addr)
	}
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
}

// fillQueue sends to addr until its receive queue refuses more.
func fillQueue(t *testing.T, addr *net.UnixAddr) {
	t.Helper()
	c, err := net.DialUnix("unixgram", nil, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := range 100000 {
		_ = c.SetWriteDeadline(time.Now().Add(20 * time.Millisecond))
		if _, err := c.Write([]byte{msgNotify}); err != nil {
			if i == 0 {
				t.Fatalf("first send failed: %v", err)
			}
			return
		}
	}
	t.Fatal("the queue never filled")
}

// TestCrossProcess runs a member in a child process (this test binary, see
// TestHelperProcess): wake-ups cross the process boundary both ways, and
// when the child is killed without cleanup its marker is removed.
func TestCrossProcess(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "wake")
	o := defaultOptions()
	o.rescan = time.Nanosecond
	a := openT(t, dir, o)

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), "WAKE_HELPER_DIR="+dir)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe() // the child exits when it closes
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	lines := make(chan string, 4)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func(what string) string {
		t.Helper()
		select {
		case l := <-lines:
			return l
		case <-time.After(waitLong):
			t.Fatalf("the child did not report %s", what)
			return ""
		}
	}
	childID, ok := strings.CutPrefix(next("ready"), "ready ")
	if !ok || !validID(childID) {
		t.Fatalf("bad ready line from the child (id %q)", childID)
	}
	mustWake(t, a, "hello from the child")

	a.Notify()
	if got := next("its wake-up"); got != "woken" {
		t.Fatalf("child said %q, want woken", got)
	}
	mustWake(t, a, "the child's Notify")

	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	marker := filepath.Join(dir, childID)
	if !exists(t, marker) {
		t.Fatal("the killed child's marker is already gone")
	}
	a.Notify()
	deadline := time.Now().Add(waitLong)
	for exists(t, marker) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if exists(t, marker) {
		t.Error("the killed child's marker was not removed")
	}
}

// TestHelperProcess is the child of TestCrossProcess, not a test.
func TestHelperProcess(t *testing.T) {
	dir := os.Getenv("WAKE_HELPER_DIR")
	if dir == "" {
		t.Skip("helper for TestCrossProcess")
	}
	b, err := Open(dir, discard)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Println("ready", b.id)
	<-b.C()
	fmt.Println("woken")
	b.Notify()
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(0) // no Close: the parent kills us first, as in a crash
}
