package api

// Skills (issue 16, h16-skills), acceptance: a skill uploaded as a zip is
// listed and, in a run of a profile that enables it, offered to the model
// (the skills tool's list, in the request that follows its call); a
// malformed zip and a zip-slip zip are refused with their reasons and
// nothing is written.

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

// skillZip packs files (path, content pairs) as a .zip.
func skillZip(t *testing.T, files ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := 0; i+1 < len(files); i += 2 {
		w, err := zw.Create(files[i])
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(w, files[i+1])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type installAnswer struct {
	Name  string `json:"name"`
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// installZip uploads a .zip as a browser form would.
func installZip(t *testing.T, s *e2etest.Server, name string, data []byte) (int, installAnswer) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	w, _ := mw.CreateFormFile("file", name)
	w.Write(data)
	mw.Close()
	res, err := http.Post(s.URL+"/api/skills/install", mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out installAnswer
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, out
}

func TestSkillUploadedAndOfferedToTheModel(t *testing.T) {
	oa := newOpenAIFake(t, openaiTestKey, openaiTestKey)
	s := startWith(t, oa)
	skillsDir := filepath.Join(s.DataDir, "skills")

	// Two skills: one in a zip with its folder, one packed flat.
	if c, out := installZip(t, s, "release-notes.zip", skillZip(t,
		"release-notes/SKILL.md", "---\nname: release-notes\ndescription: \"Write release notes: use when asked for a changelog.\"\nlicense: MIT\n---\n# Release notes\nList the changes.\n",
		"release-notes/template.md", "## Changes\n")); c != http.StatusCreated || out.Name != "release-notes" {
		t.Fatalf("install release-notes: %d %+v", c, out)
	}
	if c, out := installZip(t, s, "haiku.zip", skillZip(t, "SKILL.md", "---\nname: haiku\ndescription: Answer in haiku.\n---\nFive, seven, five.\n")); c != http.StatusCreated {
		t.Fatalf("install haiku: %d %+v", c, out)
	}
	var list struct {
		Skills []struct {
			Name, Description, Folder, License string
			Size                               int64
		}
	}
	if c := e2etest.Do(t, "GET", s.URL+"/api/skills", nil, &list); c != http.StatusOK || len(list.Skills) != 2 {
		t.Fatalf("list: %d %+v", c, list)
	}
	if l := list.Skills[1]; l.Name != "release-notes" || l.Folder != "release-notes" || l.License != "MIT" || l.Size == 0 ||
		l.Description != "Write release notes: use when asked for a changelog." {
		t.Fatalf("listed %+v", l)
	}

	// Refusals: a reason, a stable code, and nothing written.
	before := dirTree(t, skillsDir)
	for _, c := range []struct {
		name   string
		zip    []byte
		code   string
		reason string
	}{
		{"malformed", skillZip(t, "broken/SKILL.md", "---\nname: broken\ndescription: no closing line\n"), "skill_invalid", "front matter is not closed by a --- line"},
		{"zip slip", skillZip(t, "evil/SKILL.md", "---\nname: evil\ndescription: d\n---\n", "evil/../../../../tmp/pwned", "x"), "skill_unsafe_path", `"evil/../../../../tmp/pwned" leaves the skill's folder`},
	} {
		code, out := installZip(t, s, c.name+".zip", c.zip)
		if code != http.StatusBadRequest || out.Error.Code != c.code || !strings.Contains(out.Error.Message, c.reason) {
			t.Fatalf("%s: %d %+v, want 400 %s %q", c.name, code, out, c.code, c.reason)
		}
	}
	if after := dirTree(t, skillsDir); !slices.Equal(after, before) {
		t.Fatalf("refused installs changed %s:\n%q\nwas %q", skillsDir, after, before)
	}

	// A profile that enables release-notes only: its run's skills list
	// offers that one.
	var prof struct{ ID string }
	if c := e2etest.Do(t, "POST", s.URL+"/api/profiles", map[string]any{"name": "Writer", "approval_mode": "off"}, &prof); c != http.StatusCreated {
		t.Fatalf("create profile: %d", c)
	}
	if c := e2etest.Do(t, "PUT", s.URL+"/api/profiles/"+prof.ID+"/skills", map[string]any{"skills": []string{"release-notes"}}, nil); c != http.StatusOK {
		t.Fatalf("enable skill: %d", c)
	}
	var sess struct{ ID string }
	if c := e2etest.Do(t, "POST", s.URL+"/api/sessions", map[string]any{"profile_id": prof.ID}, &sess); c != http.StatusCreated {
		t.Fatalf("create session: %d", c)
	}
	oa.stream(oa.tools(fakeCall{id: "call_skills_1", name: "skills", args: `{"action":"list"}`}))
	oa.stream(oa.text("Noted."))
	st := e2etest.OpenStream(t, s.URL+"/api/sessions/"+sess.ID+"/events", nil)
	r := s.Send(t, sess.ID, "write the release notes")
	if got := summarise(t, st.Until(t, "run.done", e2etest.IsDone(r.ID)), r.ID); got.done.Status != "completed" {
		t.Fatalf("run.done %+v", got.done)
	}
	bodies := oa.bodies()
	if len(bodies) != 2 {
		t.Fatalf("%d model requests, want 2", len(bodies))
	}
	var first modelRequest
	if err := json.Unmarshal(bodies[0], &first); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(first.Tools, func(tl struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}) bool {
		return tl.Function.Name == "skills"
	}) {
		t.Fatalf("the first request offers no skills tool: %s", bodies[0])
	}
	listOut := oa.results(t, bodies[1])["call_skills_1"]
	if !strings.Contains(listOut, "release-notes — Write release notes: use when asked for a changelog.") || strings.Contains(listOut, "haiku") {
		t.Fatalf("the skills list the model received = %q", listOut)
	}
}

// dirTree lists every path under dir.
func dirTree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
