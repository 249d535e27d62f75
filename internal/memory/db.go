package memory

// Memory per agent profile (issue 16, h16-memory), kept in the database.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/caduceus-dev/caduceus/internal/store"
)

// Database is what a store kept in the database needs of it.
type Database interface {
	GetMemory(ctx context.Context, scope, target string) (store.Memory, error)
	Write(ctx context.Context, fn func(store.Tx) error) error
}

type rows struct {
	db    Database
	scope string
	now   func() time.Time
}

// InStore returns the memory of scope (a profile's id; "" for runs with no
// profile) kept in db. now stamps the writes; nil is time.Now.
func InStore(db Database, scope string, now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return NewBacked(rows{db: db, scope: scope, now: now})
}

func (r rows) Load(ctx context.Context, t Target) ([]string, int64, error) {
	m, err := r.db.GetMemory(ctx, r.scope, string(t))
	if err != nil {
		return nil, 0, fmt.Errorf("memory: read %s: %w", t, err)
	}
	return m.Entries, m.Version, nil
}

func (r rows) Save(ctx context.Context, t Target, entries []string, version int64) error {
	err := r.db.Write(ctx, func(tx store.Tx) error {
		return tx.PutMemory(ctx, store.Memory{Scope: r.scope, Target: string(t), Entries: entries, Version: version, UpdatedAt: r.now()})
	})
	if errors.Is(err, store.ErrConflict) {
		return ErrStale
	}
	if err != nil {
		return fmt.Errorf("memory: write %s: %w", t, err)
	}
	return nil
}

// ImportedSuffix is added to a memory file's name once Import has moved
// its entries into the database, so it is imported once and stays on disk
// for the person to check.
const ImportedSuffix = ".imported"

// Import moves the entries of the memory files in dir (the single memory
// of servers before profiles) into dst, once: a target dst already has
// entries for keeps them, and every file read is renamed with
// ImportedSuffix. It returns how many entries were imported.
func Import(ctx context.Context, dir string, dst *Store) (int, error) {
	src := New(dir)
	n := 0
	for _, t := range Targets() {
		path := src.Path(t)
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		entries, err := src.List(ctx, t)
		if err != nil {
			return n, err
		}
		have, version, err := dst.backend.Load(ctx, t)
		if err != nil {
			return n, err
		}
		if len(have) == 0 && len(entries) > 0 {
			// Written by hand, the files may exceed the limits: they are
			// taken as they are, as Render would have shown them.
			if err := dst.backend.Save(ctx, t, entries, version); err != nil {
				return n, err
			}
			n += len(entries)
		}
		if err := os.Rename(path, path+ImportedSuffix); err != nil {
			return n, fmt.Errorf("memory: import %s: %w", t.File(), err)
		}
	}
	return n, nil
}

// Adopt moves the entries of src into dst, target by target, where dst
// has none, and empties src of them: the memory of runs with no profile
// (imported before any profile was the default) becomes the default
// profile's once there is one. A target dst already has entries for is
// left in both. It returns how many entries moved.
func Adopt(ctx context.Context, src, dst *Store) (int, error) {
	n := 0
	for _, t := range Targets() {
		entries, version, err := src.backend.Load(ctx, t)
		if err != nil || len(entries) == 0 {
			if err != nil {
				return n, err
			}
			continue
		}
		have, dv, err := dst.backend.Load(ctx, t)
		if err != nil {
			return n, err
		}
		if len(have) > 0 {
			continue
		}
		if err := dst.backend.Save(ctx, t, entries, dv); err != nil {
			return n, err
		}
		// Emptied over the version read: a change made meanwhile is kept
		// (and adopted at the next start).
		if err := src.backend.Save(ctx, t, nil, version); err != nil && !errors.Is(err, ErrStale) {
			return n, err
		}
		n += len(entries)
	}
	return n, nil
}
