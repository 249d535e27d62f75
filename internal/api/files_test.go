package api_test

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/api"
	"github.com/caduceus-dev/caduceus/internal/auth"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/workspace"
)

// fakeCheckpoints records BeforeEdit calls and fails when told to.
type fakeCheckpoints struct {
	mu    sync.Mutex
	calls []string // "session workspace path by"
	err   error
}

func (f *fakeCheckpoints) BeforeEdit(_ context.Context, sessionID, ws, p string, by *event.Actor) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	who := "<nil>"
	if by != nil {
		who = by.Kind
	}
	f.calls = append(f.calls, sessionID+" "+ws+" "+p+" "+who)
	return f.err
}

func (f *fakeCheckpoints) taken() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func withCheckpoints(c api.EditCheckpointer) envOpt {
	return func(cfg *envConfig) {
		cfg.options = append(cfg.options, func(o *api.Options) { o.Checkpoints = c })
	}
}

// checkpointFull is a checkpoint failure with a code of its own.
type checkpointFull struct{}

func (checkpointFull) Error() string { return "checkpoint store full" }
func (checkpointFull) Code() string  { return "checkpoint_store_full" }

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// filesURL is a Files route of session sid with the path parameter
// spelled exactly as given (already escaped where a test wants it).
func filesURL(sid, route, rawPath string) string {
	u := "/api/sessions/" + sid + "/files" + route + "?path=" + rawPath
	return u
}

