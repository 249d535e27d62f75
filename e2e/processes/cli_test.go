package processes

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/provider/demo"
)

// cliResult is what one client command printed and how it exited.
type cliResult struct {
	stdout, stderr string
	code           int
}

// runCLI runs the binary's client command with stdin from a pipe (not a
// terminal) and the given environment on top of a clean one.
func runCLI(t *testing.T, stdin string, env []string, args ...string) cliResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	code := 0
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		// Errorf, not Fatalf: runCLI also runs off the test's goroutine.
		t.Errorf("caduceus %v: %v", args, err)
		code = -1
	}
	return cliResult{stdout: out.String(), stderr: errb.String(), code: code}
}

// `caduceus run --follow` against a live server prints the scripted
// answer as it streams, without colour on a pipe, and exits 0.
func TestCLIRunFollowPrintsAnswer(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Paced("Hello from the scripted model.", 5, 10))))
	r := runCLI(t, "", []string{"CADUCEUS_SERVER=" + s.URL}, "run", "--follow", "hello")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if r.stdout != "Hello from the scripted model.\n[run completed]\n" {
		t.Errorf("stdout = %q", r.stdout)
	}
	if strings.Contains(r.stdout+r.stderr, "\x1b[") {
		t.Errorf("colour on a pipe: %q", r.stdout+r.stderr)
	}
	if got := s.Sessions(t); len(got) != 1 {
		t.Errorf("sessions = %+v", got)
	}
	list := runCLI(t, "", nil, "sessions", "--server", s.URL)
	if list.code != 0 || !strings.Contains(list.stdout, got0(s.Sessions(t))) || !strings.Contains(list.stdout, "hello") {
		t.Errorf("sessions: exit %d\n%s%s", list.code, list.stdout, list.stderr)
	}
}

func got0(ss []e2etest.SessionJSON) string {
	if len(ss) == 0 {
		return "(none)"
	}
	return ss[0].ID
}

