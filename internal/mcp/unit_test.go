package mcp

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/caduceus-dev/caduceus/internal/event"
)

func TestToolName(t *testing.T) {
	long := strings.Repeat("x", 80)
	cases := []struct {
		server, tool, want string
	}{
		{"git", "status", "mcp__git__status"},
		{"everything", "get-tiny-image", "mcp__everything__get-tiny-image"},
		{"fs", "files.read/all", "mcp__fs__files_read_all"},
		{"fs", "läsa", "mcp__fs__l_sa"},
		{"fs", "", "mcp__fs___"},
	}
	for _, c := range cases {
		if got := ToolName(c.server, c.tool); got != c.want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", c.server, c.tool, got, c.want)
		}
	}
	valid := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	a, b := ToolName("srv", long+"a"), ToolName("srv", long+"b")
	if !valid.MatchString(a) || !valid.MatchString(b) || a == b || !strings.HasPrefix(a, "mcp__srv__xxx") {
		t.Errorf("long names %q, %q: want distinct valid names", a, b)
	}
	names := uniqueNames("s", []ToolInfo{{Name: "a.b"}, {Name: "a_b"}, {Name: "c"}})
	if names[0] != "mcp__s__a_b" || names[1] == names[0] || !valid.MatchString(names[1]) || names[2] != "mcp__s__c" {
		t.Errorf("uniqueNames = %v", names)
	}
}

func TestValidate(t *testing.T) {
	stdio := ServerConfig{Name: "git", Transport: TransportStdio, Command: "mcp-git"}
	web := ServerConfig{Name: "web-1", Transport: TransportHTTP, URL: "https://mcp.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer x"}}
	with := func(c ServerConfig, f func(*ServerConfig)) ServerConfig { f(&c); return c }
	cases := []struct {
		name string
		cfg  ServerConfig
		ok   bool
	}{
		{"stdio", stdio, true},
		{"http", web, true},
		{"empty name", with(stdio, func(c *ServerConfig) { c.Name = "" }), false},
		{"name with space", with(stdio, func(c *ServerConfig) { c.Name = "my git" }), false},
		{"name with separator", with(stdio, func(c *ServerConfig) { c.Name = "a__b" }), false},
		{"name too long", with(stdio, func(c *ServerConfig) { c.Name = strings.Repeat("a", 33) }), false},
		{"name of 32", with(stdio, func(c *ServerConfig) { c.Name = strings.Repeat("a", 32) }), true},
		{"name of 1", with(stdio, func(c *ServerConfig) { c.Name = "a" }), true},
		{"name ending in _", with(stdio, func(c *ServerConfig) { c.Name = "a_" }), false},
		{"name beginning with -", with(stdio, func(c *ServerConfig) { c.Name = "-a" }), false},
		{"no transport", with(stdio, func(c *ServerConfig) { c.Transport = "" }), false},
		{"stdio without command", with(stdio, func(c *ServerConfig) { c.Command = " " }), false},
		{"stdio with url", with(stdio, func(c *ServerConfig) { c.URL = "http://x" }), false},
		{"bad env", with(stdio, func(c *ServerConfig) { c.Env = []string{"NOVALUE"} }), false},
		{"env", with(stdio, func(c *ServerConfig) { c.Env = []string{"TOKEN=a=b"} }), true},
		{"http bad scheme", with(web, func(c *ServerConfig) { c.URL = "ftp://x/mcp" }), false},
		{"http no host", with(web, func(c *ServerConfig) { c.URL = "http:///mcp" }), false},
		{"http with command", with(web, func(c *ServerConfig) { c.Command = "x" }), false},
		{"http bad header", with(web, func(c *ServerConfig) { c.Headers = map[string]string{"X: y": "z"} }), false},
		{"negative timeout", with(web, func(c *ServerConfig) { c.CallTimeout = -time.Second }), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.cfg.Validate()
			if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrInvalidConfig)) {
				t.Fatalf("Validate = %v, want ok=%v", err, c.ok)
			}
		})
	}
	if _, err := NewManager(Options{}, []ServerConfig{stdio, with(web, func(c *ServerConfig) { c.Name = "git" })}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("duplicate names: %v", err)
	}
	// String never shows header values, environment values or URL credentials.
	secretive := with(web, func(c *ServerConfig) { c.URL = "https://user:pw@mcp.example.com/mcp?key=k123" })
	if s := secretive.String(); strings.Contains(s, "pw") || strings.Contains(s, "k123") || strings.Contains(s, "Bearer") {
		t.Errorf("String() = %q", s)
	}
}