// TestFilesPathEscapes: every Files route refuses every way out of the
// workspace with the workspace package's stable code, and reads or writes
// nothing outside it.
func TestFilesPathEscapes(t *testing.T) {
	t.Parallel()
	cp := &fakeCheckpoints{}
	e := newEnv(t, withCheckpoints(cp))
	s := e.session(t)
	outside := t.TempDir()
	writeFile(t, filepath.Join(outside, "secret.txt"), "outside secret")
	writeFile(t, filepath.Join(e.ws, "in.txt"), "inside")
	writeFile(t, filepath.Join(e.ws, ".git", "config"), "[remote] token")
	if err := os.Symlink(outside, filepath.Join(e.ws, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(e.ws, "secret-link")); err != nil {
		t.Fatal(err)
	}
	escapes := []struct {
		name, raw, code string
	}{
		{"dot-dot", url.QueryEscape("../" + filepath.Base(outside) + "/secret.txt"), "path_outside_workspace"},
		{"dot-dot inside", url.QueryEscape("a/../../secret.txt"), "path_outside_workspace"},
		{"absolute", url.QueryEscape(filepath.Join(outside, "secret.txt")), "path_outside_workspace"},
		{"url-encoded dot-dot", "%2e%2e/secret.txt", "path_outside_workspace"},
		{"url-encoded slash", "..%2fsecret.txt", "path_outside_workspace"},
		{"symlinked directory out", url.QueryEscape("out/secret.txt"), "path_outside_workspace"},
		{"symlinked file out", url.QueryEscape("secret-link"), "path_outside_workspace"},
		{".git", url.QueryEscape(".git/config"), "path_outside_workspace"},
		{"NUL", "in.txt%00", "invalid_path"},
		{"backslash", url.QueryEscape(`..\secret.txt`), "invalid_path"},
	}
	routes := []struct {
		method, route, suffix string
	}{
		{"GET", "", ""},
		{"GET", "/content", ""},
		{"GET", "/content", "&raw=1"},
		{"GET", "/content", "&download=1"},
		{"PUT", "/content", ""},
		{"GET", "/search", "&q=secret"},
		{"GET", "/resolve", ""},
	}
	for _, rt := range routes {
		for _, esc := range escapes {
			t.Run(rt.method+" "+rt.route+rt.suffix+" "+esc.name, func(t *testing.T) {
				raw := esc.raw
				if rt.route == "/resolve" && esc.name == "symlinked directory out" {
					raw = url.QueryEscape("out/secret.txt:3")
				}
				body, hdr := "", []string{}
				if rt.method == "PUT" {
					body, hdr = "overwritten", []string{"Content-Type", "text/plain"}
				}
				r := e.req(rt.method, filesURL(s.ID, rt.route, raw)+rt.suffix, body, hdr...)
				r.want(t, 400, esc.code)
				if strings.Contains(string(r.body), "outside secret") || strings.Contains(string(r.body), "[remote]") {
					t.Fatalf("the answer holds content from outside: %s", r.body)
				}
			})
		}
	}
	if got := readFile(t, filepath.Join(outside, "secret.txt")); got != "outside secret" {
		t.Fatalf("the file outside became %q", got)
	}
	if got := readFile(t, filepath.Join(e.ws, ".git", "config")); got != "[remote] token" {
		t.Fatalf(".git/config became %q", got)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Fatalf("the outside directory holds %d entries, want 1", len(entries))
	}
	if calls := cp.taken(); len(calls) != 0 {
		t.Fatalf("refused paths took checkpoints: %v", calls)
	}
}

type fileJSON struct {
	Path        string  `json:"path"`
	Size        int64   `json:"size"`
	MIME        string  `json:"mime"`
	Text        *string `json:"text"`
	ETag        string  `json:"etag"`
	Binary      bool    `json:"binary"`
	TooLarge    bool    `json:"too_large"`
	RawURL      string  `json:"raw_url"`
	DownloadURL string  `json:"download_url"`
}

func TestFilesListAndRead(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.session(t)
	writeFile(t, filepath.Join(e.ws, "src", "a.go"), "package a\n")
	writeFile(t, filepath.Join(e.ws, "b.txt"), "bee\n")
	writeFile(t, filepath.Join(e.ws, "page.html"), "<script>alert(1)</script>")
	writeFile(t, filepath.Join(e.ws, "bin.dat"), "a\x00b")
	writeFile(t, filepath.Join(e.ws, "big.log"), strings.Repeat("x", int(api.MaxViewBytes)+1))
	png := "\x89PNG\r\n\x1a\n" + strings.Repeat("\x00", 16)
	writeFile(t, filepath.Join(e.ws, "img.png"), png)

	var page struct {
		Path    string            `json:"path"`
		Entries []workspace.Entry `json:"entries"`
		Next    string            `json:"next"`
	}
	r := e.req("GET", "/api/sessions/"+s.ID+"/files?limit=2", "")
	r.want(t, 200, "")
	r.decode(t, &page)
	if len(page.Entries) != 2 || page.Entries[0].Name != "src" || page.Entries[0].Kind != workspace.KindDir || page.Next == "" {
		t.Fatalf("first page = %+v", page)
	}
	r = e.req("GET", "/api/sessions/"+s.ID+"/files?limit=2&cursor="+url.QueryEscape(page.Next), "")
	r.want(t, 200, "")
	r.decode(t, &page)
	if len(page.Entries) != 2 || page.Entries[0].Name != "big.log" {
		t.Fatalf("second page = %+v", page)
	}
	r = e.req("GET", "/api/sessions/"+s.ID+"/files?path=src", "")
	r.want(t, 200, "")
	r.decode(t, &page)
	if page.Path != "src" || len(page.Entries) != 1 || page.Entries[0].Path != "src/a.go" {
		t.Fatalf("src = %+v", page)
	}

	var f fileJSON
	r = e.req("GET", "/api/sessions/"+s.ID+"/files/content?path=src/a.go", "")
	r.want(t, 200, "")
	r.decode(t, &f)
	if f.Text == nil || *f.Text != "package a\n" || f.ETag != workspace.ETag([]byte("package a\n")) || r.hdr.Get("ETag") != f.ETag ||
		!strings.HasPrefix(f.MIME, "text/x-go") || f.Binary || f.TooLarge {
		t.Fatalf("a.go = %+v, ETag header %q", f, r.hdr.Get("ETag"))
	}
	for _, c := range []struct {
		name           string
		binary, large  bool
		headerETagSent bool
	}{{"bin.dat", true, false, false}, {"big.log", false, true, false}} {
		r = e.req("GET", "/api/sessions/"+s.ID+"/files/content?path="+c.name, "")
		r.want(t, 200, "")
		f = fileJSON{}
		r.decode(t, &f)
		if f.Text != nil || f.Binary != c.binary || f.TooLarge != c.large || f.ETag != "" || r.hdr.Get("ETag") != "" ||
			!strings.Contains(f.RawURL, "raw=1") || !strings.Contains(f.DownloadURL, "download=1") {
			t.Fatalf("%s = %+v", c.name, f)
		}
	}
	// Raw: images keep their type for the preview, anything that could
	// run script goes out as plain text, sandboxed.
	for _, c := range []struct{ name, ctype, body string }{
		{"img.png", "image/png", png},
		{"page.html", "text/plain; charset=utf-8", "<script>alert(1)</script>"},
		{"bin.dat", "application/octet-stream", "a\x00b"},
	} {
		r = e.req("GET", "/api/sessions/"+s.ID+"/files/content?raw=1&path="+c.name, "")
		if r.code != 200 || r.hdr.Get("Content-Type") != c.ctype || string(r.body) != c.body ||
			!strings.Contains(r.hdr.Get("Content-Security-Policy"), "sandbox") || r.hdr.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("raw %s: %d %v %q", c.name, r.code, r.hdr, r.body)
		}
	}
	r = e.req("GET", "/api/sessions/"+s.ID+"/files/content?download=1&path=big.log", "")
	if r.code != 200 || len(r.body) != int(api.MaxViewBytes)+1 || r.hdr.Get("Content-Disposition") != `attachment; filename=big.log` {
		t.Fatalf("download: %d %v (%d bytes)", r.code, r.hdr, len(r.body))
	}

	for _, c := range []struct {
		name, path string
		status     int
		code       string
	}{
		{"missing", "nope.txt", 404, "not_found"},
		{"a directory", "src", 400, "not_regular_file"},
		{"list a file", "", 0, ""},
	} {
		if c.status == 0 {
			e.req("GET", "/api/sessions/"+s.ID+"/files?path=b.txt", "").want(t, 400, "not_a_directory")
			continue
		}
		e.req("GET", "/api/sessions/"+s.ID+"/files/content?path="+c.path, "").want(t, c.status, c.code)
	}
	e.req("GET", "/api/sessions/ses_nope/files", "").want(t, 404, "not_found")
	e.req("GET", "/api/sessions/"+s.ID+"/files?limit=x", "").want(t, 400, "invalid_input")
	e.req("GET", "/api/sessions/"+s.ID+"/files?cursor=zzz", "").want(t, 400, "invalid_cursor")
}

