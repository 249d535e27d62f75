package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/caduceus-dev/caduceus/internal/config"
	"github.com/caduceus-dev/caduceus/internal/store/sqlite"
)

// backup writes a consistent copy of the SQLite database, while Caduceus
// runs or not. PostgreSQL has its own tool.
func backup(args []string) int {
	b, err := config.ParseBackup(args, os.Getenv)
	if err != nil {
		return parseFailed(err)
	}
	if b.Postgres() {
		// The URL is not printed: it may hold a password.
		fmt.Fprint(os.Stderr, `caduceus backup: the database is PostgreSQL; back it up with pg_dump, e.g.
  pg_dump --format=custom --file=caduceus.dump "$CADUCEUS_DATABASE_URL"
and restore it with pg_restore (docs/DEPLOY.md).
`)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	n, err := sqlite.Backup(ctx, filepath.Join(b.DataDir, sqlite.FileName), b.Dest)
	if err != nil {
		fmt.Fprintln(os.Stderr, "caduceus backup:", err)
		return 1
	}
	fmt.Printf("backup written: %s, %s; integrity check ok\n", b.Dest, size(n))
	return 0
}

// size is n bytes in the largest unit that keeps it above 1.
func size(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB (%d bytes)", float64(n)/float64(div), "KMGTPE"[exp], n)
}
