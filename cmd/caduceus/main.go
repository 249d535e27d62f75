// Command caduceus is the Caduceus binary: `caduceus serve` runs the web
// server with an in-process runner (or, with --runner=none, the web tier
// alone); `caduceus runner` runs runs for a web tier on the same data dir;
// `caduceus backup` copies the database while it runs; `caduceus run`,
// `sessions`, `approve`, `deny`, `answer` and `jobs` are the command-line client of a
// running server (internal/cli); `caduceus version` prints the version.
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
	// Scheduled jobs name IANA time zones; the binary carries the zone
	// database so they do not depend on the host having one.
	_ "time/tzdata"

	"github.com/caduceus-dev/caduceus/internal/app"
	"github.com/caduceus-dev/caduceus/internal/config"
	"github.com/caduceus-dev/caduceus/internal/models"
	"github.com/caduceus-dev/caduceus/internal/secret"
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
	case "user":
		return runUser(args[1:])
	case "backup":
		return backup(args[1:])
	case "run", "sessions", "approve", "deny", "answer", "jobs":
		return client(args[0], args[1:])
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
  user      manage accounts: add <name> --role admin|operator|viewer,
            list, passwd <name>, disable <name>, enable <name>
            (--password-stdin reads the password from a pipe)
  backup    write a consistent copy of the SQLite database, also while it runs
  version   print the version

Client commands (speak to a running server: --server or CADUCEUS_SERVER,
--token or CADUCEUS_TOKEN):
  run "prompt"   send a message (new session unless --session); --follow
                 streams the run and asks its approvals on the terminal
  sessions       list sessions
  approve <req>  approve a request (--scope once|session|always)
  deny <req>     deny a request (--note what to do instead)
  answer <req> "text"  answer an agent's question
  jobs           list scheduled jobs

Run 'caduceus <command> -h' for its flags.
`)
}

func serve(args []string) int {
	env, err := loadEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "caduceus:", err)
		return 1
	}
	cfg, err := config.ParseServe(args, env.Getenv)
	if err != nil {
		return parseFailed(err)
	}
	hideSecrets(env, &cfg)
	return start(cfg, func(a *app.App) {
		runs := a.ModelLine()
		if cfg.Runner == config.RunnerNone {
			runs = "runs: executed by `caduceus runner` processes on this data dir"
		}
		fmt.Printf("Caduceus %s serving %s\n  data: %s\n  workspace: %s\n  %s\n",
			version, a.URL(), cfg.DataDir, cfg.Workspace, runs)
	})
}

func runRunner(args []string) int {
	env, err := loadEnv()
	if err != nil {
		fmt.Fprintln(os.Stderr, "caduceus:", err)
		return 1
	}
	cfg, err := config.ParseRunner(args, env.Getenv)
	if err != nil {
		return parseFailed(err)
	}
	hideSecrets(env, &cfg)
	return start(cfg, func(a *app.App) {
		fmt.Printf("Caduceus %s runner %s ready\n  data: %s\n", version, a.RunnerID(), cfg.DataDir)
		if u := a.MetricsURL(); u != "" {
			fmt.Printf("  metrics: %s\n", u)
		}
	})
}

// loadEnv makes the process non-dumpable (other processes of its user can
// no longer read its memory or environment through /proc) and reads the
// environment, with the secrets an earlier image of the process handed
// over (see hideSecrets).
func loadEnv() (*secret.Env, error) {
	if err := secret.NoDump(); err != nil {
		fmt.Fprintln(os.Stderr, "caduceus: warning:", err)
	}
	return secret.LoadEnv(os.Environ())
}

// hideSecrets re-executes the binary (same pid) without secrets in its
// environment when it holds any, so that a command the agent runs cannot
// read them in /proc/<pid>/environ: the access token, the provider keys,
// the database URL (it may hold a password), the variables the config
// file names as api_key_env and every variable whose name looks secret. It does not return then; the new image receives
// the values over a pipe and gets here with nothing left to hide. Where
// that fails the process runs on with a warning, its other protections
// intact. Every value hidden is also redacted from everything written.
func hideSecrets(env *secret.Env, cfg *config.Config) {
	names := []string{"CADUCEUS_TOKEN", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "CADUCEUS_DATABASE_URL", "CADUCEUS_SECRET_KEY"}
	if f, err := models.LoadFile(cfg.ConfigFile); err == nil {
		// A broken file is reported by the start that follows.
		names = append(names, f.KeyEnvNames()...)
	}
	if err := env.Hide(os.Args, names...); err != nil {
		fmt.Fprintln(os.Stderr, "caduceus: warning: secrets stay in the environment:", err)
	}
	cfg.Secrets = env.Secrets(names...)
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