// --json prints one JSON event per line, only the followed run's, ending
// with run.done and then {"run": …} in its final state.
func TestCLIRunFollowJSON(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("Fine."))))
	r := runCLI(t, "", []string{"CADUCEUS_SERVER=" + s.URL}, "run", "hi", "--follow", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) < 3 {
		t.Fatalf("stdout = %q", r.stdout)
	}
	var runID string
	var types []string
	for _, l := range lines[:len(lines)-1] {
		var e struct {
			ID    int64  `json:"id"`
			RunID string `json:"run_id"`
			Type  string `json:"type"`
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil || e.ID == 0 {
			t.Fatalf("line %q: %v", l, err)
		}
		if runID == "" {
			runID = e.RunID
		}
		if e.RunID != runID {
			t.Errorf("event of another run: %q", l)
		}
		types = append(types, e.Type)
	}
	if types[len(types)-1] != "run.done" || !contains(types, "message.delta") {
		t.Errorf("types = %v", types)
	}
	var final struct {
		Run struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"run"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &final); err != nil || final.Run.ID != runID || final.Run.Status != "completed" {
		t.Errorf("last line %q: %v", lines[len(lines)-1], err)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// terminalCLI is the client running on a pseudo-terminal, as a person
// would run it.
type terminalCLI struct {
	t    *testing.T
	ctx  context.Context
	cmd  *exec.Cmd
	tty  *os.File
	out  chan string
	seen strings.Builder
}

func startTerminalCLI(t *testing.T, ctx context.Context, serverURL string, args ...string) *terminalCLI {
	t.Helper()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "CADUCEUS_SERVER=" + serverURL, "TERM=dumb"}
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tty.Close() })
	c := &terminalCLI{t: t, ctx: ctx, cmd: cmd, tty: tty, out: make(chan string, 1024)}
	go func() {
		defer close(c.out)
		buf := make([]byte, 4096)
		for {
			n, err := tty.Read(buf)
			if n > 0 {
				c.out <- string(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	return c
}

// waitFor reads the terminal until it shows what.
func (c *terminalCLI) waitFor(what string) {
	c.t.Helper()
	for !strings.Contains(c.seen.String(), what) {
		select {
		case chunk, ok := <-c.out:
			if !ok {
				c.t.Fatalf("terminal closed before %q:\n%s", what, c.seen.String())
			}
			c.seen.WriteString(chunk)
		case <-c.ctx.Done():
			c.t.Fatalf("no %q on the terminal:\n%s", what, c.seen.String())
		}
	}
}

func (c *terminalCLI) typeLine(s string) {
	c.t.Helper()
	if _, err := io.WriteString(c.tty, s+"\n"); err != nil {
		c.t.Fatal(err)
	}
}

// exit waits for the end of the run and the process, and checks the
// terminal shows each of want.
func (c *terminalCLI) exit(want ...string) {
	c.t.Helper()
	c.waitFor("[run ")
	if err := c.cmd.Wait(); err != nil {
		c.t.Fatalf("exit: %v\n%s", err, c.seen.String())
	}
	for chunk := range c.out {
		c.seen.WriteString(chunk)
	}
	for _, w := range want {
		if !strings.Contains(c.seen.String(), w) {
			c.t.Errorf("terminal lacks %q:\n%s", w, c.seen.String())
		}
	}
}

// A run that needs approval asks on the terminal; answering "o" there
// approves the call once and the run completes (exit 0).
func TestCLIApprovesOnTerminal(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(
		e2etest.Turn(e2etest.Text("Let me check."), e2etest.Call("run_command", `{"command":"echo from-the-tool"}`)),
		e2etest.Turn(e2etest.Text("The command printed it.")),
	))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := startTerminalCLI(t, ctx, s.URL, "run", "--follow", "please run it")
	c.waitFor("[o/s/a/d]")
	if !strings.Contains(c.seen.String(), "$ echo from-the-tool") {
		t.Errorf("no command line before the question:\n%s", c.seen.String())
	}
	c.typeLine("x") // not a choice: asked again
	c.waitFor("x\r\n")
	c.typeLine("o")
	c.exit("approved (once)", "from-the-tool", "The command printed it.", "[run completed]", "\x1b[")
}

// Denying on the terminal asks what to do instead and sends it as the
// deny note the model receives; a question is answered on the terminal.
func TestCLIDeniesAndAnswersOnTerminal(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(
		e2etest.Turn(e2etest.Call("run_command", `{"command":"rm -rf build"}`)),
		e2etest.Turn(e2etest.Call("clarify", `{"question":"Which target?","choices":["all","lib"]}`)),
		e2etest.Turn(e2etest.Text("Understood.")),
	))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := startTerminalCLI(t, ctx, s.URL, "run", "--follow", "clean up")
	c.waitFor("deny? [o")
	c.typeLine("d")
	c.waitFor("What should it do instead?")
	c.typeLine("use make clean")
	c.waitFor("? question: Which target?")
	c.waitFor("Answer: ")
	c.typeLine("lib")
	c.exit("denied: use make clean", "answered: lib", "Understood.", "[run completed]")
}

// A question answered elsewhere (the browser, another client) while the
// terminal asks it ends the question there; the run goes on.
func TestCLIAnsweredElsewhere(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(
		e2etest.Turn(e2etest.Call("run_command", `{"command":"echo elsewhere"}`)),
		e2etest.Turn(e2etest.Text("Went on.")),
	))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := startTerminalCLI(t, ctx, s.URL, "run", "--follow", "run it")
	c.waitFor("[o/s/a/d]")
	p := s.Pending(t)
	if len(p) != 1 {
		t.Fatalf("pending = %+v", p)
	}
	if code := e2etest.Do(t, "POST", s.URL+"/api/requests/"+p[0].ID+"/respond", map[string]string{"choice": "once"}, nil); code != 200 {
		t.Fatalf("respond: %d", code)
	}
	c.exit("approved (once)", "Went on.", "[run completed]")
}

