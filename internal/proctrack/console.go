package proctrack

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// EndedTTL is how long the note of a process killed by a sweep or from the
// console is kept, so that the console can say what happened to it.
const EndedTTL = 10 * time.Minute

// endedExt names the note of a killed process. Records() and the sweep's
// record loop do not read it: it describes nothing left to kill.
const endedExt = ".ended"

// The status of a listed process.
const (
	StatusRunning   = "running"   // its runner (or web tier) lives
	StatusStarting  = "starting"  // recorded, its pid not yet
	StatusOrphaned  = "orphaned"  // its runner is gone, it is not
	StatusKilled    = "killed"    // killed by a sweep or from the console
	StatusElsewhere = "elsewhere" // recorded by another host or pid namespace: not ours to judge
)

// Listed is a record as the console shows it.
type Listed struct {
	Record
	Status string `json:"status"`
	// EndedAt and Why are set for StatusKilled.
	EndedAt time.Time `json:"ended_at,omitzero"`
	Why     string    `json:"why,omitempty"`
}

// ended is the content of a note of a killed process.
type ended struct {
	Record
	EndedAt time.Time `json:"ended_at"`
	Why     string    `json:"why"`
}

// List returns what the records of the directory describe, with the notes
// of the processes killed in the last EndedTTL, oldest first. Records of an
// earlier boot are left out: their processes are gone.
func (r *Registry) List() ([]Listed, error) {
	ents, err := os.ReadDir(r.dir)
	if err != nil {
		return nil, fmt.Errorf("proctrack: %w", err)
	}
	now := time.Now()
	var out []Listed
	for _, e := range ents {
		name := e.Name()
		path := filepath.Join(r.dir, name)
		switch {
		case strings.HasPrefix(name, "."):
		case strings.HasSuffix(name, endedExt):
			var en ended
			b, err := os.ReadFile(path)
			if err != nil || json.Unmarshal(b, &en) != nil || now.Sub(en.EndedAt) > EndedTTL {
				continue
			}
			out = append(out, Listed{Record: en.Record, Status: StatusKilled, EndedAt: en.EndedAt, Why: en.Why})
		case isRecordName(name):
			rec, err := readRecord(path)
			if err != nil {
				continue
			}
			if l, ok := r.judge(rec); ok {
				out = append(out, l)
			}
		}
	}
	slices.SortFunc(out, func(a, b Listed) int {
		if c := a.StartedAt.Compare(b.StartedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ProcessID, b.ProcessID)
	})
	return out, nil
}

// judge says what a record's process is now.
func (r *Registry) judge(rec Record) (Listed, bool) {
	switch r.where(rec.Owner) {
	case elsewhere:
		return Listed{Record: rec, Status: StatusElsewhere}, true
	case earlierBoot:
		return Listed{}, false
	}
	if alive(rec.Owner.PID, rec.Owner.StartTicks) {
		if rec.PID == 0 {
			return Listed{Record: rec, Status: StatusStarting}, true
		}
		return Listed{Record: rec, Status: StatusRunning}, true
	}
	if !r.anyAlive(rec) {
		return Listed{}, false // the next sweep removes the record
	}
	return Listed{Record: rec, Status: StatusOrphaned}, true
}

// ErrNotFound is KillAny's answer for a process no record names.
var ErrNotFound = errors.New("proctrack: no such process")

// KillAny SIGKILLs what is left of the process processID, whichever
// runner of this host recorded it, for a person killing it from the
// console. Its record goes (its runner, if alive, sees the end as it
// would any other) and a note says it was killed. A process of another
// host is not ours to kill (ErrNotFound); a process killed already is
// reported again, not an error: a kill is idempotent.
func (r *Registry) KillAny(processID, why string) (Listed, error) {
	if !validName(processID) {
		return Listed{}, ErrNotFound
	}
	notes, _ := filepath.Glob(filepath.Join(r.dir, "*."+processID+endedExt))
	recs, _ := filepath.Glob(filepath.Join(r.dir, "*."+processID+recordExt))
	for _, path := range recs {
		rec, err := readRecord(path)
		if err != nil || r.where(rec.Owner) != local {
			continue
		}
		r.kill(rec)
		at := r.noteEnded(rec, why)
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return Listed{}, fmt.Errorf("proctrack: %w", err)
		}
		return Listed{Record: rec, Status: StatusKilled, EndedAt: at, Why: why}, nil
	}
	for _, path := range notes {
		var en ended
		if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &en) == nil {
			return Listed{Record: en.Record, Status: StatusKilled, EndedAt: en.EndedAt, Why: en.Why}, nil
		}
	}
	return Listed{}, ErrNotFound
}

// noteEnded writes the note of rec's process having been killed, and
// returns when. A note that cannot be written loses only what the console
// would have said about it.
func (r *Registry) noteEnded(rec Record, why string) time.Time {
	at := time.Now().UTC()
	b, err := json.Marshal(ended{Record: rec, EndedAt: at, Why: why})
	if err != nil {
		return at
	}
	f, err := os.CreateTemp(r.dir, tmpPrefix+"*")
	if err != nil {
		return at
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(r.dir, rec.RunnerID+"."+rec.ProcessID+endedExt))
	}
	if err != nil {
		_ = os.Remove(f.Name())
		r.log.Warn("noting a killed background process", "process_id", rec.ProcessID, "err", err)
	}
	return at
}
