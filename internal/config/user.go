package config

import (
	"errors"
	"flag"
	"fmt"
	"os"
)

// User is the parsed command line of `caduceus user <action> [name]`.
type User struct {
	Action  string // add, list, passwd, disable, enable
	Name    string // empty for list
	Role    string // add: admin, operator or viewer (checked by the caller)
	DataDir string
	// Database is a PostgreSQL URL; empty means the SQLite file in DataDir.
	Database string
	// PasswordStdin reads the password from standard input (one line)
	// rather than asking on the terminal.
	PasswordStdin bool
}

// ParseUser parses the arguments after `caduceus user`. Flags may come
// before or after the name, as people type them.
func ParseUser(args []string, getenv func(string) string) (User, error) {
	var u User
	if len(args) == 0 {
		return u, errors.New("user: an action is needed: add, list, passwd, disable or enable")
	}
	u.Action = args[0]
	switch u.Action {
	case "add", "list", "passwd", "disable", "enable":
	default:
		if u.Action == "-h" || u.Action == "--help" || u.Action == "help" {
			fmt.Fprintln(os.Stderr, "Usage: caduceus user add|list|passwd|disable|enable [name] [flags]")
			return u, flag.ErrHelp
		}
		return u, fmt.Errorf("user: unknown action %q (want add, list, passwd, disable or enable)", u.Action)
	}
	fs := flag.NewFlagSet("user "+u.Action, flag.ContinueOnError)
	fs.SetOutput(os.Stderr)
	fs.StringVar(&u.DataDir, "data-dir", envOr(getenv, "CADUCEUS_DATA_DIR", defaultDataDir(getenv)), "directory of the database (env CADUCEUS_DATA_DIR)")
	fs.StringVar(&u.Database, "database", getenv("CADUCEUS_DATABASE_URL"), "a postgres:// URL of the store (env CADUCEUS_DATABASE_URL); empty: the SQLite file in the data dir")
	if u.Action == "add" {
		fs.StringVar(&u.Role, "role", "", "the account's role: admin, operator or viewer (required)")
	}
	if u.Action == "add" || u.Action == "passwd" {
		fs.BoolVar(&u.PasswordStdin, "password-stdin", false, "read the password from standard input instead of the terminal")
	}
	var pos []string
	rest := args[1:]
	for {
		if err := fs.Parse(rest); err != nil {
			return u, err
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	switch {
	case u.Action == "list" && len(pos) > 0:
		return u, fmt.Errorf("user list: unexpected argument %q", pos[0])
	case u.Action != "list" && len(pos) != 1:
		return u, fmt.Errorf("user %s: exactly one user name is needed, got %d", u.Action, len(pos))
	case u.Action != "list":
		u.Name = pos[0]
	}
	if u.Action == "add" && u.Role == "" {
		return u, errors.New("user add: --role is required (admin, operator or viewer)")
	}
	if err := checkDatabase(u.Database); err != nil {
		return u, err
	}
	if u.DataDir == "" && u.Database == "" {
		return u, errors.New("no data directory: set --data-dir or CADUCEUS_DATA_DIR (HOME is not set)")
	}
	return u, nil
}
