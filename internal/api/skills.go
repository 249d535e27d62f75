package api

// Skills (issue 16, h16-skills): the skills under the data directory, and
// the ones each profile enables. Changing them is an admin's: a skill is
// instructions the agent follows.

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/control"
	"github.com/caduceus-dev/caduceus/internal/httpguard"
	"github.com/caduceus-dev/caduceus/internal/skill"
	"github.com/caduceus-dev/caduceus/internal/store"
)

// CodeSkillsUnavailable answers the skills routes of a server with no
// skills directory.
const CodeSkillsUnavailable = "skills_unavailable"

// skillsInstallPattern is the route allowed a body up to a skill's size.
const skillsInstallPattern = "POST /api/skills/install"

type skillView struct {
	skill.Skill
	// Folder is the skill's folder name under the skills directory.
	Folder string `json:"folder"`
	// Size is the bytes of every file in the skill's folder.
	Size int64 `json:"size"`
	// EnabledFor lists the profiles that enable the skill by id; a
	// profile that enables none offers every skill and is not listed.
	EnabledFor []string `json:"enabled_for"`
}

func newSkillView(s skill.Skill, enabled map[string][]string) skillView {
	v := skillView{Skill: s, Folder: filepath.Base(s.Path), Size: folderSize(s.Path), EnabledFor: enabled[s.Name]}
	if v.EnabledFor == nil {
		v.EnabledFor = []string{}
	}
	return v
}

// folderSize adds up the sizes of the regular files under dir.
func folderSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// skills answers 503 when the server has no skills directory.
func (a *API) skills(w http.ResponseWriter) (*skill.Dir, bool) {
	if a.opt.Skills == nil {
		writeError(w, http.StatusServiceUnavailable, CodeSkillsUnavailable, "this server has no skills directory", nil)
		return nil, false
	}
	return a.opt.Skills, true
}

// failSkill writes a refusal with its code; anything else is a.fail's.
func (a *API) failSkill(w http.ResponseWriter, r *http.Request, err error) {
	ref, ok := skill.AsRefusal(err)
	if !ok {
		a.fail(w, r, err)
		return
	}
	status := http.StatusBadRequest
	switch ref.Code {
	case skill.CodeNotFound:
		status = http.StatusNotFound
	case skill.CodeExists:
		status = http.StatusConflict
	case skill.CodeTooLarge:
		status = http.StatusRequestEntityTooLarge
	}
	writeError(w, status, ref.Code, ref.Reason, nil)
}

func (a *API) listSkills(w http.ResponseWriter, r *http.Request) {
	d, ok := a.skills(w)
	if !ok {
		return
	}
	list, err := d.List()
	if err != nil {
		a.log.Warn("listing skills", "err", err)
	}
	enabled, err := a.st.SkillProfiles(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := make([]skillView, len(list))
	for i, s := range list {
		out[i] = newSkillView(s, enabled)
	}
	writeJSON(w, http.StatusOK, map[string]any{"skills": out, "dir": d.Root()})
}

// skillByName finds the listed skill name.
func skillByName(d *skill.Dir, name string) (skill.Skill, error) {
	list, _ := d.List()
	for _, s := range list {
		if s.Name == name {
			return s, nil
		}
	}
	return skill.Skill{}, &skill.Refusal{Code: skill.CodeNotFound, Reason: "no skill named " + quote(name)}
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }

// getSkill answers a skill's SKILL.md as written (front matter included,
// even when it is broken, so it can be fixed) and its other files.
func (a *API) getSkill(w http.ResponseWriter, r *http.Request) {
	d, ok := a.skills(w)
	if !ok {
		return
	}
	name := r.PathValue("name")
	s, err := skillByName(d, name)
	if err != nil {
		a.failSkill(w, r, err)
		return
	}
	content, files, err := d.Raw(name)
	if err != nil {
		a.failSkill(w, r, err)
		return
	}
	enabled, err := a.st.SkillProfiles(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	_, body, _ := skill.Parse(content)
	if files == nil {
		files = []string{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"skill": newSkillView(s, enabled), "content": content, "body": body, "files": files})
}

type skillInput struct {
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Body        string  `json:"body"`
	Content     *string `json:"content"` // a whole SKILL.md instead of the three above
}

func (in skillInput) content() string {
	if in.Content != nil {
		return *in.Content
	}
	return skill.Compose(in.Name, in.Description, in.Body)
}

// respondSkill answers the skill name as listed after a change.
func (a *API) respondSkill(w http.ResponseWriter, r *http.Request, d *skill.Dir, name string, status int) {
	s, err := skillByName(d, name)
	if err != nil {
		a.failSkill(w, r, err)
		return
	}
	enabled, err := a.st.SkillProfiles(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, status, newSkillView(s, enabled))
}

func (a *API) createSkill(w http.ResponseWriter, r *http.Request) {
	d, ok := a.skills(w)
	if !ok {
		return
	}
	var in skillInput
	if !decode(w, r, &in) {
		return
	}
	meta, err := d.Create(in.content())
	if err != nil {
		a.failSkill(w, r, err)
		return
	}
	a.log.Info("skill created", "skill", meta.Name)
	a.respondSkill(w, r, d, meta.Name, http.StatusCreated)
}

func (a *API) putSkill(w http.ResponseWriter, r *http.Request) {
	d, ok := a.skills(w)
	if !ok {
		return
	}
	var in struct {
		Content *string `json:"content"`
	}
	if !decode(w, r, &in) {
		return
	}
	if in.Content == nil {
		writeError(w, http.StatusBadRequest, control.CodeInvalidInput, "content (the whole SKILL.md) is required", nil)
		return
	}
	name := r.PathValue("name")
	if _, err := d.Update(name, *in.Content); err != nil {
		a.failSkill(w, r, err)
		return
	}
	a.log.Info("skill updated", "skill", name)
	a.respondSkill(w, r, d, name, http.StatusOK)
}

func (a *API) deleteSkill(w http.ResponseWriter, r *http.Request) {
	d, ok := a.skills(w)
	if !ok {
		return
	}
	name := r.PathValue("name")
	if err := d.Delete(name); err != nil {
		a.failSkill(w, r, err)
		return
	}
	a.log.Info("skill deleted", "skill", name)
	w.WriteHeader(http.StatusNoContent)
}

// installSkill installs a skill sent as multipart/form-data: one .zip, or
// a folder's files whose file names are their paths ("<folder>/SKILL.md",
// as a browser sends a picked folder). Nothing is written unless all of
// it passes.
func (a *API) installSkill(w http.ResponseWriter, r *http.Request) {
	d, ok := a.skills(w)
	if !ok {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, skill.MaxInstallRequestBytes)
	mr, err := r.MultipartReader()
	if err != nil {
		writeError(w, http.StatusBadRequest, CodeInvalidMultipart, "send the skill as multipart/form-data: one .zip, or a folder's files", nil)
		return
	}
	var files []skill.Upload
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			a.installReadFailed(w, err)
			return
		}
		name := rawFileName(p.Header.Get("Content-Disposition"))
		if name == "" {
			p.Close()
			continue
		}
		if len(files) == skill.MaxInstallFiles+1 {
			writeError(w, http.StatusRequestEntityTooLarge, skill.CodeTooLarge, "the skill has more than 200 files", nil)
			return
		}
		b, err := io.ReadAll(p)
		p.Close()
		if err != nil {
			a.installReadFailed(w, err)
			return
		}
		files = append(files, skill.Upload{Path: name, Data: b})
	}
	var meta skill.Meta
	if len(files) == 1 && (strings.HasSuffix(strings.ToLower(files[0].Path), ".zip") || bytes.HasPrefix(files[0].Data, []byte("PK\x03\x04"))) {
		meta, err = d.InstallZip(files[0].Data)
	} else {
		meta, err = d.InstallFiles(files)
	}
	if err != nil {
		a.failSkill(w, r, err)
		return
	}
	a.log.Info("skill installed", "skill", meta.Name)
	a.respondSkill(w, r, d, meta.Name, http.StatusCreated)
}

