// Command caduceus is the Caduceus binary: `caduceus serve` runs the web
// server with an in-process runner (or, with --runner=none, the web tier
// alone); `caduceus runner` runs runs for a web tier on the same data dir;
// `caduceus backup` copies the database while it runs; `caduceus version`
// prints the version.
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
	case "runner":
		return runRunner(args[1:])
	case "backup":
		return backup(args[1:])
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
            (--runner=none: the web server only)
  runner    execute runs for the web servers sharing its data dir
  backup    write a consistent copy of the SQLite database, also while it runs
  version   print the version

Run 'caduceus serve -h' or 'caduceus runner -h' for their flags.
`)
}

func serve(args []string) int {
	cfg, err := config.ParseServe(args, os.Getenv)
	if err != nil {
		return parseFailed(err)
	}
	return start(cfg, func(a *app.App) {
		runs := "model: demo (offline demo model: no provider configured)"
		if cfg.Runner == config.RunnerNone {
			runs = "runs: executed by `caduceus runner` processes on this data dir"
		}
		fmt.Printf("Caduceus %s serving %s\n  data: %s\n  workspace: %s\n  %s\n",
			version, a.URL(), cfg.DataDir, cfg.Workspace, runs)
	})
}

func runRunner(args []string) int {
	cfg, err := config.ParseRunner(args, os.Getenv)
	if err != nil {
		return parseFailed(err)
	}
	return start(cfg, func(a *app.App) {
		fmt.Printf("Caduceus %s runner %s ready\n  data: %s\n", version, a.RunnerID(), cfg.DataDir)
		if u := a.MetricsURL(); u != "" {
			fmt.Printf("  metrics: %s\n", u)
		}
	})
}

func parseFailed(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintln(os.Stderr, "caduceus:", err)
	return 2
}

// start assembles the process, announces it and runs it until SIGINT or
// SIGTERM, which stop it gracefully.
func start(cfg config.Config, announce func(*app.App)) int {
	cfg.Version = version
	log := app.NewLogger(os.Stderr, cfg.LogFormat, slog.LevelInfo)
	routeOTelErrors(log)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	a, err := app.New(ctx, cfg, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, "caduceus:", err)
		return 1
	}
	announce(a)
	if err := a.Run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "caduceus:", err)
		return 1
	}
	return 0
}
