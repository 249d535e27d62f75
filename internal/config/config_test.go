package config

import (
	"strings"
	"testing"
	"time"
)

func TestParseServe(t *testing.T) {
	ws := t.TempDir()
	cases := []struct {
		name    string
		args    []string
		env     map[string]string
		check   func(t *testing.T, c Config)
		wantErr string
	}{
		{name: "upload limits", env: map[string]string{"HOME": "/h", "CADUCEUS_UPLOAD_MAX_BYTES": "1000"}, args: []string{"--workspace", ws, "--upload-max-request-bytes", "5000"},
			check: func(t *testing.T, c Config) {
				if c.UploadMaxBytes != 1000 || c.UploadMaxRequestBytes != 5000 {
					t.Fatalf("%d %d", c.UploadMaxBytes, c.UploadMaxRequestBytes)
				}
			}},
		{name: "orphans killed by default", env: map[string]string{"HOME": "/h"}, args: []string{"--workspace", ws},
			check: func(t *testing.T, c Config) {
				if c.KeepOrphans {
					t.Fatal("orphans kept by default")
				}
			}},
		{name: "orphans kept by flag", env: map[string]string{"HOME": "/h"}, args: []string{"--workspace", ws, "--kill-orphans=false"},
			check: func(t *testing.T, c Config) {
				if !c.KeepOrphans {
					t.Fatal("--kill-orphans=false ignored")
				}
			}},
		{name: "orphans kept by env, flag wins", env: map[string]string{"HOME": "/h", "CADUCEUS_KILL_ORPHANS": "0"}, args: []string{"--workspace", ws},
			check: func(t *testing.T, c Config) {
				if !c.KeepOrphans {
					t.Fatal("CADUCEUS_KILL_ORPHANS=0 ignored")
				}
			}},
		{name: "upload file limit over the request's", env: map[string]string{"HOME": "/h"}, args: []string{"--workspace", ws, "--upload-max-bytes", "6000", "--upload-max-request-bytes", "5000"},
			wantErr: "at most upload-max-request-bytes"},
		{name: "upload limit not a number", env: map[string]string{"HOME": "/h", "CADUCEUS_UPLOAD_MAX_BYTES": "20MB"}, args: []string{"--workspace", ws},
			wantErr: "CADUCEUS_UPLOAD_MAX_BYTES"},
		{name: "defaults", env: map[string]string{"HOME": "/home/u"}, args: []string{"--workspace", ws},
			check: func(t *testing.T, c Config) {
				if c.Addr != DefaultAddr || c.DataDir != "/home/u/.local/share/caduceus" || c.Lease != 15*time.Second || c.ApprovalTTL != 0 {
					t.Fatalf("%+v", c)
				}
			}},
		{name: "xdg and env", env: map[string]string{"XDG_DATA_HOME": "/x", "CADUCEUS_ADDR": "127.0.0.1:9", "CADUCEUS_TOKEN": "s3cret", "CADUCEUS_WORKSPACE": ws, "CADUCEUS_APPROVAL_TIMEOUT": "2m"},
			check: func(t *testing.T, c Config) {
				if c.DataDir != "/x/caduceus" || c.Addr != "127.0.0.1:9" || c.Token != "s3cret" || c.Workspace != ws || c.ApprovalTTL != 2*time.Minute {
					t.Fatalf("%+v", c)
				}
			}},
		{name: "flag beats env", env: map[string]string{"CADUCEUS_ADDR": "127.0.0.1:9", "HOME": "/h"}, args: []string{"--addr", "127.0.0.1:10", "--workspace", ws},
			check: func(t *testing.T, c Config) {
				if c.Addr != "127.0.0.1:10" {
					t.Fatalf("addr %s", c.Addr)
				}
			}},
		{name: "workspace roots from env, flags replace them", env: map[string]string{"HOME": "/h", "CADUCEUS_WORKSPACE_ROOTS": ws + ":" + ws + "/."},
			check: func(t *testing.T, c Config) {
				if len(c.WorkspaceRoots) != 2 || c.WorkspaceRoots[0] != ws || c.WorkspaceRoots[1] != ws {
					t.Fatalf("roots %q", c.WorkspaceRoots)
				}
			}, args: []string{"--workspace", ws}},
		{name: "workspace roots repeated", env: map[string]string{"HOME": "/h", "CADUCEUS_WORKSPACE_ROOTS": "/nope"},
			args: []string{"--workspace", ws, "--workspace-root", ws, "--workspace-root", ws + "/."},
			check: func(t *testing.T, c Config) {
				if len(c.WorkspaceRoots) != 2 || c.WorkspaceRoots[0] != ws || c.WorkspaceRoots[1] != ws {
					t.Fatalf("roots %q", c.WorkspaceRoots)
				}
			}},
		{name: "workspace root missing", env: map[string]string{"HOME": "/h"}, args: []string{"--workspace", ws, "--workspace-root", ws + "/nope"}, wantErr: "workspace-root"},
		{name: "no home", args: []string{"--workspace", ws}, wantErr: "no data directory"},
		{name: "workspace missing", env: map[string]string{"HOME": "/h"}, args: []string{"--workspace", ws + "/nope"}, wantErr: "not a directory"},
		{name: "bad duration env", env: map[string]string{"HOME": "/h", "CADUCEUS_LEASE": "soon"}, args: []string{"--workspace", ws}, wantErr: "CADUCEUS_LEASE"},
		{name: "tiny lease", env: map[string]string{"HOME": "/h"}, args: []string{"--workspace", ws, "--lease", "10ms"}, wantErr: "lease"},
		{name: "negative ttl", env: map[string]string{"HOME": "/h"}, args: []string{"--workspace", ws, "--approval-timeout", "-1s"}, wantErr: "approval-timeout"},
		{name: "stray argument", env: map[string]string{"HOME": "/h"}, args: []string{"--workspace", ws, "extra"}, wantErr: "unexpected argument"},
		{name: "unknown flag", env: map[string]string{"HOME": "/h"}, args: []string{"--nope"}, wantErr: "not defined"},
		{name: "web tier only", env: map[string]string{"HOME": "/h"}, args: []string{"--workspace", ws, "--runner", "none", "--max-retries", "0"},
			check: func(t *testing.T, c Config) {
				if c.Runner != RunnerNone || c.MaxRetries != 0 || c.Grace != 10*time.Second || c.RetryBackoff != 2*time.Second {
					t.Fatalf("%+v", c)
				}
			}},
		{name: "git email domain", env: map[string]string{"HOME": "/h", "CADUCEUS_GIT_EMAIL_DOMAIN": "example.org"}, args: []string{"--workspace", ws},
			check: func(t *testing.T, c Config) {
				if c.GitEmailDomain != "example.org" {
					t.Fatalf("git email domain %q", c.GitEmailDomain)
				}
			}},
		{name: "git email domain flag", env: map[string]string{"HOME": "/h"}, args: []string{"--workspace", ws, "--git-email-domain", "dev.example-1.com"},
			check: func(t *testing.T, c Config) {
				if c.GitEmailDomain != "dev.example-1.com" {
					t.Fatalf("git email domain %q", c.GitEmailDomain)
				}
			}},
		{name: "git email domain with an at", env: map[string]string{"HOME": "/h"}, args: []string{"--workspace", ws, "--git-email-domain", "me@example.org"}, wantErr: "git-email-domain must be a domain"},
		{name: "git email domain with a space", env: map[string]string{"HOME": "/h"}, args: []string{"--workspace", ws, "--git-email-domain", "example .org"}, wantErr: "git-email-domain must be a domain"},
		{name: "git email domain with a bracket", env: map[string]string{"HOME": "/h"}, args: []string{"--workspace", ws, "--git-email-domain", "x>y"}, wantErr: "git-email-domain must be a domain"},
		// Webhook links (h17-hooks).
		{name: "public url", env: map[string]string{"HOME": "/h", "CADUCEUS_PUBLIC_URL": "https://cad.example.com/work/"}, args: []string{"--workspace", ws},
			check: func(t *testing.T, c Config) {
				if c.PublicURL != "https://cad.example.com/work" {
					t.Fatalf("public url %q", c.PublicURL)
				}
			}},
		{name: "public url not http", env: map[string]string{"HOME": "/h"}, args: []string{"--workspace", ws, "--public-url", "ftp://x"}, wantErr: "public-url must be"},
		{name: "public url relative", env: map[string]string{"HOME": "/h"}, args: []string{"--workspace", ws, "--public-url", "cad.example.com"}, wantErr: "public-url must be"},
		{name: "bad runner mode", env: map[string]string{"HOME": "/h"}, args: []string{"--workspace", ws, "--runner", "remote"}, wantErr: "runner must be"},
		{name: "negative retries", env: map[string]string{"HOME": "/h"}, args: []string{"--workspace", ws, "--max-retries", "-1"}, wantErr: "max-retries"},
		{name: "connection bounds default", env: map[string]string{"HOME": "/h"}, args: []string{"--workspace", ws},
			check: func(t *testing.T, c Config) {
				if c.ReadTimeout != DefaultReadTimeout || c.WriteTimeout != DefaultWriteTimeout || c.IdleTimeout != DefaultIdleTimeout ||
					c.MaxConnsPerAddr != DefaultMaxConnsPerAddr || c.MaxStreamsPerAddr != DefaultMaxStreamsPerAddr {
					t.Fatalf("%+v", c)
				}
			}},
		{name: "connection bounds from env and flags",
			env:  map[string]string{"HOME": "/h", "CADUCEUS_READ_TIMEOUT": "2s", "CADUCEUS_IDLE_TIMEOUT": "5s", "CADUCEUS_MAX_CONNS_PER_ADDR": "16", "CADUCEUS_MAX_STREAMS_PER_ADDR": "4"},
			args: []string{"--workspace", ws, "--write-timeout", "3s", "--max-streams-per-addr", "6"},
			check: func(t *testing.T, c Config) {
				if c.ReadTimeout != 2*time.Second || c.WriteTimeout != 3*time.Second || c.IdleTimeout != 5*time.Second ||
					c.MaxConnsPerAddr != 16 || c.MaxStreamsPerAddr != 6 {
					t.Fatalf("%+v", c)
				}
			}},
		{name: "0 turns a per-address limit off", env: map[string]string{"HOME": "/h", "CADUCEUS_MAX_STREAMS_PER_ADDR": "0"}, args: []string{"--workspace", ws, "--max-conns-per-addr", "0"},
			check: func(t *testing.T, c Config) {
				if c.MaxConnsPerAddr >= 0 || c.MaxStreamsPerAddr >= 0 {
					t.Fatalf("limits %d and %d, want none (negative)", c.MaxConnsPerAddr, c.MaxStreamsPerAddr)
				}
			}},
		{name: "negative limit", env: map[string]string{"HOME": "/h"}, args: []string{"--workspace", ws, "--max-conns-per-addr", "-2"}, wantErr: "max-conns-per-addr must not be negative"},
		{name: "bad limit env", env: map[string]string{"HOME": "/h", "CADUCEUS_MAX_STREAMS_PER_ADDR": "many"}, args: []string{"--workspace", ws}, wantErr: "CADUCEUS_MAX_STREAMS_PER_ADDR"},
		{name: "no read timeout", env: map[string]string{"HOME": "/h"}, args: []string{"--workspace", ws, "--read-timeout", "0"}, wantErr: "read-timeout must be at least"},
		{name: "tiny idle timeout", env: map[string]string{"HOME": "/h", "CADUCEUS_IDLE_TIMEOUT": "1ms"}, args: []string{"--workspace", ws}, wantErr: "idle-timeout must be at least"},
		{name: "no concurrency", env: map[string]string{"HOME": "/h"}, args: []string{"--workspace", ws, "--max-concurrent", "0"}, wantErr: "max-concurrent"},
		{name: "sqlite by default", env: map[string]string{"HOME": "/h"}, args: []string{"--workspace", ws},
			check: func(t *testing.T, c Config) {
				if c.Database != "" {
					t.Fatalf("database %q", c.Database)
				}
			}},
		{name: "database from env", env: map[string]string{"HOME": "/h", "CADUCEUS_DATABASE_URL": "postgres://u:pw@db:5432/c"}, args: []string{"--workspace", ws},
			check: func(t *testing.T, c Config) {
				if c.Database != "postgres://u:pw@db:5432/c" || c.DatabasePassword() != "pw" {
					t.Fatalf("database %q, password %q", c.Database, c.DatabasePassword())
				}
			}},
		{name: "database flag beats env", env: map[string]string{"HOME": "/h", "CADUCEUS_DATABASE_URL": "postgres://a/x"}, args: []string{"--workspace", ws, "--database", "postgresql://b/y"},
			check: func(t *testing.T, c Config) {
				if c.Database != "postgresql://b/y" || c.DatabasePassword() != "" {
					t.Fatalf("database %q", c.Database)
				}
			}},
		{name: "database not postgres", env: map[string]string{"HOME": "/h", "CADUCEUS_DATABASE_URL": "mysql://u:hunter2@db/c"}, args: []string{"--workspace", ws}, wantErr: "must be a postgres:// URL"},
		{name: "database not a URL", env: map[string]string{"HOME": "/h"}, args: []string{"--workspace", ws, "--database", "postgres://u:hunter2@db:port\x7f/c"}, wantErr: "is not a URL"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := ParseServe(tc.args, func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Fatalf("the error shows the database password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}

func TestParseRunner(t *testing.T) {
	ws := t.TempDir()
	c, err := ParseRunner([]string{"--workspace", ws, "--data-dir", "/d", "--grace", "3s", "--max-concurrent", "2"}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if c.Runner != RunnerOnly || c.Grace != 3*time.Second || c.MaxConcurrent != 2 || c.Addr != "" {
		t.Fatalf("%+v", c)
	}
	// serve-only flags are refused: a runner has no listener and no retry policy of its own.
	// Each with a value serve would accept, so only the flag is refused.
	for f, v := range map[string]string{"--addr": "127.0.0.1:1", "--runner": "none", "--max-retries": "1", "--retry-backoff": "1s",
		"--read-timeout": "1s", "--write-timeout": "1s", "--idle-timeout": "1s", "--max-conns-per-addr": "1", "--max-streams-per-addr": "1",
		"--git-email-domain": "example.org"} {
		if _, err := ParseRunner([]string{"--workspace", ws, "--data-dir", "/d", f, v}, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "not defined") {
			t.Errorf("%s accepted by runner: %v", f, err)
		}
	}
}