func (a *API) installReadFailed(w http.ResponseWriter, err error) {
	if httpguard.IsBodyTooLarge(err) {
		writeError(w, http.StatusRequestEntityTooLarge, httpguard.CodeBodyTooLarge, "the upload is larger than a skill may be", nil)
		return
	}
	writeError(w, http.StatusBadRequest, CodeInvalidMultipart, "could not read the multipart body", nil)
}

// rawFileName is a part's filename parameter as sent: Part.FileName keeps
// only its last element, and a folder's files need their paths (which
// InstallFiles then checks).
func rawFileName(disposition string) string {
	_, params, err := mime.ParseMediaType(disposition)
	if err != nil {
		return ""
	}
	return params["filename"]
}

// Skills of a profile.

func (a *API) getProfileSkills(w http.ResponseWriter, r *http.Request) {
	pid, ok := pathID(w, r, "prf", "profile")
	if !ok {
		return
	}
	if _, err := a.st.GetProfile(r.Context(), pid); err != nil {
		a.fail(w, r, err)
		return
	}
	names, err := a.st.ProfileSkills(r.Context(), pid)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeProfileSkills(w, names)
}

func writeProfileSkills(w http.ResponseWriter, names []string) {
	if names == nil {
		names = []string{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"skills": names, "all": len(names) == 0})
}

func (a *API) putProfileSkills(w http.ResponseWriter, r *http.Request) {
	pid, ok := pathID(w, r, "prf", "profile")
	if !ok {
		return
	}
	var in struct {
		Skills *[]string `json:"skills"`
	}
	if !decode(w, r, &in) {
		return
	}
	if in.Skills == nil {
		writeError(w, http.StatusBadRequest, control.CodeInvalidInput, "skills (a list of skill names; empty enables every skill) is required", nil)
		return
	}
	if len(*in.Skills) > 1000 {
		writeError(w, http.StatusBadRequest, control.CodeInvalidInput, "at most 1000 skills", nil)
		return
	}
	for _, n := range *in.Skills {
		if !skill.ValidName(n) {
			writeError(w, http.StatusBadRequest, control.CodeInvalidInput, "invalid skill name "+quote(n), map[string]any{"name": n})
			return
		}
	}
	err := a.st.Write(r.Context(), func(tx store.Tx) error { return tx.SetProfileSkills(r.Context(), pid, *in.Skills) })
	if errors.Is(err, store.ErrNotFound) {
		writeError(w, http.StatusNotFound, control.CodeNotFound, "profile not found", nil)
		return
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	names, err := a.st.ProfileSkills(r.Context(), pid)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeProfileSkills(w, names)
}
