package main

// `caduceus user add|list|passwd|disable|enable`: accounts on the command
// line, for the first admin before any web page can make one, and for
// recovery. The SQLite store of --data-dir only: the binary has no other
// database setting yet.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"

	"golang.org/x/term"

	"github.com/caduceus-dev/caduceus/internal/account"
	"github.com/caduceus-dev/caduceus/internal/app"
	"github.com/caduceus-dev/caduceus/internal/auth"
	"github.com/caduceus-dev/caduceus/internal/config"
	"github.com/caduceus-dev/caduceus/internal/secret"
)

func runUser(args []string) int {
	cmd, err := config.ParseUser(args, os.Getenv)
	if err != nil {
		return parseFailed(err)
	}
	// The password passes through this process's memory: keep other
	// processes of the user from reading it through /proc.
	_ = secret.NoDump()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := userCommand(ctx, cmd, os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "caduceus:", err)
		return 1
	}
	return 0
}

func userCommand(ctx context.Context, cmd config.User, stdin *os.File, stdout, stderr io.Writer) error {
	// Check what needs no database first, so a typo leaves no new data dir.
	var role auth.Role
	if cmd.Action == "add" {
		var err error
		if role, err = auth.ParseRole(cmd.Role); err != nil {
			return err
		}
	}
	if cmd.Name != "" {
		if err := account.CheckName(cmd.Name); err != nil {
			return err
		}
	}
	var password string
	if cmd.Action == "add" || cmd.Action == "passwd" {
		var err error
		if password, err = readPassword(stdin, stderr, cmd.PasswordStdin); err != nil {
			return err
		}
		if err := auth.CheckPassword(password); err != nil {
			return err
		}
	}
	switch {
	case cmd.Database != "":
	case cmd.Action == "add":
		if err := os.MkdirAll(cmd.DataDir, 0o700); err != nil {
			return err
		}
	default:
		if _, err := os.Stat(app.DatabasePath(cmd.DataDir)); err != nil {
			return fmt.Errorf("no database in %s: %w", cmd.DataDir, err)
		}
	}
	st, err := app.OpenStore(ctx, cmd.DataDir, cmd.Database)
	if err != nil {
		return err
	}
	defer st.Close()
	m := account.New(st, auth.DefaultParams(), nil)

	var u account.User
	switch cmd.Action {
	case "list":
		return listUsers(ctx, m, stdout)
	case "add":
		u, err = m.Add(ctx, cmd.Name, role, password)
	case "passwd":
		u, err = m.SetPassword(ctx, cmd.Name, password)
	case "disable", "enable":
		u, err = m.SetDisabled(ctx, cmd.Name, cmd.Action == "disable")
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %s (%s, %s)\n", done(cmd.Action), u.Name, u.Role, status(u))
	return nil
}

func done(action string) string {
	switch action {
	case "add":
		return "added"
	case "passwd":
		return "password changed"
	}
	return action + "d"
}

func status(u account.User) string {
	if u.Disabled {
		return "disabled"
	}
	return "active"
}

func listUsers(ctx context.Context, m *account.Manager, stdout io.Writer) error {
	us, err := m.List(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tROLE\tSTATUS\tCREATED")
	for _, u := range us {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", u.Name, u.Role, status(u), u.CreatedAt.UTC().Format("2006-01-02 15:04:05Z"))
	}
	return tw.Flush()
}

// readPassword reads a password: the first line of stdin with
// --password-stdin (for scripts: `echo pw | caduceus user add ...`), else
// twice from the terminal without echo. It refuses to read a piped stdin
// without the flag, so a forgotten flag cannot take a stray line.
func readPassword(stdin *os.File, prompt io.Writer, fromStdin bool) (string, error) {
	if fromStdin {
		line, err := bufio.NewReader(io.LimitReader(stdin, 4*auth.MaxPasswordLen+2)).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return "", fmt.Errorf("read the password from stdin: %w", err)
		}
		return strings.TrimRight(line, "\r\n"), nil
	}
	fd := int(stdin.Fd())
	if !term.IsTerminal(fd) {
		return "", errors.New("stdin is not a terminal: pass --password-stdin to read the password from it")
	}
	fmt.Fprint(prompt, "Password: ")
	first, err := term.ReadPassword(fd)
	fmt.Fprintln(prompt)
	if err != nil {
		return "", fmt.Errorf("read the password: %w", err)
	}
	fmt.Fprint(prompt, "Again: ")
	second, err := term.ReadPassword(fd)
	fmt.Fprintln(prompt)
	if err != nil {
		return "", fmt.Errorf("read the password: %w", err)
	}
	if string(first) != string(second) {
		return "", errors.New("the passwords differ")
	}
	return string(first), nil
}
