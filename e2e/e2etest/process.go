package e2etest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BuildBinary builds cmd/caduceus into dir, with the race detector when
// race is set, and returns its path. Test packages that start processes
// call it from TestMain.
func BuildBinary(dir string, race bool) (string, error) {
	name, args := "caduceus-norace", []string{"build"}
	if race {
		name, args = "caduceus", append(args, "-race")
	}
	bin := filepath.Join(dir, name)
	out, err := exec.Command("go", append(args, "-o", bin, "github.com/caduceus-dev/caduceus/cmd/caduceus")...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build caduceus: %w\n%s", err, out)
	}
	return bin, nil
}

// Builds builds cmd/caduceus on first use, once per flavour (with or
// without -race), into a temporary directory that Close removes. Tests
// running in parallel wait for the one build.
type Builds struct {
	mu    sync.Mutex
	dir   string
	paths map[bool]string
}

// Get returns the binary, building it first if needed.
func (b *Builds) Get(tb testing.TB, race bool) string {
	tb.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if p, ok := b.paths[race]; ok {
		return p
	}
	if b.dir == "" {
		dir, err := os.MkdirTemp("", "caduceus-e2e")
		if err != nil {
			tb.Fatal(err)
		}
		b.dir = dir
	}
	p, err := BuildBinary(b.dir, race)
	if err != nil {
		tb.Fatal(err)
	}
	if b.paths == nil {
		b.paths = map[bool]string{}
	}
	b.paths[race] = p
	return p
}

// Close removes what was built.
func (b *Builds) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}

// Child is one Caduceus process started by a test.
type Child struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed when the process has exited
	err  error         // its exit error, once done is closed
}

// Launch starts bin with args and waits until ready accepts a line of its
// stdout, which it returns. The process is killed when the test ends, and
// its stderr (with the rest of its stdout) is printed if the test failed.
func Launch(tb testing.TB, bin, name string, args []string, ready func(line string) bool) (*Child, string) {
	tb.Helper()
	return LaunchEnv(tb, bin, name, args, nil, ready)
}

// LaunchEnv is Launch with env ("NAME=value") added to the test's
// environment, overriding what it holds.
func LaunchEnv(tb testing.TB, bin, name string, args, env []string, ready func(line string) bool) (*Child, string) {
	tb.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(append(os.Environ(), "CADUCEUS_TOKEN="), env...)
	// Should the test binary itself die (a panic, the -timeout), the
	// kernel takes the child with it rather than leaving it behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(tb.TempDir(), name+".log"))
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	c := &Child{name: name, cmd: cmd, log: logf.Name(), done: make(chan struct{})}
	linec := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		found := false
		for sc.Scan() {
			line := sc.Text()
			if !found && ready(line) {
				found = true
				linec <- line
				continue
			}
			fmt.Fprintf(logf, "stdout: %s\n", line)
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	tb.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-c.done
		if tb.Failed() {
			b, _ := os.ReadFile(c.log)
			tb.Logf("%s (pid %d) log:\n%s", name, cmd.Process.Pid, b)
		}
		logf.Close()
	})
	select {
	case line := <-linec:
		return c, line
	case <-c.done:
		b, _ := os.ReadFile(c.log)
		tb.Fatalf("%s exited before it was ready: %v\n%s", name, c.err, b)
	case <-time.After(30 * time.Second):
		tb.Fatalf("%s was not ready within 30s", name)
	}
	return nil, ""
}

// Stop sends sig and waits (generously) for the process to exit. It
// returns the exit error; SIGTERM must end the process with status 0.
func (c *Child) Stop(tb testing.TB, sig syscall.Signal) error {
	tb.Helper()
	if err := c.cmd.Process.Signal(sig); err != nil {
		tb.Fatalf("signal %s: %v", c.name, err)
	}
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		tb.Fatalf("%s did not exit within 30s of %s", c.name, sig)
	}
	if sig == syscall.SIGTERM && c.err != nil {
		tb.Fatalf("%s: graceful stop: %v", c.name, c.err)
	}
	return c.err
}

// PID is the process id.
func (c *Child) PID() int { return c.cmd.Process.Pid }

