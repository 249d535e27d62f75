// Package pgtest runs a throwaway PostgreSQL server for tests: Debian's
// binaries (/usr/lib/postgresql/<version>/bin), a cluster made with initdb
// in a temporary directory, listening only on a unix socket in that
// directory, started on first use and stopped when the test binary's
// TestMain ends. Each test gets a database of its own, empty; when the test
// ends its connections are cut and it is emptied (its public schema made
// anew) for a later test, which costs a tenth of making a database.
//
//	var pg = pgtest.New()
//
//	func TestMain(m *testing.M) { os.Exit(pg.Main(m)) }
//
//	func TestX(t *testing.T) { url := pg.Database(t); ... }
//
// Without PostgreSQL installed the tests that ask for a database skip,
// unless CI=true: there they fail, so a CI machine without it is noticed
// (.ci/run installs it).
package pgtest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Cluster is a test binary's PostgreSQL server, started on first use.
type Cluster struct {
	once     sync.Once
	err      error // why the server is not available
	dir      string
	bin      string
	tcp      *tcpListen // nil: the socket only; ListenTCP (tcp.go) sets it
	srv      *exec.Cmd
	exited   chan struct{}
	log      *os.File
	admin    string // URL of the postgres database
	n        atomic.Int64
	stopOnce sync.Once

	mu   sync.Mutex
	free []string // emptied databases no test holds
}

// New returns a Cluster that starts when a test first asks for a database.
func New() *Cluster { return &Cluster{} }