// TestFilesSave: If-Match is required for an existing file, a stale one
// is refused with the current ETag and nothing written, a checkpoint is
// taken before every write and a failed one refuses the save.
func TestFilesSave(t *testing.T) {
	t.Parallel()
	cp := &fakeCheckpoints{}
	e := newEnv(t, withCheckpoints(cp))
	s := e.session(t)
	name := filepath.Join(e.ws, "notes.md")
	writeFile(t, name, "v1\n")
	v1 := workspace.ETag([]byte("v1\n"))
	put := func(p, body string, header ...string) resp {
		return e.req("PUT", "/api/sessions/"+s.ID+"/files/content?path="+p, body, append([]string{"Content-Type", "text/plain"}, header...)...)
	}

	r := put("notes.md", "person\n")
	r.want(t, 428, "precondition_required")
	if r.hdr.Get("ETag") != v1 {
		t.Fatalf("428 without the current ETag: %v", r.hdr)
	}
	r = put("notes.md", "person\n", "If-Match", `"stale"`)
	r.want(t, 412, "edit_conflict")
	if r.hdr.Get("ETag") != v1 || !strings.Contains(string(r.body), v1[1:len(v1)-1]) {
		t.Fatalf("412 without the current ETag: %v %s", r.hdr, r.body)
	}
	put("notes.md", "person\n", "If-Match", "*").want(t, 400, "invalid_input")
	if got := readFile(t, name); got != "v1\n" || len(cp.taken()) != 0 {
		t.Fatalf("refused saves wrote %q or took checkpoints %v", got, cp.taken())
	}

	r = put("notes.md", "v2\n", "If-Match", v1)
	r.want(t, 200, "")
	v2 := workspace.ETag([]byte("v2\n"))
	if r.hdr.Get("ETag") != v2 || readFile(t, name) != "v2\n" {
		t.Fatalf("save: %v, file %q", r.hdr, readFile(t, name))
	}
	want := []string{s.ID + " " + e.ws + " notes.md local"}
	if got := cp.taken(); !slices.Equal(got, want) {
		t.Fatalf("checkpoints %q, want %q", got, want)
	}

	// A new file, in a new directory, needs no If-Match; one that does
	// not exist with an If-Match is a conflict (it was deleted).
	put("docs/new.txt", "fresh", "If-Match", v1).want(t, 412, "edit_conflict")
	put("docs/new.txt", "fresh").want(t, 201, "")
	if readFile(t, filepath.Join(e.ws, "docs", "new.txt")) != "fresh" {
		t.Fatal("the new file was not written")
	}
	put("docs/new.txt", "again").want(t, 428, "precondition_required")
	put("bin.txt", "a\x00b").want(t, 415, "binary_file")

	// A failed checkpoint refuses the save with its code.
	cp.mu.Lock()
	cp.err = checkpointFull{}
	cp.mu.Unlock()
	put("notes.md", "v3\n", "If-Match", v2).want(t, 500, "checkpoint_store_full")
	cp.mu.Lock()
	cp.err = errors.New("disk gone")
	cp.mu.Unlock()
	put("notes.md", "v3\n", "If-Match", v2).want(t, 500, "checkpoint_failed")
	if got := readFile(t, name); got != "v2\n" {
		t.Fatalf("a save without a checkpoint wrote %q", got)
	}
}

