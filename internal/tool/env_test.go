package tool

import (
	"slices"
	"strings"
	"testing"
)

func TestCommandEnv(t *testing.T) {
	runner := []string{
		"PATH=/usr/bin:/bin", "HOME=/home/a", "USER=a", "LOGNAME=a", "SHELL=/bin/bash", "TERM=xterm",
		"TZ=UTC", "TMPDIR=/tmp/a", "LANG=C.UTF-8", "LANGUAGE=en", "LC_ALL=C", "LC_TIME=de_DE",
		"SSL_CERT_FILE=/etc/ssl/ca.pem", "NODE_EXTRA_CA_CERTS=/etc/ssl/ca.pem",
		"CADUCEUS_TOKEN=tok-123456789", "OPENAI_API_KEY=sk-123456789", "ANTHROPIC_API_KEY=sk-ant-1234",
		"GITHUB_TOKEN=ghp_1", "AWS_SECRET_ACCESS_KEY=x", "DB_PASSWORD=pw", "SSH_AUTH_SOCK=/tmp/agent",
		"CADUCEUS_SECRETS_FD=3", "CADUCEUS_DATA_DIR=/var/lib/c", "OPENAI_BASE_URL=http://x", "EDITOR=vim",
		"GOPATH=/go", "PWD=/srv", "GATEWAY_LLM=gw-key-not-named-secret",
		"HTTPS_PROXY=http://proxy:3128", "http_proxy=http://user:pw@proxy:3128", "NO_PROXY=localhost,127.0.0.1",
		"ALL_PROXY=socks5://bob:secret@proxy:1080",
		"no-equals-sign", "=empty-name",
	}
	base := []string{
		"HOME=/home/a", "HTTPS_PROXY=http://proxy:3128", "LANG=C.UTF-8", "LANGUAGE=en", "LC_ALL=C", "LC_TIME=de_DE",
		"LOGNAME=a", "NODE_EXTRA_CA_CERTS=/etc/ssl/ca.pem", "NO_PROXY=localhost,127.0.0.1", "PATH=/usr/bin:/bin",
		"SHELL=/bin/bash", "SSL_CERT_FILE=/etc/ssl/ca.pem", "TERM=xterm", "TMPDIR=/tmp/a", "TZ=UTC", "USER=a",
	}
	for _, c := range []struct {
		name    string
		environ []string
		extra   []string
		want    []string
	}{
		{"allow-list only", runner, nil, base},
		{"extra with values and passed through", runner, []string{"GOPATH", "FOO=bar", "EDITOR", "MISSING"},
			append(slices.Clone(base), "EDITOR=vim", "FOO=bar", "GOPATH=/go")},
		{"extra overrides an allowed value", runner, []string{"PATH=/opt/bin"},
			append(slices.DeleteFunc(slices.Clone(base), func(s string) bool { return strings.HasPrefix(s, "PATH=") }), "PATH=/opt/bin")},
		{"secrets never, even when added", runner,
			[]string{"CADUCEUS_TOKEN", "OPENAI_API_KEY=sk-other", "GITHUB_TOKEN", "MY_PASSWORD=x", "SSH_AUTH_SOCK"}, base},
		{"empty", nil, nil, []string{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := commandEnv(c.environ, c.extra)
			want := slices.Sorted(slices.Values(c.want))
			if !slices.Equal(got, want) {
				t.Errorf("commandEnv:\n got %q\nwant %q", got, want)
			}
		})
	}
}

func TestProxyAllowed(t *testing.T) {
	for v, want := range map[string]bool{
		"http://proxy:3128":          true,
		"proxy:3128":                 true,
		"localhost,.corp,10.0.0.0/8": true,
		"http://user:pw@proxy:3128":  false,
		"user@proxy:3128":            false,
		"http://p:1,http://u:p@q:2":  false,
		"%zz@bad":                    false,
	} {
		if got := proxyAllowed(v); got != want {
			t.Errorf("proxyAllowed(%q) = %v, want %v", v, got, want)
		}
	}
}

// A command, in the foreground or the background, sees the allow-listed
// environment and the configured additions, never a secret.
func TestCommandsGetTheAllowListedEnvironment(t *testing.T) {
	t.Setenv("CADUCEUS_TEST_API_KEY", "sk-very-secret-1")
	t.Setenv("CADUCEUS_TOKEN", "tok-very-secret-2")
	t.Setenv("CADUCEUS_TEST_PLAIN", "not-allowed")
	t.Setenv("LC_CADUCEUS_TEST", "allowed")
	cfg := Config{ExtraEnv: []string{"ADDED=yes", "CADUCEUS_TEST_PLAIN", "CADUCEUS_TOKEN"}}
	check := func(t *testing.T, out string) {
		t.Helper()
		for _, bad := range []string{"sk-very-secret-1", "tok-very-secret-2", "CADUCEUS_TEST_API_KEY", "CADUCEUS_TOKEN"} {
			if strings.Contains(out, bad) {
				t.Errorf("a command saw %s:\n%s", bad, out)
			}
		}
		for _, good := range []string{"LC_CADUCEUS_TEST=allowed", "ADDED=yes", "CADUCEUS_TEST_PLAIN=not-allowed", "PATH="} {
			if !strings.Contains(out, good) {
				t.Errorf("a command lacks %s:\n%s", good, out)
			}
		}
	}
	t.Run("foreground", func(t *testing.T) {
		res := call(t, NewRunCommand(cfg), workspace(t, nil), `{"command": "env"}`)
		check(t, res.Output)
	})
	t.Run("background", func(t *testing.T) {
		f := newProcFixture(t, cfg, 0, 0)
		d := f.start("s", "env")
		out, _ := f.readUntilEnd("s", d.ProcessID)
		check(t, out)
	})
	t.Run("configured environ", func(t *testing.T) {
		res := call(t, NewRunCommand(Config{Environ: []string{"PATH=/usr/bin:/bin", "ONLY_IN_ENVIRON=x", "LANG=C"}}),
			workspace(t, nil), `{"command": "env"}`)
		if !strings.Contains(res.Output, "LANG=C") || strings.Contains(res.Output, "ONLY_IN_ENVIRON") ||
			strings.Contains(res.Output, "LC_CADUCEUS_TEST") {
			t.Errorf("env output:\n%s", res.Output)
		}
	})
}