// Without a terminal the client prints the request id; with --no-wait it
// leaves the run waiting, `caduceus approve` answers it, and following the
// session again sees it complete.
func TestCLIApproveFromAnotherCommand(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(
		e2etest.Turn(e2etest.Call("run_command", `{"command":"echo later"}`)),
		e2etest.Turn(e2etest.Text("Done later.")),
	))
	env := []string{"CADUCEUS_SERVER=" + s.URL}
	r := runCLI(t, "", env, "run", "--follow", "--no-wait", "run it")
	if r.code != 0 || !strings.Contains(r.stderr, "caduceus approve req_") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	pending := s.Pending(t)
	if len(pending) != 1 || !strings.Contains(r.stdout, "request: "+pending[0].ID) {
		t.Fatalf("pending %+v, stdout:\n%s", pending, r.stdout)
	}
	if a := runCLI(t, "", env, "answer", pending[0].ID, "yes"); a.code != 2 || !strings.Contains(a.stderr, "is an approval") {
		t.Errorf("answer an approval: exit %d %s", a.code, a.stderr)
	}
	if a := runCLI(t, "", env, "approve", pending[0].ID); a.code != 0 || a.stdout != "approved "+pending[0].ID+" (once)\n" {
		t.Fatalf("approve: exit %d %q %q", a.code, a.stdout, a.stderr)
	}
	if a := runCLI(t, "", env, "deny", pending[0].ID); a.code != 1 || !strings.Contains(a.stderr, "not_pending") {
		t.Errorf("second answer: exit %d %q", a.code, a.stderr)
	}
	s.WaitStatus(t, pending[0].RunID, "completed")
}

// A wrong token exits 4 with a message that says what to fix; so does a
// server that is not there. Bad usage exits 2 before any request.
func TestCLIErrors(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("never"))), e2etest.WithToken("the-right-token-0123456789"))
	cases := []struct {
		name string
		env  []string
		args []string
		code int
		want string
	}{
		{"wrong token", []string{"CADUCEUS_SERVER=" + s.URL, "CADUCEUS_TOKEN=wrong"}, []string{"run", "--follow", "hi"}, 4, "not authorised"},
		{"no token", nil, []string{"sessions", "--server", s.URL}, 4, "CADUCEUS_TOKEN"},
		{"nobody listening", nil, []string{"sessions", "--server", "http://127.0.0.1:1"}, 4, "cannot reach the server"},
		{"no prompt", nil, []string{"run", "--server", s.URL}, 2, "prompt is missing"},
		{"unknown flag", nil, []string{"run", "--bogus", "x"}, 2, "bogus"},
		{"profile with session", nil, []string{"run", "--session", "ses_x", "--profile", "prf_x", "x"}, 2, "--profile"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, "", tc.env, tc.args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d (want %d), stderr %q (want %q)", r.code, tc.code, r.stderr, tc.want)
			}
			if strings.Contains(r.stdout+r.stderr, "the-right-token") {
				t.Errorf("the token was printed")
			}
		})
	}
	right := []string{"CADUCEUS_TOKEN=the-right-token-0123456789", "CADUCEUS_SERVER=" + s.URL}
	if l := runCLI(t, "", right, "sessions", "--json"); l.code != 0 || !strings.Contains(l.stdout, `"sessions":[]`) {
		t.Errorf("refused commands made sessions, or the list failed: exit %d %q %q", l.code, l.stdout, l.stderr)
	}
	ok := runCLI(t, "", right, "run", "hi")
	if ok.code != 0 || !strings.HasPrefix(ok.stdout, "run run_") {
		t.Errorf("right token: exit %d %q %q", ok.code, ok.stdout, ok.stderr)
	}
}

