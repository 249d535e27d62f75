// Package deploy holds the deployment kit (compose file, systemd units,
// proxy configuration; the Dockerfile is at the repository root) and the
// tests that check what can be checked without a Docker engine: the
// compose file's shape, the Dockerfile's build command producing a static
// binary, and the systemd units (with systemd-analyze when it is
// installed). docs/DEPLOY.md says what is verified how.
package deploy

import (
	"bufio"
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

type composeFile struct {
	Services map[string]struct {
		Image       string `yaml:"image"`
		Build       *struct{ Context, Target string }
		Command     []string          `yaml:"command"`
		Environment map[string]string `yaml:"environment"`
		Volumes     []string          `yaml:"volumes"`
		DependsOn   any               `yaml:"depends_on"` // a list or a map
		Profiles    []string          `yaml:"profiles"`
		Healthcheck map[string]any    `yaml:"healthcheck"`
	} `yaml:"services"`
	Volumes map[string]any `yaml:"volumes"`
}

func readCompose(t *testing.T) composeFile {
	t.Helper()
	b, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	return c
}

// dependsOn reads compose's two forms of depends_on.
func dependsOn(v any, service string) bool {
	switch d := v.(type) {
	case []any:
		return slices.Contains(d, any(service))
	case map[string]any:
		_, ok := d[service]
		return ok
	}
	return false
}

// dockerTargets are the stage names of the Dockerfile.
func dockerTargets(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^FROM \S+ AS (\S+)$`).FindAllStringSubmatch(string(b), -1) {
		out = append(out, m[1])
	}
	return out
}

// The compose file has PostgreSQL 15, two web nodes without a runner and
// two runners, every Caduceus service on the database with the token, and
// the images it builds are stages of the Dockerfile.
func TestComposeFile(t *testing.T) {
	c := readCompose(t)
	pg, ok := c.Services["postgres"]
	if !ok || pg.Image != "postgres:15" || pg.Healthcheck == nil {
		t.Fatalf("postgres service: %+v", pg)
	}
	targets := dockerTargets(t)
	tests := []struct {
		service string
		command []string
		target  string
	}{
		{"web1", []string{"serve", "--runner=none"}, "web"},
		{"web2", []string{"serve", "--runner=none"}, "web"},
		{"runner1", []string{"runner"}, "runner"},
		{"runner2", []string{"runner"}, "runner"},
	}
	for _, tc := range tests {
		s, ok := c.Services[tc.service]
		if !ok {
			t.Errorf("no service %s", tc.service)
			continue
		}
		if len(s.Command) < len(tc.command) || !slices.Equal(s.Command[:len(tc.command)], tc.command) {
			t.Errorf("%s: command %q, want it to start with %q", tc.service, s.Command, tc.command)
		}
		if s.Build == nil || s.Build.Context != ".." || s.Build.Target != tc.target || !slices.Contains(targets, tc.target) {
			t.Errorf("%s: build %+v; the Dockerfile's stages are %v", tc.service, s.Build, targets)
		}
		for _, k := range []string{"CADUCEUS_DATABASE_URL", "CADUCEUS_TOKEN"} {
			if s.Environment[k] == "" {
				t.Errorf("%s: no %s", tc.service, k)
			}
		}
		if !strings.Contains(s.Environment["CADUCEUS_DATABASE_URL"], "@postgres:5432/") {
			t.Errorf("%s: database %q is not the postgres service", tc.service, s.Environment["CADUCEUS_DATABASE_URL"])
		}
		if !dependsOn(s.DependsOn, "postgres") {
			t.Errorf("%s does not wait for postgres", tc.service)
		}
		if !slices.Contains(s.Volumes, "data:/var/lib/caduceus") || !slices.Contains(s.Volumes, "workspace:/workspace") {
			t.Errorf("%s: volumes %q", tc.service, s.Volumes)
		}
	}
	proxy := c.Services["proxy"]
	if !slices.Contains(proxy.Profiles, "proxy") || !slices.Contains(proxy.Volumes, "./Caddyfile:/etc/caddy/Caddyfile:ro") ||
		!dependsOn(proxy.DependsOn, "web1") || !dependsOn(proxy.DependsOn, "web2") {
		t.Errorf("proxy: %+v", proxy)
	}
	caddy, err := os.ReadFile("Caddyfile")
	if err != nil || !strings.Contains(string(caddy), "web1:7420 web2:7420") {
		t.Errorf("the Caddyfile does not balance web1 and web2: %v", err)
	}
	for _, v := range []string{"pgdata", "data", "workspace", "caddy"} {
		if _, ok := c.Volumes[v]; !ok {
			t.Errorf("volume %s is not declared", v)
		}
	}
}

// dockerBuild is the Dockerfile's `go build` command line.
var dockerBuild = regexp.MustCompile(`(?m)^RUN (CGO_ENABLED=0 go build .*)$`)

// The Dockerfile's build command, run here with its own flags, makes a
// static binary (no interpreter, no shared library) that runs and carries
// the version it was given: what the distroless image needs.
func TestDockerfileBuildsAStaticBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	b, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	m := dockerBuild.FindSubmatch(b)
	if m == nil {
		t.Fatal("no `RUN CGO_ENABLED=0 go build` line in the Dockerfile")
	}
	bin := filepath.Join(t.TempDir(), "caduceus")
	line := strings.ReplaceAll(string(m[1]), "${VERSION}", "deploy-test")
	line = strings.Replace(line, "-o /out/caduceus", "-o "+bin, 1)
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir = ".." // the Dockerfile builds from the repository root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Fatalf("the binary is dynamically linked (%v)", p.Type)
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Fatalf("the binary needs %v (%v)", libs, err)
	}
	if f.Section(".symtab") != nil {
		t.Error("the binary is not stripped (-s -w)")
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil || strings.TrimSpace(string(out)) != "caduceus deploy-test" {
		t.Fatalf("version: %q %v", out, err)
	}
}

// units reads a systemd unit as section → key → values.
func unit(t *testing.T, path string) map[string]map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]map[string][]string{}
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = strings.Trim(line, "[]")
			out[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				t.Fatalf("%s: bad line %q", path, line)
			}
			out[section][k] = append(out[section][k], v)
		}
	}
	return out
}

// The units start the right command under an unprivileged user with the
// hardening options, and systemd itself accepts them.
func TestSystemdUnits(t *testing.T) {
	tests := []struct {
		file, command string
	}{
		{"systemd/caduceus.service", "/usr/local/bin/caduceus serve"},
		{"systemd/caduceus-runner.service", "/usr/local/bin/caduceus runner"},
	}
	for _, tc := range tests {
		u := unit(t, tc.file)
		svc := u["Service"]
		if len(svc["ExecStart"]) != 1 || !strings.HasPrefix(svc["ExecStart"][0], tc.command) {
			t.Errorf("%s: ExecStart %q", tc.file, svc["ExecStart"])
		}
		for k, want := range map[string]string{
			"User": "caduceus", "NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes",
			"PrivateTmp": "yes", "KillSignal": "SIGTERM", "ReadWritePaths": "/var/lib/caduceus /srv/caduceus/workspace",
		} {
			if !slices.Contains(svc[k], want) {
				t.Errorf("%s: %s=%q, want %q", tc.file, k, svc[k], want)
			}
		}
		if !slices.Contains(u["Install"]["WantedBy"], "multi-user.target") {
			t.Errorf("%s: not wanted by multi-user.target", tc.file)
		}
	}
	backup := unit(t, "systemd/caduceus-backup.service")["Service"]
	if len(backup["ExecStart"]) != 1 || !strings.Contains(backup["ExecStart"][0], "/usr/local/bin/caduceus backup ") {
		t.Errorf("backup ExecStart %q", backup["ExecStart"])
	}
	timer := unit(t, "systemd/caduceus-backup.timer")
	if !slices.Contains(timer["Timer"]["OnCalendar"], "daily") || !slices.Contains(timer["Install"]["WantedBy"], "timers.target") {
		t.Errorf("backup timer %v", timer)
	}
	verifyUnits(t, "systemd/caduceus.service", "systemd/caduceus-runner.service", "systemd/caduceus-backup.service", "systemd/caduceus-backup.timer")
}

// verifyUnits runs `systemd-analyze verify` on the units, in a root of
// their own holding the system's unit files and a stub at every path an
// Exec line names (verify checks they are executable). Any complaint
// fails.
func verifyUnits(t *testing.T, files ...string) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze is not installed: the units were only parsed")
		return
	}
	root := t.TempDir()
	sys := filepath.Join(root, "usr/lib/systemd/system")
	if err := os.CopyFS(sys, os.DirFS("/lib/systemd/system")); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "etc/systemd/system"), 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"verify", "--man=no", "--root=" + root}
	for _, f := range files {
		for k, vs := range unit(t, f)["Service"] {
			if !strings.HasPrefix(k, "Exec") {
				continue
			}
			for _, v := range vs {
				exe := strings.TrimLeft(strings.Fields(v)[0], "-@+!:")
				if err := os.MkdirAll(filepath.Join(root, filepath.Dir(exe)), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(root, exe), []byte("#!/bin/sh\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Join("/etc/systemd/system", filepath.Base(f))
		if err := os.WriteFile(filepath.Join(root, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, name)
	}
	out, err := exec.Command(analyze, args...).CombinedOutput()
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}
