package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/caduceus-dev/caduceus/internal/cli"
)

// client runs one command of the command-line client against a server.
func client(cmd string, args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return cli.Main(ctx, cmd, args, cli.Std())
}
