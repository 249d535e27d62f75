package store

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
)

// Transient reports whether err is a storage failure that may pass on its
// own: the database busy or locked by another process (SQLite), a
// serialization failure or deadlock (PostgreSQL), the disk full, an I/O
// error, a database that cannot be reached or opened right now, a
// connection lost. A run that meets one is retried later, never failed
// (docs/ARCHITECTURE.md, "When the store fails"). Both stores' drivers are
// recognised by what their errors expose, not by their types: SQLite's
// carry a result code (Code() int), PostgreSQL's a SQLSTATE (SQLState()
// string).
func Transient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var coded interface{ Code() int }
	if errors.As(err, &coded) {
		switch coded.Code() & 0xff {
		case sqliteBusy, sqliteLocked, sqliteIOErr, sqliteFull, sqliteCantOpen:
			return true
		}
		return false
	}
	var pg interface{ SQLState() string }
	if errors.As(err, &pg) {
		return transientState(pg.SQLState())
	}
	// The connection to a database server broke or could not be made, or
	// the driver says the statement never reached the server (pgx marks
	// such errors SafeToRetry: a connection found closed, say).
	var ne net.Error
	var retry interface{ SafeToRetry() bool }
	return errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.As(err, &retry) && retry.SafeToRetry()
}

// transientState classifies a SQLSTATE (postgresql.org/docs/current/errcodes-appendix.html).
func transientState(s string) bool {
	switch {
	case strings.HasPrefix(s, "08"): // connection exception
		return true
	case strings.HasPrefix(s, "53"): // insufficient resources: disk full, out of memory, too many connections
		return true
	case strings.HasPrefix(s, "58"): // system error: I/O error
		return true
	}
	switch s {
	case "40001", // serialization_failure
		"40P01", // deadlock_detected
		"55P03", // lock_not_available
		"57014", // query_canceled (statement_timeout)
		"57P01", // admin_shutdown
		"57P02", // crash_shutdown
		"57P03", // cannot_connect_now (starting up, in recovery)
		"25006": // read_only_sql_transaction: a standby, until failover
		return true
	}
	return false
}

// Full reports whether err is the disk (or the database's quota) being full.
func Full(err error) bool {
	var coded interface{ Code() int }
	if errors.As(err, &coded) {
		return coded.Code()&0xff == sqliteFull
	}
	var pg interface{ SQLState() string }
	return errors.As(err, &pg) && pg.SQLState() == "53100" // disk_full
}

// SQLite primary result codes (sqlite.org/rescode.html).
const (
	sqliteBusy     = 5
	sqliteLocked   = 6
	sqliteIOErr    = 10
	sqliteFull     = 13
	sqliteCantOpen = 14
)
