package api_test

// Skills (issue 16, h16-skills).

import (
	"archive/zip"
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/api"
	"github.com/caduceus-dev/caduceus/internal/skill"
	"github.com/caduceus-dev/caduceus/internal/store/storetest"
)

type skillJSON struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Folder      string   `json:"folder"`
	Path        string   `json:"path"`
	Size        int64    `json:"size"`
	EnabledFor  []string `json:"enabled_for"`
	Error       string   `json:"error"`
}

// newSkillsEnv is the API over a fresh skills directory.
func newSkillsEnv(t *testing.T, open storetest.Open) (*env, string) {
	root := filepath.Join(t.TempDir(), "skills")
	e := newEnv(t, withStore(open), func(c *envConfig) {
		c.options = append(c.options, func(o *api.Options) { o.Skills = skill.NewDir(root) })
	})
	return e, root
}

// upload posts files (field name → content) to the install route, each
// part's file name being its path.
func (e *env) installSkill(t *testing.T, files ...[2]string) resp {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, f := range files {
		w, err := mw.CreateFormFile("file", f[0])
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, f[1])
	}
	mw.Close()
	return e.req("POST", "/api/skills/install", buf.String(), "Content-Type", mw.FormDataContentType())
}

func zipOf(t *testing.T, files ...[2]string) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		w, err := zw.Create(f[0])
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, f[1])
	}
	zw.Close()
	return buf.String()
}

func listed(t *testing.T, e *env) []skillJSON {
	t.Helper()
	r := e.req("GET", "/api/skills", "")
	r.want(t, http.StatusOK, "")
	var out struct{ Skills []skillJSON }
	r.decode(t, &out)
	return out.Skills
}

