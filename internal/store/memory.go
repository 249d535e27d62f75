package store

import "time"

// Memory (issue 16, h16-memory): what an agent remembers, per profile.

// Memory is one target ("notes" or "user") of one profile's memory: its
// entries in order. Scope is the profile's id; "" is the memory of runs
// with no profile. Version counts the writes, so that a change computed
// from a stale read is refused (PutMemory) rather than losing another
// writer's entries: runners on several hosts share one database.
type Memory struct {
	Scope     string
	Target    string
	Entries   []string
	Version   int64 // 0: never written
	UpdatedAt time.Time
}
