package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// fileLock holds an exclusive flock(2) on path until the returned func is
// called. The web tier (a person's save) and the runner processes of one
// host share the checkpoint directory; without a lock between processes
// their git calls on one shadow repository collide (git's index.lock, a
// first-use init) and a checkpoint fails instead of waiting. flock is
// released by the kernel when a process dies, so a crash leaves no stale
// lock. The wait polls so that ctx can end it.
func fileLock(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	wait := 2 * time.Millisecond
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("checkpoint: lock %s: %w", path, err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, fmt.Errorf("checkpoint: waiting for the workspace lock: %w", ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
}
