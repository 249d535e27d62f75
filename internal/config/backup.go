package config

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
)

// Backup is the resolved configuration of `caduceus backup`.
type Backup struct {
	DataDir string
	// Database is the database URL (CADUCEUS_DATABASE_URL); a PostgreSQL
	// one is backed up with pg_dump, not by Caduceus.
	Database string
	Dest     string
}

// ParseBackup parses `backup [flags] <dest-file>`.
func ParseBackup(args []string, getenv func(string) string) (Backup, error) {
	var b Backup
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: caduceus backup [flags] <dest-file>\n\nWrites a consistent copy of the SQLite database, also while Caduceus runs.")
		fs.PrintDefaults()
	}
	fs.StringVar(&b.DataDir, "data-dir", envOr(getenv, "CADUCEUS_DATA_DIR", defaultDataDir(getenv)), "directory of the database (env CADUCEUS_DATA_DIR)")
	fs.StringVar(&b.Database, "database", getenv("CADUCEUS_DATABASE_URL"), "database URL; PostgreSQL is backed up with pg_dump (env CADUCEUS_DATABASE_URL)")
	if err := fs.Parse(args); err != nil {
		return b, err
	}
	switch fs.NArg() {
	case 0:
		return b, errors.New("backup: name the file to write, e.g. caduceus backup caduceus-backup.db")
	case 1:
		b.Dest = fs.Arg(0)
	default:
		return b, fmt.Errorf("backup: unexpected argument %q (flags go before the file)", fs.Arg(1))
	}
	if b.DataDir == "" && !b.Postgres() {
		return b, errors.New("no data directory: set --data-dir or CADUCEUS_DATA_DIR (HOME is not set)")
	}
	return b, nil
}

// Postgres reports whether the database is a PostgreSQL one.
func (b Backup) Postgres() bool {
	return strings.HasPrefix(b.Database, "postgres://") || strings.HasPrefix(b.Database, "postgresql://")
}