// TestFilesConcurrentEdit is issue 14's acceptance at the API: a person
// loads a file, the agent changes it, the person's save is refused with
// the agent's version's ETag, the agent's content stays, and the person
// can still overwrite knowingly.
func TestFilesConcurrentEdit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.session(t)
	name := filepath.Join(e.ws, "main.go")
	writeFile(t, name, "package main\n")
	var f fileJSON
	r := e.req("GET", "/api/sessions/"+s.ID+"/files/content?path=main.go", "")
	r.want(t, 200, "")
	r.decode(t, &f)
	writeFile(t, name, "package main // the agent's\n") // the agent's edit
	r = e.req("PUT", "/api/sessions/"+s.ID+"/files/content?path=main.go", "package main // the person's\n", "Content-Type", "text/plain", "If-Match", f.ETag)
	r.want(t, 412, "edit_conflict")
	theirs := r.hdr.Get("ETag")
	if theirs != workspace.ETag([]byte("package main // the agent's\n")) || readFile(t, name) != "package main // the agent's\n" {
		t.Fatalf("conflict: ETag %q, file %q", theirs, readFile(t, name))
	}
	e.req("PUT", "/api/sessions/"+s.ID+"/files/content?path=main.go", "package main // the person's\n", "Content-Type", "text/plain", "If-Match", theirs).want(t, 200, "")
	if got := readFile(t, name); got != "package main // the person's\n" {
		t.Fatalf("overwrite: %q", got)
	}
}

func TestFilesSearchAndResolve(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.session(t)
	writeFile(t, filepath.Join(e.ws, "src", "server.go"), "package src\n\nfunc Serve() {}\n")
	writeFile(t, filepath.Join(e.ws, "README.md"), "call Serve to start\n")
	writeFile(t, filepath.Join(e.ws, ".gitignore"), "gen/\n")
	writeFile(t, filepath.Join(e.ws, "gen", "serve_gen.go"), "Serve\n")
	var res workspace.SearchResult
	search := func(q string) []string {
		t.Helper()
		r := e.req("GET", "/api/sessions/"+s.ID+"/files/search?"+q, "")
		r.want(t, 200, "")
		res = workspace.SearchResult{}
		r.decode(t, &res)
		var got []string
		for _, m := range res.Matches {
			got = append(got, m.Path+":"+strconv.Itoa(m.Line))
		}
		return got
	}
	if got := search("q=serve&kind=name"); !slices.Equal(got, []string{"src/server.go:0"}) {
		t.Fatalf("names: %v", got)
	}
	if got := search("q=Serve&kind=content&case=1"); !slices.Equal(got, []string{"README.md:1", "src/server.go:3"}) {
		t.Fatalf("content: %v", got)
	}
	if got := search("q=Serve&kind=content&case=1&ignored=1"); !slices.Contains(got, "gen/serve_gen.go:1") {
		t.Fatalf("with ignored: %v", got)
	}
	e.req("GET", "/api/sessions/"+s.ID+"/files/search?q=x&kind=regex", "").want(t, 400, "invalid_input")
	e.req("GET", "/api/sessions/"+s.ID+"/files/search?q=", "").want(t, 400, "invalid_query")

	var ref struct {
		Exists bool `json:"exists"`
		workspace.Ref
	}
	r := e.req("GET", "/api/sessions/"+s.ID+"/files/resolve?path="+url.QueryEscape("./src/server.go:3"), "")
	r.want(t, 200, "")
	r.decode(t, &ref)
	if !ref.Exists || ref.Path != "src/server.go" || ref.Line != 3 || ref.Kind != workspace.KindFile {
		t.Fatalf("ref = %+v", ref)
	}
	r = e.req("GET", "/api/sessions/"+s.ID+"/files/resolve?path="+url.QueryEscape(filepath.Join(e.ws, "README.md")+"#L1"), "")
	r.want(t, 200, "")
	r.decode(t, &ref)
	if ref.Path != "README.md" || ref.Line != 1 {
		t.Fatalf("absolute ref = %+v", ref)
	}
	var missing struct {
		Exists *bool  `json:"exists"`
		Path   string `json:"path"`
	}
	r = e.req("GET", "/api/sessions/"+s.ID+"/files/resolve?path=nope.go:1", "")
	r.want(t, 200, "")
	r.decode(t, &missing)
	if missing.Exists == nil || *missing.Exists || missing.Path != "" {
		t.Fatalf("a missing file resolves to %s", r.body)
	}
	e.req("GET", "/api/sessions/"+s.ID+"/files/resolve", "").want(t, 400, "invalid_path")
}

