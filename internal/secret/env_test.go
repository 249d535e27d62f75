package secret

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// helperVar makes the test binary act as the process under test
// (TestHandoverHelper) instead of running the tests.
const helperVar = "CADUCEUS_HANDOVER_HELPER"

// handoverReport is what the helper's second image says about itself.
type handoverReport struct {
	PID      int               `json:"pid"`
	Environ  string            `json:"environ"` // /proc/self/environ
	Values   map[string]string `json:"values"`  // through Env.Getenv
	Dumpable int               `json:"dumpable"`
	FDOpen   bool              `json:"fd_open"`
	Secrets  []string          `json:"secrets"`
	Comm     string            `json:"comm"` // /proc/self/comm: the name ps shows
}

// TestHandoverHelper is the process under test, started by TestHandover:
// its first image hides the secrets and re-executes itself; the second
// reports what it sees.
func TestHandoverHelper(t *testing.T) {
	if os.Getenv(helperVar) == "" {
		t.Skip("helper process for TestHandover")
	}
	fail := func(err error) {
		fmt.Println("HELPER-ERROR:", err)
		os.Exit(3)
	}
	if err := NoDump(); err != nil {
		fail(err)
	}
	env, err := LoadEnv(os.Environ())
	if err != nil {
		fail(err)
	}
	if !env.Received() {
		if err := env.Hide(os.Args, "GATEWAY_LLM"); err != nil {
			fail(err)
		}
		fmt.Println("NOTHING-HIDDEN")
		os.Exit(0)
	}
	environ, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		fail(err)
	}
	dumpable, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	if err != nil {
		fail(err)
	}
	comm, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		fail(err)
	}
	fd, _ := strconv.Atoi(env.Getenv(FDVar))
	// The number may be reused since; the pipe must be gone.
	link, _ := os.Readlink(filepath.Join("/proc/self/fd", strconv.Itoa(fd)))
	rep := handoverReport{PID: os.Getpid(), Environ: string(environ), Values: map[string]string{}, Dumpable: dumpable,
		FDOpen: strings.HasPrefix(link, "pipe:"), Secrets: env.Secrets("GATEWAY_LLM"),
		Comm: strings.TrimSpace(string(comm))}
	for _, k := range []string{"CADUCEUS_TOKEN", "OPENAI_API_KEY", "GATEWAY_LLM", "ODD_SECRET", "BIG_KEY", "PLAIN", "EMPTY_TOKEN"} {
		rep.Values[k] = env.Getenv(k)
	}
	b, _ := json.Marshal(rep)
	fmt.Printf("HANDOVER:%s\n", b)
	os.Exit(0)
}