func TestMapResult(t *testing.T) {
	big := make([]byte, MaxInlineData+1)
	cases := []struct {
		name   string
		in     CallResult
		status string
		output string
		check  func(t *testing.T, d ResultData)
	}{
		{"text", CallResult{Content: []Part{{Type: PartText, Text: "a"}, {Type: PartText, Text: "b"}}}, event.ToolOK, "a\nb", nil},
		{"error", CallResult{IsError: true, Content: []Part{{Type: PartText, Text: "no such file"}}}, event.ToolError, "no such file",
			func(t *testing.T, d ResultData) {
				if !d.IsError {
					t.Error("IsError not kept")
				}
			}},
		{"structured only", CallResult{Structured: []byte(`{"n":1}`)}, event.ToolOK, `{"n":1}`, nil},
		{"empty", CallResult{}, event.ToolOK, "(no content)", nil},
		{"big image", CallResult{Content: []Part{{Type: PartImage, MIME: "image/png", Data: big}}}, event.ToolOK, "[image image/png, 524289 bytes",
			func(t *testing.T, d ResultData) {
				if p := d.Content[0]; !p.Omitted || p.Data != "" || p.Size != len(big) || len(p.SHA256) != 64 {
					t.Errorf("big image part %+v: want described, bytes omitted", p)
				}
			}},
		{"resources", CallResult{Content: []Part{
			{Type: PartResourceLink, URI: "file:///a.txt", Name: "a.txt"},
			{Type: PartResource, URI: "file:///b.txt", Text: "bee"},
			{Type: PartResource, URI: "file:///c.bin", MIME: "application/octet-stream", Data: []byte{1, 2}},
		}}, event.ToolOK, "[resource link file:///a.txt a.txt]\n[resource file:///b.txt]\nbee\n[resource file:///c.bin application/octet-stream, 2 bytes]", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := mapResult("srv", "tl", &c.in)
			if r.Status != c.status || !strings.HasPrefix(r.Output, c.output) {
				t.Fatalf("got %s %q, want %s %q", r.Status, r.Output, c.status, c.output)
			}
			d := r.Data.(ResultData)
			if d.Server != "srv" || d.Tool != "tl" || len(d.Content) != len(c.in.Content) {
				t.Fatalf("data %+v", d)
			}
			if c.check != nil {
				c.check(t, d)
			}
		})
	}
	long := strings.Repeat("é", MaxOutput)
	out := mapResult("s", "t", &CallResult{Content: []Part{{Type: PartText, Text: long}}}).Output
	if len(out) > MaxOutput+100 || !strings.Contains(out, "bytes cut") || !strings.HasPrefix(out, "éé") || !strings.HasSuffix(out, "éé") {
		t.Errorf("long output: %d bytes, want head and tail within the cap", len(out))
	}
}

func TestManagerKeepsItsOwnCopy(t *testing.T) {
	cfg := ServerConfig{Name: "s", Transport: TransportStdio, Command: "x", Args: []string{"a"}, Env: []string{"K=v"}}
	m, err := NewManager(Options{}, []ServerConfig{cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	before := m.servers["s"]
	cfg.Args[0], cfg.Env[0] = "changed", "K=changed"
	// The caller changed its slices in place: that is a new configuration,
	// which Update must see as one and replace the server for.
	if err := m.Update([]ServerConfig{cfg}); err != nil {
		t.Fatal(err)
	}
	if m.servers["s"] == before {
		t.Fatal("a configuration changed in place was taken for the running one")
	}
}