// TestMetaWorkspaces: the new-session dialog learns where sessions may
// work.
func TestMetaWorkspaces(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var m struct {
		Workspaces struct {
			Default string   `json:"default"`
			Roots   []string `json:"roots"`
		} `json:"workspaces"`
	}
	r := e.req("GET", "/api/meta", "")
	r.want(t, 200, "")
	r.decode(t, &m)
	if m.Workspaces.Default != e.ws || !slices.Equal(m.Workspaces.Roots, []string{e.ws}) {
		t.Fatalf("workspaces = %+v", m.Workspaces)
	}
	other := t.TempDir()
	e.req("POST", "/api/sessions", `{"workspace":`+strconv.Quote(other)+`}`).want(t, 400, "workspace_not_allowed")
}

// TestFilesRoles: a viewer (and a read-scoped token) reads files but
// saves nothing; an operator saves.
func TestFilesRoles(t *testing.T) {
	t.Parallel()
	cp := &fakeCheckpoints{}
	e := newEnv(t, withCheckpoints(cp))
	s := e.session(t)
	name := filepath.Join(e.ws, "a.txt")
	writeFile(t, name, "one\n")
	etag := workspace.ETag([]byte("one\n"))
	viewer := e.login(e.addPerson("vic", auth.RoleViewer))
	op := e.addPerson("ops", auth.RoleOperator)
	opRead := e.addToken(op, auth.ScopeRead)
	operator := e.login(op)

	path := "/api/sessions/" + s.ID + "/files/content?path=a.txt"
	for _, get := range []string{"/api/sessions/" + s.ID + "/files", path, path + "&raw=1", "/api/sessions/" + s.ID + "/files/search?q=one",
		"/api/sessions/" + s.ID + "/files/resolve?path=a.txt"} {
		if r := viewer.req("GET", get, ""); r.code != 200 {
			t.Fatalf("viewer GET %s: %d %s", get, r.code, r.body)
		}
	}
	viewer.req("PUT", path, "viewer's", "Content-Type", "text/plain", "If-Match", etag).want(t, 403, "forbidden")
	e.req("PUT", path, "token's", append(bearer(opRead), "Content-Type", "text/plain", "If-Match", etag)...).want(t, 403, "forbidden")
	if got := readFile(t, name); got != "one\n" || len(cp.taken()) != 0 {
		t.Fatalf("refused saves wrote %q or took checkpoints %v", got, cp.taken())
	}
	operator.req("PUT", path, "two\n", "Content-Type", "text/plain", "If-Match", etag).want(t, 200, "")
	calls := cp.taken()
	if got := readFile(t, name); got != "two\n" || len(calls) != 1 || !strings.HasSuffix(calls[0], " a.txt user") {
		t.Fatalf("operator's save: file %q, checkpoints %v", got, calls)
	}
}