// Main runs the tests and stops the server, if one was started; it
// returns the exit code for os.Exit.
func (c *Cluster) Main(m *testing.M) int {
	code := m.Run()
	if err := c.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "pgtest:", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// ErrNoPostgres is PostgreSQL's server binaries not being installed.
var ErrNoPostgres = errors.New("PostgreSQL is not installed (Debian: apt-get install postgresql)")

// Bin finds the directory of PostgreSQL's server binaries: $PG_BIN, else
// the newest /usr/lib/postgresql/<version>/bin, else initdb on the PATH.
func Bin() (string, error) {
	if d := os.Getenv("PG_BIN"); d != "" {
		return d, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", ErrNoPostgres
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// Database gives t an empty database of its own and returns its URL; the
// database is emptied for reuse when t ends (register what uses it after
// calling Database, so it is closed first). It skips t when PostgreSQL is
// missing, or fails it under CI=true.
func (c *Cluster) Database(t testing.TB) string {
	t.Helper()
	name, err := c.take(context.Background())
	if err != nil {
		if errors.Is(err, ErrNoPostgres) && os.Getenv("CI") != "true" {
			t.Skip(err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// A database that cannot be emptied is left alone, not reused.
		if err := c.empty(name); err != nil {
			t.Logf("pgtest: %v", err)
			return
		}
		c.mu.Lock()
		c.free = append(c.free, name)
		c.mu.Unlock()
	})
	return c.url(name)
}

// take hands out a free database, or makes one.
func (c *Cluster) take(ctx context.Context) (string, error) {
	if err := c.Available(); err != nil {
		return "", err
	}
	c.mu.Lock()
	if n := len(c.free); n > 0 {
		name := c.free[n-1]
		c.free = c.free[:n-1]
		c.mu.Unlock()
		return name, nil
	}
	c.mu.Unlock()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), c.n.Add(1))
	if err := c.exec(ctx, c.admin, "CREATE DATABASE "+name); err != nil {
		return "", err
	}
	return name, nil
}

// empty cuts the database's connections and drops everything a test made
// in it: all of it lives in the public schema.
func (c *Cluster) empty(name string) error {
	ctx := context.Background()
	if err := c.exec(ctx, c.admin, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = '`+name+`' AND pid <> pg_backend_pid()`); err != nil {
		return err
	}
	return c.exec(ctx, c.url(name), "DROP SCHEMA public CASCADE; CREATE SCHEMA public")
}

// Available reports whether a server runs or can be started, starting it.
func (c *Cluster) Available() error {
	c.once.Do(func() { c.err = c.start() })
	return c.err
}

// exec runs sql on a connection of its own to the database at url.
func (c *Cluster) exec(ctx context.Context, url, sql string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("pgtest: connect: %w", err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("pgtest: %s: %w", sql, err)
	}
	return nil
}

// url is the URL of database name, over the cluster's socket.
func (c *Cluster) url(name string) string {
	q := url.Values{"host": {c.dir}, "user": {"postgres"}, "sslmode": {"disable"}}
	c.tcp.query(q)
	return "postgres:///" + name + "?" + q.Encode()
}

// start makes a cluster in a new temporary directory and starts the server.
// As root it runs both as the postgres user (initdb refuses root), in a
// directory that user owns.
func (c *Cluster) start() error {
	bin, err := Bin()
	if err != nil {
		return err
	}
	c.bin = bin
	if c.dir, err = os.MkdirTemp("", "caduceus-pg-"); err != nil {
		return err
	}
	cred, err := credential()
	if err != nil {
		return err
	}
	if cred != nil {
		if err := os.Chown(c.dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return err
		}
	}
	data := filepath.Join(c.dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust",
		"--encoding=UTF8", "--locale=C", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return fmt.Errorf("pgtest: initdb: %v: %s", err, out)
	}
	if err := c.tcp.trust(data); err != nil {
		return err
	}
	if c.log, err = os.Create(filepath.Join(c.dir, "server.log")); err != nil {
		return err
	}
	// Tests need no durability: without fsync a new database costs a
	// fraction. Benchmarks (-test.bench) get a durable server, since
	// commits are what they measure.
	durability := []string{"-c", "fsync=off", "-c", "full_page_writes=off"}
	if f := flag.Lookup("test.bench"); f != nil && f.Value.String() != "" {
		durability = []string{"-c", "fsync=on"}
	}
	// The server runs as our child rather than under pg_ctl, so the kernel
	// stops it if the test binary dies before Stop (Pdeathsig; SIGQUIT is
	// PostgreSQL's immediate shutdown, which is all a throwaway cluster
	// needs). No TCP: the socket lives in the cluster's directory, so
	// clusters of test binaries running side by side never collide.
	args := append([]string{"-D", data, "-k", c.dir, "-c", "listen_addresses=",
		"-c", "max_connections=300", "-c", "shared_buffers=32MB"}, durability...)
	args = append(args, c.tcp.args()...) // a later -c wins
	c.srv = exec.Command(filepath.Join(bin, "postgres"), args...)
	c.srv.Stdout, c.srv.Stderr = c.log, c.log
	c.srv.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT, Setpgid: true}
	if err := c.srv.Start(); err != nil {
		return fmt.Errorf("pgtest: start postgres: %w", err)
	}
	c.exited = make(chan struct{})
	go func() { _ = c.srv.Wait(); close(c.exited) }()
	c.admin = c.url("postgres")
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgx.Connect(ctx, c.admin)
		cancel()
		if err == nil {
			conn.Close(context.Background())
			return nil
		}
		select {
		case <-c.exited:
			out, _ := os.ReadFile(c.log.Name())
			return fmt.Errorf("pgtest: postgres exited: %s", out)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pgtest: postgres did not accept connections within 30s: %w", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// credential is the postgres user's when we are root, else nil (run as
// ourselves).
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root needs the postgres user to run the server: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// Stop stops the server (fast shutdown) and removes its directory.
func (c *Cluster) Stop() error {
	var err error
	c.stopOnce.Do(func() {
		if c.srv != nil && c.srv.Process != nil {
			_ = c.srv.Process.Signal(syscall.SIGINT) // fast shutdown
			select {
			case <-c.exited:
			case <-time.After(30 * time.Second):
				_ = c.srv.Process.Kill()
				<-c.exited
				err = errors.New("postgres did not stop within 30s; killed")
			}
		}
		if c.log != nil {
			c.log.Close()
		}
		if c.dir != "" {
			err = errors.Join(err, os.RemoveAll(c.dir))
		}
	})
	return err
}
