package gitrepo

import (
	"context"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Log page sizes.
const (
	DefaultLogLimit = 50
	MaxLogLimit     = 500
)

// Commit is one entry of the log.
type Commit struct {
	Hash    string    `json:"hash"`
	Author  string    `json:"author"`
	Email   string    `json:"email"`
	Date    time.Time `json:"date"`
	Subject string    `json:"subject"`
}

// LogPage is a page of the log, newest first; Next is the cursor of the
// following page, "" after the last.
type LogPage struct {
	Commits []Commit `json:"commits"`
	Next    string   `json:"next,omitempty"`
}

// Log returns up to n commits reachable from HEAD (DefaultLogLimit when
// n <= 0, at most MaxLogLimit). A cursor pins the commit the first page
// started from, so later pages continue the same history even when HEAD
// has moved since. A branch with no commits has an empty log.
func (r *Repo) Log(ctx context.Context, n int, cursor string) (LogPage, error) {
	if n <= 0 {
		n = DefaultLogLimit
	}
	n = min(n, MaxLogLimit)
	base, skip, err := decodeLogCursor(cursor)
	if err != nil {
		return LogPage{}, err
	}
	if base == "" {
		h, err := r.Head(ctx)
		if err != nil {
			return LogPage{}, err
		}
		if h.Commit == "" {
			return LogPage{Commits: []Commit{}}, nil
		}
		base = h.Commit
	}
	out, err := r.run(ctx, runOpts{noFilters: true}, "log", "-z", "--no-show-signature", "--no-color",
		"--format=%H%x1f%an%x1f%ae%x1f%aI%x1f%s", "--skip="+strconv.Itoa(skip), "-n", strconv.Itoa(n+1), base, "--")
	if err != nil {
		return LogPage{}, err
	}
	page := LogPage{Commits: []Commit{}}
	for _, rec := range strings.Split(string(out), "\x00") {
		rec = strings.TrimPrefix(rec, "\n")
		if rec == "" {
			continue
		}
		f := strings.SplitN(rec, "\x1f", 5)
		if len(f) != 5 {
			return LogPage{}, fmt.Errorf("gitrepo: unexpected log record %q", rec)
		}
		date, err := time.Parse(time.RFC3339, f[3])
		if err != nil {
			return LogPage{}, fmt.Errorf("gitrepo: log date %q: %w", f[3], err)
		}
		page.Commits = append(page.Commits, Commit{Hash: f[0], Author: f[1], Email: f[2], Date: date, Subject: f[4]})
	}
	if len(page.Commits) > n {
		page.Commits = page.Commits[:n]
		page.Next = base + "." + strconv.Itoa(skip+n)
	}
	return page, nil
}

// decodeLogCursor reads "<hash>.<skip>".
func decodeLogCursor(c string) (string, int, error) {
	if c == "" {
		return "", 0, nil
	}
	h, s, ok := strings.Cut(c, ".")
	skip, err := strconv.Atoi(s)
	if _, herr := hex.DecodeString(h); !ok || err != nil || herr != nil || skip < 0 || (len(h) != 40 && len(h) != 64) {
		return "", 0, fmt.Errorf("%w: %q is not a cursor Log returned", ErrBadCursor, c)
	}
	return h, skip, nil
}
