// Command caduceus is the Caduceus binary: `caduceus serve` runs the web
// server with an in-process runner; `caduceus version` prints the version.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/caduceus-dev/caduceus/internal/app"
	"github.com/caduceus-dev/caduceus/internal/config"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) == 0 {
		usage()
		return 2
	}
	switch args[0] {
	case "version", "--version", "-v":
		fmt.Println("caduceus", version)
		return 0
	case "serve":
		return serve(args[1:])
	case "help", "-h", "--help":
		usage()
		return 0
	default:
		fmt.Fprintf(os.Stderr, "caduceus: unknown command %q\n\n", args[0])
		usage()
		return 2
	}
}

func usage() {
	fmt.Fprint(os.Stderr, `Usage: caduceus <command> [flags]

Commands:
  serve     run the web server and an in-process runner
  version   print the version

Run 'caduceus serve -h' for the flags of serve.
`)
}

func serve(args []string) int {
	cfg, err := config.ParseServe(args, os.Getenv)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(os.Stderr, "caduceus:", err)
		return 2
	}
	cfg.Version = version
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	a, err := app.New(ctx, cfg, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, "caduceus:", err)
		return 1
	}
	fmt.Printf("Caduceus %s serving %s\n  data: %s\n  workspace: %s\n  model: demo (offline demo model: no provider configured)\n",
		version, a.URL(), cfg.DataDir, cfg.Workspace)
	if err := a.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "caduceus:", err)
		return 1
	}
	return 0
}
