package proctrack

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// stat is what the registry needs from /proc/<pid>/stat.
type stat struct {
	state      byte // R, S, D, Z, X, ...
	pgrp       int
	startTicks uint64
}

// gone reports a process that has exited and only waits to be reaped.
func (s stat) gone() bool { return s.state == 'Z' || s.state == 'X' }

// readStat parses /proc/<pid>/stat. The command name (field 2) is in
// parentheses and may itself hold spaces and parentheses, so fields are
// counted from the last ')'.
func readStat(pid int) (stat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, err
	}
	return parseStat(b)
}

func parseStat(b []byte) (stat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return stat{}, fmt.Errorf("malformed stat %q", truncate(b))
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state), so field n is f[n-3].
	if len(f) < 20 || len(f[0]) != 1 {
		return stat{}, fmt.Errorf("malformed stat %q", truncate(b))
	}
	pgrp, err := strconv.Atoi(f[5-3])
	if err != nil {
		return stat{}, fmt.Errorf("malformed stat pgrp: %w", err)
	}
	start, err := strconv.ParseUint(f[22-3], 10, 64)
	if err != nil {
		return stat{}, fmt.Errorf("malformed stat starttime: %w", err)
	}
	return stat{state: f[0][0], pgrp: pgrp, startTicks: start}, nil
}

func truncate(b []byte) []byte {
	if len(b) > 80 {
		return b[:80]
	}
	return b
}

// hasEnv reports whether the process pid was started with entry (k=v) in
// its environment. A process that cannot be read (another user's, or one
// that has gone) does not have it.
func hasEnv(pid int, entry string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	want := []byte(entry)
	for kv := range bytes.SplitSeq(b, []byte{0}) {
		if bytes.Equal(kv, want) {
			return true
		}
	}
	return false
}

// pids lists the processes visible in /proc.
func pids() ([]int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, len(ents))
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && pid > 0 {
			out = append(out, pid)
		}
	}
	return out, nil
}

// selfOwner describes this process as the owner of records.
func selfOwner() (Owner, error) {
	pid := os.Getpid()
	st, err := readStat(pid)
	if err != nil {
		return Owner{}, fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return Owner{}, fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return Owner{}, fmt.Errorf("%w: %w", ErrUnsupported, err)
	}
	host, _ := os.Hostname()
	return Owner{PID: pid, StartTicks: st.startTicks, Host: host, Boot: strings.TrimSpace(string(boot)), PIDNS: ns}, nil
}
