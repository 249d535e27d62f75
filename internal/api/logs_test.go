package api_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/api"
	"github.com/caduceus-dev/caduceus/internal/auth"
	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/logring"
)

func withLogs(b *logring.Buffer) envOpt {
	return func(c *envConfig) { c.options = append(c.options, func(o *api.Options) { o.Logs = b }) }
}

type logsJSON struct {
	Lines []struct {
		ID    int64             `json:"id"`
		Level string            `json:"level"`
		Msg   string            `json:"msg"`
		Attrs map[string]string `json:"attrs"`
	} `json:"lines"`
	Last int64 `json:"last"`
}

func (l logsJSON) msgs() string {
	var m []string
	for _, x := range l.Lines {
		m = append(m, x.Msg)
	}
	return strings.Join(m, ",")
}

func TestLogs(t *testing.T) {
	buf := logring.New(0, 0, slog.LevelDebug)
	e := newEnv(t, withLogs(buf))
	log := slog.New(buf.Handler())
	log.Debug("polling")
	log.Info("run started", "run", "run_abc")
	log.Warn("disk slow")
	log.Error("write failed", "err", "disk full")
	tests := []struct {
		query, want string
	}{
		{"", "polling,run started,disk slow,write failed"},
		{"?level=warn", "disk slow,write failed"},
		{"?level=ERROR", "write failed"},
		{"?q=RUN_ABC", "run started"},
		{"?q=disk&level=error", "write failed"},
		{"?limit=2", "disk slow,write failed"},
		{"?after=3", "write failed"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			r := e.req("GET", "/api/logs"+tt.query, "")
			r.want(t, http.StatusOK, "")
			var got logsJSON
			r.decode(t, &got)
			if got.msgs() != tt.want || got.Last != 4 {
				t.Errorf("got %q (last %d), want %q", got.msgs(), got.Last, tt.want)
			}
		})
	}

	// Following: what is there first, then each new line that matches.
	s := e.openRaw(t, "/api/logs?follow=1&level=warn")
	for _, want := range []string{"disk slow", "write failed"} {
		if f := s.next(t); f.name != "line" || !strings.Contains(string(f.data), want) {
			t.Fatalf("frame %s %s, want %q", f.name, f.data, want)
		}
	}
	log.Info("quiet line")
	log.Warn("loud line")
	f := s.next(t)
	var line struct {
		ID  int64  `json:"id"`
		Msg string `json:"msg"`
	}
	_ = json.Unmarshal(f.data, &line)
	if line.Msg != "loud line" || f.id != "6" {
		t.Errorf("followed %s (id %s), want the loud line, id 6", f.data, f.id)
	}

	e.runErrCases(t, []errCase{
		{name: "unknown level", method: "GET", path: "/api/logs?level=loud", status: 400, code: control.CodeInvalidInput},
		{name: "bad limit", method: "GET", path: "/api/logs?limit=0", status: 400, code: control.CodeInvalidInput},
		{name: "bad after", method: "GET", path: "/api/logs?after=-2", status: 400, code: control.CodeInvalidCursor},
		{name: "bad follow", method: "GET", path: "/api/logs?follow=2", status: 400, code: control.CodeInvalidInput},
		{name: "long query", method: "GET", path: "/api/logs?q=" + strings.Repeat("x", 501), status: 400, code: control.CodeInvalidInput},
	})
}

// The server's log is an admin's: an operator or a viewer is refused.
func TestLogsAdminOnly(t *testing.T) {
	buf := logring.New(0, 0, slog.LevelInfo)
	e := newEnv(t, withLogs(buf))
	admin := e.login(e.addPerson("ada", auth.RoleAdmin))
	for _, role := range []auth.Role{auth.RoleOperator, auth.RoleViewer} {
		b := e.login(e.addPerson("p-"+string(role), role))
		b.req("GET", "/api/logs", "").want(t, http.StatusForbidden, api.CodeForbidden)
	}
	admin.req("GET", "/api/logs", "").want(t, http.StatusOK, "")
}

func TestLogsUnavailable(t *testing.T) {
	newEnv(t).req("GET", "/api/logs", "").want(t, http.StatusServiceUnavailable, api.CodeLogsUnavailable)
}
