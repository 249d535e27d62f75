package store

import "errors"

// Transient reports whether err is a storage failure that may pass on its
// own: the database busy or locked by another process, the disk full, an
// I/O error, a file that cannot be opened right now. A run that meets one
// is retried later, never failed (docs/ARCHITECTURE.md, "When the store
// fails").
func Transient(err error) bool {
	// The SQLite driver's errors carry the extended result code; its low
	// byte is the primary code.
	var coded interface{ Code() int }
	if !errors.As(err, &coded) {
		return false
	}
	switch coded.Code() & 0xff {
	case sqliteBusy, sqliteLocked, sqliteIOErr, sqliteFull, sqliteCantOpen:
		return true
	}
	return false
}

// Full reports whether err is the disk (or the database's quota) being full.
func Full(err error) bool {
	var coded interface{ Code() int }
	return errors.As(err, &coded) && coded.Code()&0xff == sqliteFull
}

// SQLite primary result codes (sqlite.org/rescode.html).
const (
	sqliteBusy     = 5
	sqliteLocked   = 6
	sqliteIOErr    = 10
	sqliteFull     = 13
	sqliteCantOpen = 14
)