// `caduceus jobs` on a server without scheduled jobs says so and exits 0;
// on one with them it lists them.
func TestCLIJobs(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script())
	r := runCLI(t, "", []string{"CADUCEUS_SERVER=" + s.URL}, "jobs")
	if r.code != 0 || (r.stdout != "this server has no scheduled jobs\n" && r.stdout != "no scheduled jobs\n") {
		t.Errorf("jobs: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	// The list shows a job's schedule in words and its next fire time.
	if c := e2etest.Do(t, "POST", s.URL+"/api/jobs", map[string]any{"name": "morning report", "prompt": "report",
		"schedule": map[string]any{"expr": "0 9 * * 1-5", "tz": "Europe/Berlin"}}, nil); c != http.StatusCreated {
		t.Fatalf("create job: %d", c)
	}
	r = runCLI(t, "", []string{"CADUCEUS_SERVER=" + s.URL}, "jobs")
	if r.code != 0 || !strings.Contains(r.stdout, "every weekday at 09:00, Europe/Berlin") || strings.Contains(r.stdout, "map[") ||
		!regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d`).MatchString(r.stdout) {
		t.Errorf("jobs with one: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
}

// run --follow exits with the run's outcome: 1 for a failed run, 3 for a
// cancelled one (here cancelled through the API while it waits for a
// person who is not at a terminal).
func TestCLIExitCodeFollowsTheRun(t *testing.T) {
	t.Parallel()
	t.Run("failed", func(t *testing.T) {
		t.Parallel()
		s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(demo.Step{Kind: demo.KindError, Code: "bad_request", Message: "the model refused"})))
		r := runCLI(t, "", []string{"CADUCEUS_SERVER=" + s.URL}, "run", "--follow", "hi")
		if r.code != 1 || !strings.Contains(r.stdout, "[run failed: provider_bad_request") {
			t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		t.Parallel()
		s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Call("run_command", `{"command":"echo never"}`))))
		done := make(chan cliResult, 1)
		go func() { done <- runCLI(t, "", []string{"CADUCEUS_SERVER=" + s.URL}, "run", "--follow", "hi") }()
		var p []e2etest.RequestJSON
		for deadline := time.Now().Add(30 * time.Second); len(p) == 0; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("no pending request")
			}
			p = s.Pending(t)
		}
		if code := e2etest.Do(t, "POST", s.URL+"/api/runs/"+p[0].RunID+"/cancel", nil, nil); code != 200 && code != 202 {
			t.Fatalf("cancel: %d", code)
		}
		r := <-done
		if r.code != 3 || !strings.Contains(r.stdout, "[run cancelled]") || !strings.Contains(r.stderr, p[0].ID) {
			t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
		}
	})
}

// A server restarted while run --follow waits drops its stream; the
// client reconnects with Last-Event-ID to the same address, misses and
// repeats nothing, and ends with the run.
func TestCLIFollowSurvivesServerRestart(t *testing.T) {
	t.Parallel()
	dataDir, ws := t.TempDir(), t.TempDir()
	sp := e2etest.WriteScript(t, e2etest.Script(
		e2etest.Turn(e2etest.Text("Before the restart."), e2etest.Call("run_command", `{"command":"echo across"}`)),
		e2etest.Turn(e2etest.Text("After the restart.")),
	))
	p := e2etest.StartServe(t, binary, dataDir, ws, sp, "--approval-mode", "manual")
	done := make(chan cliResult, 1)
	go func() { done <- runCLI(t, "", []string{"CADUCEUS_SERVER=" + p.URL}, "run", "--follow", "go") }()
	var pend []e2etest.RequestJSON
	for deadline := time.Now().Add(30 * time.Second); len(pend) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no pending request")
		}
		pend = p.Pending(t)
	}
	if err := p.Stop(t, syscall.SIGTERM); err != nil {
		t.Logf("stop: %v", err)
	}
	p2 := e2etest.StartServe(t, binary, dataDir, ws, sp, "--approval-mode", "manual", "--addr", strings.TrimPrefix(p.URL, "http://"))
	p2.WaitStatus(t, pend[0].RunID, "awaiting_approval")
	if c := e2etest.Do(t, "POST", p2.URL+"/api/requests/"+pend[0].ID+"/respond", map[string]string{"choice": "once"}, nil); c != 200 {
		t.Fatalf("respond: %d", c)
	}
	r := <-done
	if r.code != 0 || !strings.Contains(r.stderr, "reconnecting") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	lines := strings.Split(r.stdout, "\n")
	for _, once := range []string{"Before the restart.", "$ echo across", "  approved (once)", "After the restart.", "[run completed]"} {
		if n := countLines(lines, once); n != 1 {
			t.Errorf("%q printed %d times:\n%s", once, n, r.stdout)
		}
	}
}

func countLines(lines []string, s string) int {
	n := 0
	for _, l := range lines {
		if l == s {
			n++
		}
	}
	return n
}

// A question is answered with `caduceus answer`; approve and deny refuse
// a question (the server would take their choice as the answer), and
// answer refuses an approval.
func TestCLIAnswerAQuestion(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(
		e2etest.Turn(e2etest.Call("clarify", `{"question":"Which target?"}`)),
		e2etest.Turn(e2etest.Text("Building it.")),
	))
	env := []string{"CADUCEUS_SERVER=" + s.URL}
	r := runCLI(t, "", env, "run", "--follow", "--no-wait", "build")
	if r.code != 0 || !strings.Contains(r.stderr, "caduceus answer req_") || !strings.Contains(r.stdout, "? question: Which target?") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	p := s.Pending(t)
	if len(p) != 1 {
		t.Fatalf("pending = %+v", p)
	}
	if a := runCLI(t, "", env, "approve", p[0].ID); a.code != 2 || !strings.Contains(a.stderr, "is a question") {
		t.Errorf("approve a question: exit %d %q", a.code, a.stderr)
	}
	if a := runCLI(t, "", env, "answer", p[0].ID); a.code != 2 {
		t.Errorf("answer without text: exit %d %q", a.code, a.stderr)
	}
	if len(s.Pending(t)) != 1 {
		t.Fatal("a refused command answered the question")
	}
	if a := runCLI(t, "", env, "answer", p[0].ID, "the", "library"); a.code != 0 || a.stdout != "answered "+p[0].ID+"\n" {
		t.Fatalf("answer: exit %d %q %q", a.code, a.stdout, a.stderr)
	}
	s.WaitStatus(t, p[0].RunID, "completed")
	var got struct {
		Response string `json:"response"`
	}
	e2etest.Do(t, "GET", s.URL+"/api/requests/"+p[0].ID, nil, &got)
	if got.Response != "the library" {
		t.Errorf("response = %q", got.Response)
	}
}

// Ctrl-C stops following, not the run: exit 130 and the run still waits.
func TestCLIInterruptLeavesTheRun(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Call("run_command", `{"command":"echo stays"}`))))
	cmd := exec.Command(binary, "run", "--follow", "go")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "CADUCEUS_SERVER=" + s.URL}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var p []e2etest.RequestJSON
	for deadline := time.Now().Add(30 * time.Second); len(p) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatal("no pending request")
		}
		p = s.Pending(t)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 || !strings.Contains(errb.String(), "goes on on the server") {
		t.Errorf("exit %v, stderr %q", err, errb.String())
	}
	if r := s.Run(t, p[0].RunID); r.Status != "awaiting_approval" {
		t.Errorf("run after Ctrl-C: %s", r.Status)
	}
}

// --workspace, --model and --session reach the server: the new session
// works in the directory given (relative to the client's directory), and
// a second run goes to that session. A profile the server does not have
// is refused (exit 2) and creates nothing.
func TestCLISessionSettings(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	sub := ws + "/sub"
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("ok"))), e2etest.WithWorkspace(ws))
	env := []string{"CADUCEUS_SERVER=" + s.URL}
	if r := runCLI(t, "", env, "run", "--profile", "prf_01m7xycjnkfry445nd4sfrf5m3", "x"); r.code != 2 || !strings.Contains(r.stderr, "profile_not_found") {
		t.Errorf("unknown profile: exit %d %q", r.code, r.stderr)
	}
	if got := s.Sessions(t); len(got) != 0 {
		t.Fatalf("a refused run made sessions: %+v", got)
	}
	cmd := exec.Command(binary, "run", "--workspace", "sub", "--model", "demo", "--json", "first")
	cmd.Dir = ws
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("run --workspace: %v %s", err, out)
	}
	var first struct {
		Run struct {
			SessionID string `json:"session_id"`
			Model     string `json:"model"`
		} `json:"run"`
	}
	if err := json.Unmarshal(out, &first); err != nil || first.Run.Model != "demo" {
		t.Fatalf("run --json = %s (%v)", out, err)
	}
	var ses struct {
		Workspace string `json:"workspace"`
	}
	e2etest.Do(t, "GET", s.URL+"/api/sessions/"+first.Run.SessionID, nil, &ses)
	if ses.Workspace != sub {
		t.Errorf("workspace = %q, want %q", ses.Workspace, sub)
	}
	r := runCLI(t, "", env, "run", "--session", first.Run.SessionID, "--follow", "second")
	if r.code != 0 {
		t.Fatalf("second run: exit %d %q %q", r.code, r.stdout, r.stderr)
	}
	if runs := s.Runs(t, first.Run.SessionID); len(runs) != 2 {
		t.Errorf("runs of the session = %d, want 2", len(runs))
	}
}
