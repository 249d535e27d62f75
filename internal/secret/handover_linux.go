//go:build linux

package secret

import (
	"fmt"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// selfExe is the running binary even when its file was replaced or
// deleted since it started (a rebuild under `go run`).
const selfExe = "/proc/self/exe"

// reexec writes payload into a pipe whose read end survives exec and
// replaces the process image with selfExe run with argv and env plus
// FDVar naming that descriptor. It returns only on failure.
func reexec(argv, env []string, payload []byte) error {
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("hand over secrets: %w", err)
	}
	defer r.Close() // reached only when exec failed
	// Nobody reads before exec, so the pipe must hold the whole payload;
	// an environment rarely exceeds the default 64 KiB, and the pipe grows
	// up to /proc/sys/fs/pipe-max-size when one does.
	if size, err := unix.FcntlInt(w.Fd(), unix.F_GETPIPE_SZ, 0); err == nil && size < len(payload) {
		if _, err := unix.FcntlInt(w.Fd(), unix.F_SETPIPE_SZ, len(payload)); err != nil {
			w.Close()
			return fmt.Errorf("hand over secrets: %d bytes do not fit in a pipe: %w", len(payload), err)
		}
	}
	_, err = w.Write(payload)
	w.Close()
	if err != nil {
		return fmt.Errorf("hand over secrets: %w", err)
	}
	fd := r.Fd()
	// os.Pipe opens with close-on-exec; this end must cross the exec.
	if _, err := unix.FcntlInt(fd, unix.F_SETFD, 0); err != nil {
		return fmt.Errorf("hand over secrets: %w", err)
	}
	env = append(env, FDVar+"="+strconv.Itoa(int(fd)))
	if err := syscall.Exec(selfExe, argv, env); err != nil {
		return fmt.Errorf("re-executing %s without secrets in the environment: %w", selfExe, err)
	}
	return nil
}

// NoDump makes the process non-dumpable: no core dump, and other processes
// of the same user can no longer read its memory, environment or file
// descriptors through /proc or attach a debugger. (Root still can: that is
// why Hide also removes the secrets from the environment.) The setting is
// reset by exec, so each image calls it.
func NoDump() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_DUMPABLE, 0): %w", err)
	}
	return nil
}

// restoreName sets the process's name (comm, at most 15 bytes) as ps and
// pgrep show it. /proc/self/comm is the thread group leader's, whichever
// thread writes it (prctl PR_SET_NAME would name only the calling
// thread). A failure only leaves the name "exe".
func restoreName(name string) {
	if len(name) > 15 {
		name = name[:15]
	}
	_ = os.WriteFile("/proc/self/comm", []byte(name), 0)
}