// Log returns what the process wrote so far: its stderr, and its stdout
// after the ready line (prefixed "stdout: ").
func (c *Child) Log(tb testing.TB) string {
	tb.Helper()
	b, err := os.ReadFile(c.log)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

// WebProc is `caduceus serve` as a separate process.
type WebProc struct {
	*Server
	Child *Child
}

// Stop signals the process; see Child.Stop.
func (w *WebProc) Stop(tb testing.TB, sig syscall.Signal) error { return w.Child.Stop(tb, sig) }

// RunnerProc is `caduceus runner`: ID and Version come from its ready
// line.
type RunnerProc struct {
	ID      string
	Version string
	Child   *Child
}

// Stop signals the process; see Child.Stop.
func (r *RunnerProc) Stop(tb testing.TB, sig syscall.Signal) error { return r.Child.Stop(tb, sig) }

// StartWeb runs the web tier alone (`serve --runner=none`); extra args
// come last, so they override the defaults.
func StartWeb(t *testing.T, bin, dataDir, ws, scriptPath string, extra ...string) *WebProc {
	t.Helper()
	return StartServe(t, bin, dataDir, ws, scriptPath, append([]string{"--runner=none"}, extra...)...)
}

// ProcLease is the lease of the processes StartServe and StartRunner
// start. Shorter leases made tests quick, but on a loaded machine (five
// -race test processes, and the checkpoints' git calls beside a run) a
// 2 s lease's renewal came late and the watchdog interrupted a live run.
const ProcLease = 4 * time.Second

// StartServe runs `bin serve` on dataDir with the test defaults (any
// port, lease ProcLease, no retries) and extra args, and waits until it
// serves.
func StartServe(tb testing.TB, bin, dataDir, ws, scriptPath string, extra ...string) *WebProc {
	tb.Helper()
	return StartServeEnv(tb, bin, nil, dataDir, ws, scriptPath, extra...)
}

// StartServeEnv is StartServe with env ("NAME=value": provider keys,
// CADUCEUS_TOKEN, ...) added to the process's environment.
func StartServeEnv(tb testing.TB, bin string, env []string, dataDir, ws, scriptPath string, extra ...string) *WebProc {
	tb.Helper()
	args := []string{"serve", "--addr", "127.0.0.1:0", "--data-dir", dataDir, "--workspace", ws,
		"--demo-script", scriptPath, "--lease", ProcLease.String(), "--max-retries", "0"}
	c, line := LaunchEnv(tb, bin, "web", append(args, extra...), env, func(l string) bool {
		return strings.Contains(l, " serving ")
	})
	t, _ := tb.(*testing.T)
	return &WebProc{Server: &Server{t: t, URL: trimServing(line), DataDir: dataDir, stop: func() {}}, Child: c}
}

// StartRunner runs `bin runner` on dataDir and waits for its ready line;
// extra args come last.
func StartRunner(tb testing.TB, bin, dataDir, ws, scriptPath string, extra ...string) *RunnerProc {
	tb.Helper()
	args := []string{"runner", "--data-dir", dataDir, "--workspace", ws, "--demo-script", scriptPath,
		"--lease", ProcLease.String(), "--grace", "5s"}
	var id, version string
	c, _ := Launch(tb, bin, "runner", append(args, extra...), func(l string) bool {
		// Caduceus <version> runner <runner-id> ready
		f := strings.Fields(l)
		if len(f) == 5 && f[0] == "Caduceus" && f[2] == "runner" && f[4] == "ready" {
			version, id = f[1], f[3]
			return true
		}
		return false
	})
	if !strings.HasPrefix(id, "rnr_") {
		tb.Fatalf("runner ready line has no runner id: %q", id)
	}
	return &RunnerProc{ID: id, Version: version, Child: c}
}

// KillPidFile kills, when the test ends, the process groups whose leaders
// wrote their pids into path: commands run by a runner live in their own
// session and survive a SIGKILLed runner.
func KillPidFile(t *testing.T, path string) {
	t.Cleanup(func() {
		b, _ := os.ReadFile(path)
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 1 {
				_ = syscall.Kill(-pid, syscall.SIGKILL)
			}
		}
	})
}

// StatusJSON is the payload of run.status, decoded here so the tests read
// the wire format rather than the Go types.
type StatusJSON struct {
	Status     string `json:"status"`
	Reason     string `json:"reason"`
	Retry      int    `json:"retry"`
	MaxRetries int    `json:"max_retries"`
	RetryAt    string `json:"retry_at"`
}

// StartedJSON is the payload of run.started.
type StartedJSON struct {
	RunnerID string `json:"runner_id"`
	Attempt  int    `json:"attempt"`
	Resumed  bool   `json:"resumed"`
}