func TestSkillsAPI(t *testing.T) {
	t.Parallel()
	storetest.Each(t, pg, func(t *testing.T, open storetest.Open) {
		e, root := newSkillsEnv(t, open)
		if got := listed(t, e); len(got) != 0 {
			t.Fatalf("fresh list = %+v", got)
		}

		// Create, read, edit.
		r := e.req("POST", "/api/skills", `{"name":"notes","description":"Take notes: carefully","body":"# Notes\n"}`)
		r.want(t, http.StatusCreated, "")
		var s skillJSON
		r.decode(t, &s)
		if s.Name != "notes" || s.Folder != "notes" || s.Description != "Take notes: carefully" || s.Size == 0 || s.EnabledFor == nil {
			t.Fatalf("created %+v", s)
		}
		e.req("POST", "/api/skills", `{"name":"notes","description":"d"}`).want(t, http.StatusConflict, skill.CodeExists)
		e.req("POST", "/api/skills", `{"name":"Bad Name","description":"d"}`).want(t, http.StatusBadRequest, skill.CodeInvalid)
		e.req("POST", "/api/skills", `{"name":"nodesc"}`).want(t, http.StatusBadRequest, skill.CodeInvalid)

		r = e.req("GET", "/api/skills/notes", "")
		r.want(t, http.StatusOK, "")
		var got struct {
			Content, Body string
			Files         []string
		}
		r.decode(t, &got)
		if got.Body != "# Notes\n" || got.Content != skill.Compose("notes", "Take notes: carefully", "# Notes\n") || got.Files == nil {
			t.Fatalf("get = %+v", got)
		}
		e.req("GET", "/api/skills/ghost", "").want(t, http.StatusNotFound, skill.CodeNotFound)

		e.req("PUT", "/api/skills/notes", `{"content":"---\nname: notes\ndescription: New\n---\nnew"}`).want(t, http.StatusOK, "")
		e.req("PUT", "/api/skills/notes", `{"content":"---\nname: other\ndescription: New\n---\n"}`).want(t, http.StatusBadRequest, skill.CodeInvalid)
		e.req("PUT", "/api/skills/notes", `{"content":"---\nname: notes\n"}`).want(t, http.StatusBadRequest, skill.CodeInvalid)
		e.req("PUT", "/api/skills/notes", `{}`).want(t, http.StatusBadRequest, "invalid_input")
		e.req("PUT", "/api/skills/ghost", `{"content":"---\nname: ghost\ndescription: d\n---\n"}`).want(t, http.StatusNotFound, skill.CodeNotFound)
		if b, _ := os.ReadFile(filepath.Join(root, "notes", "SKILL.md")); string(b) != "---\nname: notes\ndescription: New\n---\nnew" {
			t.Fatalf("SKILL.md after refused edits = %q", b)
		}

		// Install: a zip, and a folder's files.
		r = e.installSkill(t, [2]string{"pdf.zip", zipOf(t, [2]string{"pdf/SKILL.md", "---\nname: pdf\ndescription: PDFs\n---\n# PDF"}, [2]string{"pdf/fill.py", "print()"})})
		r.want(t, http.StatusCreated, "")
		r = e.installSkill(t, [2]string{"lint/SKILL.md", "---\nname: lint\ndescription: Lint\n---\n"}, [2]string{"lint/scripts/run.sh", "#!/bin/sh"})
		r.want(t, http.StatusCreated, "")
		if b, err := os.ReadFile(filepath.Join(root, "lint", "scripts", "run.sh")); err != nil || string(b) != "#!/bin/sh" {
			t.Fatalf("folder install: %q, %v", b, err)
		}

		// Refusals write nothing.
		before := listed(t, e)
		for _, c := range []struct {
			name   string
			files  [][2]string
			status int
			code   string
		}{
			{"zip slip", [][2]string{{"evil.zip", zipOf(t, [2]string{"x/SKILL.md", "---\nname: x\ndescription: d\n---\n"}, [2]string{"x/../../../escape", "x"})}}, 400, skill.CodeUnsafePath},
			{"malformed", [][2]string{{"bad.zip", zipOf(t, [2]string{"bad/SKILL.md", "---\nname: bad\n"})}}, 400, skill.CodeInvalid},
			{"not a zip", [][2]string{{"junk.zip", "PK\x03\x04 junk"}}, 400, skill.CodeBadArchive},
			{"absolute file path", [][2]string{{"/etc/SKILL.md", "---\nname: etc\ndescription: d\n---\n"}}, 400, skill.CodeUnsafePath},
			{"exists", [][2]string{{"SKILL.md", "---\nname: pdf\ndescription: again\n---\n"}}, 409, skill.CodeExists},
			{"nothing", nil, 400, skill.CodeInvalid},
		} {
			e.installSkill(t, c.files...).want(t, c.status, c.code)
		}
		e.req("POST", "/api/skills/install", `{}`).want(t, http.StatusBadRequest, api.CodeInvalidMultipart)
		if after := listed(t, e); len(after) != len(before) {
			t.Fatalf("refused installs changed the list: %+v", after)
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(root), "escape")); !os.IsNotExist(err) {
			t.Fatalf("zip slip wrote outside: %v", err)
		}

		// A profile enables a set; the list says which profiles.
		p := e.profile(t, `{"name":"Writer"}`)
		r = e.req("GET", "/api/profiles/"+p.ID+"/skills", "")
		r.want(t, http.StatusOK, "")
		var set struct {
			Skills []string
			All    bool
		}
		r.decode(t, &set)
		if !set.All || len(set.Skills) != 0 {
			t.Fatalf("new profile's skills = %+v", set)
		}
		r = e.req("PUT", "/api/profiles/"+p.ID+"/skills", `{"skills":["pdf","notes"]}`)
		r.want(t, http.StatusOK, "")
		r.decode(t, &set)
		if set.All || !slices.Equal(set.Skills, []string{"notes", "pdf"}) {
			t.Fatalf("set = %+v", set)
		}
		e.req("PUT", "/api/profiles/"+p.ID+"/skills", `{"skills":["../x"]}`).want(t, http.StatusBadRequest, "invalid_input")
		e.req("PUT", "/api/profiles/"+p.ID+"/skills", `{}`).want(t, http.StatusBadRequest, "invalid_input")
		e.req("PUT", "/api/profiles/prf_00000000000000000000000000/skills", `{"skills":[]}`).want(t, http.StatusNotFound, "not_found")
		for _, s := range listed(t, e) {
			want := []string{}
			if s.Name == "pdf" || s.Name == "notes" {
				want = []string{p.ID}
			}
			if !slices.Equal(s.EnabledFor, want) {
				t.Errorf("%s enabled for %q, want %q", s.Name, s.EnabledFor, want)
			}
		}

		// Delete.
		e.req("DELETE", "/api/skills/pdf", "").want(t, http.StatusNoContent, "")
		e.req("DELETE", "/api/skills/pdf", "").want(t, http.StatusNotFound, skill.CodeNotFound)
		if _, err := os.Stat(filepath.Join(root, "pdf")); !os.IsNotExist(err) {
			t.Fatalf("deleted skill's folder: %v", err)
		}
	})
}

func TestSkillsUnavailable(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.req("GET", "/api/skills", "").want(t, http.StatusServiceUnavailable, api.CodeSkillsUnavailable)
}
