package tool

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/caduceus-dev/caduceus/internal/proctrack"
)

const (
	// pipeGrace is how long we wait for output after the process group is
	// gone. Only a process that left the group (setsid, daemonising) can
	// still hold the pipes; we stop listening to it rather than hang.
	pipeGrace = 2 * time.Second
	// reapGrace bounds waiting for a SIGKILLed shell, which only fails to
	// die when stuck in the kernel (e.g. a dead NFS mount).
	reapGrace = 10 * time.Second
)

// shellRun is one command to execute.
type shellRun struct {
	command  string
	dir      string
	env      []string
	timeout  time.Duration
	outCap   int
	progress func(stream, text string)
	// track, when set, records the command while it runs: it runs in a
	// session of its own, so a runner that dies mid-command would leave it
	// running (see internal/proctrack).
	track *tracking
}

// tracking is what shellRun needs to record its command.
type tracking struct {
	reg            *proctrack.Registry
	session, runID string
}

// shellOutcome is what happened to it.
type shellOutcome struct {
	exitCode  int // -1 when killed by a signal or not reaped
	signal    string
	timedOut  bool
	cancelled bool
	duration  time.Duration
	output    string
	truncated bool
}

// run executes the command with /bin/sh in a new session, so it has no
// controlling terminal to prompt on and its whole process tree shares one
// process group we can kill. Nothing it starts outlives the call: after the
// shell exits, the rest of its group is killed too. Errors are failures to
// start.
func (r shellRun) run(ctx context.Context) (shellOutcome, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return shellOutcome{}, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return shellOutcome{}, err
	}
	defer outR.Close()
	defer errR.Close()

	cmd := exec.Command("/bin/sh", "-c", r.command)
	cmd.Dir = r.dir
	cmd.Env = r.env
	var tracked proctrack.Process
	if r.track != nil {
		// As for a background process (ProcessTable.start): recorded before
		// it starts, its pid once it has.
		tracked = proctrack.Process{ProcessID: "cmd_" + strings.ToLower(rand.Text()[:8]), RunID: r.track.runID,
			SessionID: r.track.session, Command: r.command, StartedAt: time.Now(), Deadline: time.Now().Add(r.timeout)}
		cmd.Env = append(slices.Clip(cmd.Env), r.track.reg.Env(tracked.ProcessID))
		if err := r.track.reg.Prepare(tracked); err != nil {
			outW.Close()
			errW.Close()
			return shellOutcome{}, &trackError{err: err}
		}
		// Once the group has been killed below, or it never started.
		defer func() { _ = r.track.reg.Untrack(tracked.ProcessID) }()
	}
	// *os.File outputs are handed to the child as is: exec starts no copying
	// goroutines, so Wait returns when the shell exits and we control how
	// long to keep reading.
	cmd.Stdout, cmd.Stderr = outW, errW
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}

	start := time.Now()
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		return shellOutcome{}, err
	}
	pid := cmd.Process.Pid
	if r.track != nil {
		tracked.PID = pid
		if err := r.track.reg.Track(tracked); err != nil {
			killGroup(pid)
			_ = cmd.Wait()
			return shellOutcome{}, &trackError{err: err}
		}
	}

	buf := newCapBuffer(r.outCap)
	var pump *progressPump
	if r.progress != nil {
		pump = newProgressPump(r.progress)
	}
	var readers sync.WaitGroup
	readers.Go(func() { copyStream(outR, "stdout", buf, pump) })
	readers.Go(func() { copyStream(errR, "stderr", buf, pump) })

	waitc := make(chan error, 1) // buffered: an abandoned waiter must not block
	go func() { waitc <- cmd.Wait() }()

	var out shellOutcome
	timer := time.NewTimer(r.timeout)
	defer timer.Stop()
	reaped := true
	select {
	case <-waitc:
	case <-timer.C:
		out.timedOut = true
		reaped = killAndReap(pid, waitc)
	case <-ctx.Done():
		out.cancelled = true
		reaped = killAndReap(pid, waitc)
	}
	out.duration = time.Since(start)
	// Background jobs the shell left would keep the pipes open and run
	// unsupervised; they go with it.
	killGroup(pid)

	done := make(chan struct{})
	go func() { readers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(pipeGrace):
		// Closing the read ends unblocks the readers (the files are polled).
		outR.Close()
		errR.Close()
		<-done
	}
	if pump != nil {
		pump.Close()
	}

	out.output, out.truncated = buf.String()
	out.exitCode = -1
	if reaped && cmd.ProcessState != nil {
		out.exitCode = cmd.ProcessState.ExitCode()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			out.signal = ws.Signal().String()
		}
	}
	return out, nil
}

// killAndReap kills the group and waits for the shell, reporting whether it
// was reaped within reapGrace.
func killAndReap(pid int, waitc <-chan error) bool {
	killGroup(pid)
	select {
	case <-waitc:
		return true
	case <-time.After(reapGrace):
		return false
	}
}

// killGroup SIGKILLs the process group led by pid. Errors are ignored:
// ESRCH, the common case, means nothing is left to kill.
func killGroup(pid int) {
	_ = syscall.Kill(-pid, syscall.SIGKILL)
}

func copyStream(f *os.File, stream string, buf *capBuffer, pump *progressPump) {
	b := make([]byte, 32<<10)
	for {
		n, err := f.Read(b)
		if n > 0 {
			buf.Write(b[:n])
			if pump != nil {
				pump.Write(stream, b[:n])
			}
		}
		if err != nil {
			return
		}
	}
}

// describeDuration prints whole seconds when exact ("30s", "2m0s").
func describeDuration(d time.Duration) string {
	if d%time.Second == 0 {
		return d.String()
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}
