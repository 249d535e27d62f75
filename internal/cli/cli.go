// Package cli is the command-line client of a Caduceus server: `caduceus
// run`, `sessions`, `approve`, `deny`, `answer` and `jobs` speak the HTTP API of a
// running server (local or remote) with a token, like any other client.
// It holds no state of its own: the server is the truth.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"golang.org/x/term"
)

// Exit codes of the client commands (documented in README.md).
const (
	ExitOK          = 0 // done; for run --follow: the run completed
	ExitFailed      = 1 // the run failed, or the server refused the request
	ExitUsage       = 2 // bad flags or arguments, or input the server refused as invalid
	ExitStopped     = 3 // the run was cancelled or expired
	ExitUnreachable = 4 // the server cannot be reached or refused the credential
	// ExitInterrupted is the shell's code for SIGINT: the client was
	// stopped (Ctrl-C); a run it followed goes on on the server.
	ExitInterrupted = 130
)

// DefaultServer is where the client looks when neither --server nor
// CADUCEUS_SERVER says otherwise: `caduceus serve`'s default address.
const DefaultServer = "http://127.0.0.1:7420"

// IO is what a command reads and writes: the process's standard streams
// and environment in the binary, pipes and a pseudo-terminal in tests.
type IO struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// StdinTTY and StdoutTTY say whether the streams are terminals:
	// approvals are asked interactively only on one, and colour is used
	// only on one.
	StdinTTY, StdoutTTY bool
}

// Std is the IO of the running process.
func Std() IO {
	return IO{
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv,
		StdinTTY:  term.IsTerminal(int(os.Stdin.Fd())),
		StdoutTTY: term.IsTerminal(int(os.Stdout.Fd())),
	}
}

// Main runs the client command cmd with its arguments and returns the
// process's exit code.
func Main(ctx context.Context, cmd string, args []string, io IO) int {
	switch cmd {
	case "run":
		return runCommand(ctx, args, io)
	case "sessions":
		return sessionsCommand(ctx, args, io)
	case "approve", "deny", "answer":
		return respondCommand(ctx, cmd, args, io)
	case "jobs":
		return jobsCommand(ctx, args, io)
	}
	fmt.Fprintf(io.Stderr, "caduceus: unknown command %q\n", cmd)
	return ExitUsage
}

// common holds the flags every client command takes.
type common struct {
	server, token string
	json          bool
}

func newFlags(name string, io IO, c *common) *flag.FlagSet {
	fs := flag.NewFlagSet("caduceus "+name, flag.ContinueOnError)
	fs.SetOutput(io.Stderr)
	fs.StringVar(&c.server, "server", "", "server URL (default $CADUCEUS_SERVER, else "+DefaultServer+")")
	fs.StringVar(&c.token, "token", "", "server token or personal API token (default $CADUCEUS_TOKEN; prefer the variable: flags show in ps)")
	fs.BoolVar(&c.json, "json", false, "print JSON instead of text")
	return fs
}

// parse parses args, flags anywhere among the positional arguments
// (`caduceus run "fix it" --follow`), and returns the positional ones.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		rest := fs.Args()
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// usageError reports a bad command line.
func usageError(io IO, err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	fmt.Fprintln(io.Stderr, "caduceus:", err)
	return ExitUsage
}

func (c *common) client(io IO) (*client, error) {
	server := c.server
	if server == "" {
		server = io.Getenv("CADUCEUS_SERVER")
	}
	if server == "" {
		server = DefaultServer
	}
	if !strings.HasPrefix(server, "http://") && !strings.HasPrefix(server, "https://") {
		return nil, fmt.Errorf("--server %q: want an http:// or https:// URL", server)
	}
	token := c.token
	if token == "" {
		token = io.Getenv("CADUCEUS_TOKEN")
	}
	// No overall timeout: streams stay open as long as the run lasts.
	return &client{base: strings.TrimRight(server, "/"), token: token, http: &http.Client{}}, nil
}

// fail prints err and returns its exit code.
func fail(io IO, err error) int {
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(io.Stderr, "caduceus: interrupted")
		return ExitInterrupted
	}
	fmt.Fprintln(io.Stderr, "caduceus:", describe(err))
	return exitCode(err)
}