// runHelper starts the helper with env and returns its output.
func runHelper(t *testing.T, env []string) (pid int, out string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHandoverHelper$", "-test.count=1")
	cmd.Env = append([]string{helperVar + "=1", "PATH=" + os.Getenv("PATH")}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid = cmd.Process.Pid
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	return pid, stdout.String()
}

// The secrets leave the environment: the exec'd image's
// /proc/self/environ holds none of them, the values arrive intact through
// the pipe, which is closed afterwards, the pid is the same and the
// process is not dumpable.
func TestHandover(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("re-executing is Linux-only")
	}
	big := "bk-" + strings.Repeat("0123456789abcdef", 6250) // 100 KB: more than a pipe holds by default
	secrets := map[string]string{
		"CADUCEUS_TOKEN": "tok-9f8e7d6c5b4a-handover",
		"OPENAI_API_KEY": "sk-handover-1234567890abcdef",
		// Named by a config file's api_key_env: hidden though its name
		// looks harmless.
		"GATEWAY_LLM": "gw-handover-0a1b2c3d4e5f",
		"ODD_SECRET":  "line one\nline=two\tthree ünïcode",
		"BIG_KEY":     big,
	}
	env := []string{"PLAIN=visible", "EMPTY_TOKEN="}
	for k, v := range secrets {
		env = append(env, k+"="+v)
	}
	pid, out := runHelper(t, env)
	_, js, ok := strings.Cut(out, "HANDOVER:")
	if !ok {
		t.Fatalf("no report from the helper's second image:\n%s", out)
	}
	js, _, _ = strings.Cut(js, "\n")
	var rep handoverReport
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.PID != pid {
		t.Errorf("the second image runs as pid %d, the process started as %d", rep.PID, pid)
	}
	if !strings.Contains(rep.Environ, "PLAIN=visible\x00") || !strings.Contains(rep.Environ, FDVar+"=") {
		t.Errorf("the second image's environment lacks what it should keep: %q", rep.Environ)
	}
	for k, v := range secrets {
		if rep.Values[k] != v {
			t.Errorf("%s arrived as %.40q, want %.40q", k, rep.Values[k], v)
		}
		if strings.Contains(rep.Environ, k+"=") || strings.Contains(rep.Environ, v[:12]) {
			t.Errorf("/proc/self/environ still holds %s", k)
		}
	}
	if rep.Values["PLAIN"] != "visible" {
		t.Errorf("PLAIN = %q", rep.Values["PLAIN"])
	}
	if strings.Contains(rep.Environ, "EMPTY_TOKEN") {
		t.Error("an empty secret-named variable stayed in the environment")
	}
	if rep.Dumpable != 0 {
		t.Errorf("dumpable = %d after NoDump", rep.Dumpable)
	}
	if rep.FDOpen {
		t.Error("the handover descriptor is still open")
	}
	// The exec goes through /proc/self/exe, which would name it "exe".
	if want := filepath.Base(os.Args[0]); len(want) > 15 && rep.Comm != want[:15] || len(want) <= 15 && rep.Comm != want {
		t.Errorf("the second image is named %q in ps, want %q", rep.Comm, want)
	}
	want := slices.Sorted(func(yield func(string) bool) {
		for _, v := range secrets {
			if !yield(v) {
				return
			}
		}
	})
	if !slices.Equal(rep.Secrets, want) {
		t.Errorf("Secrets() has %d values, want the %d hidden ones", len(rep.Secrets), len(want))
	}

	// Without secrets nothing is re-executed.
	if _, out := runHelper(t, []string{"PLAIN=visible", "EMPTY_TOKEN="}); !strings.Contains(out, "NOTHING-HIDDEN") {
		t.Errorf("helper without secrets said:\n%s", out)
	}
}

func TestLoadEnvRefusesABadDescriptor(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "notapipe")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, v := range []string{"x", "1", "-4", strconv.Itoa(int(f.Fd())), "987654"} {
		if _, err := LoadEnv([]string{FDVar + "=" + v, "A=b"}); err == nil {
			t.Errorf("%s=%s accepted", FDVar, v)
		}
	}
	e, err := LoadEnv([]string{"A=b", "OPENAI_API_KEY=sk-x", "junk"})
	if err != nil || e.Getenv("A") != "b" || e.Getenv("OPENAI_API_KEY") != "sk-x" || e.Received() {
		t.Fatalf("plain environment: %v %+v", err, e)
	}
	// A second image never re-executes, whatever its environment holds.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	w.Write(encode(map[string]string{"K_TOKEN": "v"}))
	w.Close()
	e, err = LoadEnv([]string{FDVar + "=" + strconv.Itoa(int(r.Fd())), "OTHER_TOKEN=still-here"})
	if err != nil || e.Getenv("K_TOKEN") != "v" {
		t.Fatalf("handover: %v", err)
	}
	if err := e.Hide([]string{"/nonexistent"}); err != nil {
		t.Fatalf("Hide in a second image: %v", err)
	}
	if _, err := decode([]byte("K=v")); err == nil {
		t.Error("a truncated handover decoded")
	}
	if _, err := decode([]byte("=v\x00")); err == nil {
		t.Error("a nameless entry decoded")
	}
}
