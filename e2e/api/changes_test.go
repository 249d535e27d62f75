package api

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/event"
)

type changesJSON struct {
	From         string `json:"from"`
	To           string `json:"to"`
	RunID        string `json:"run_id"`
	FilesChanged int    `json:"files_changed"`
	Added        int    `json:"added"`
	Removed      int    `json:"removed"`
	Files        []struct {
		Path    string `json:"path"`
		Status  string `json:"status"`
		Added   int    `json:"added"`
		Removed int    `json:"removed"`
		Diff    string `json:"diff"`
	} `json:"files"`
}

type restoreJSON struct {
	DryRun    bool   `json:"dry_run"`
	Conflicts int    `json:"conflicts"`
	Undoable  bool   `json:"undoable"`
	Note      string `json:"note"`
	Before    string `json:"before_checkpoint_id"`
	After     string `json:"after_checkpoint_id"`
	Files     []struct {
		Path     string `json:"path"`
		Action   string `json:"action"`
		Conflict bool   `json:"conflict"`
		Applied  bool   `json:"applied"`
	} `json:"files"`
}

// wsFiles reads every file of dir (no directories below it here).
func wsFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

func sameFiles(t *testing.T, what string, got, want map[string][]byte) {
	t.Helper()
	for name, w := range want {
		if g, ok := got[name]; !ok || !bytes.Equal(g, w) {
			t.Errorf("%s: %s = %q (present %v), want %q", what, name, g, ok, w)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: %s exists, want it absent", what, name)
		}
	}
}

// The acceptance case of issue 14: a scripted run writes a file, edits
// another, deletes a third and runs sed -i on a fourth through the shell
// tool. Its changes list all four with correct diffs; reverting the run
// restores all four byte for byte; undoing the revert brings the changes
// back; the model's next turn is told which files were rolled back.
func TestRunChangesRevertAndUndo(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	orig := map[string][]byte{
		"edit.txt":   []byte("alpha\nbeta\ngamma\n"),
		"delete.txt": []byte("to be deleted\n\x00binary-ish tail"),
		"sed.txt":    []byte("one x\ntwo x\nthree\n"),
		"keep.txt":   []byte("untouched\n"),
	}
	for name, b := range orig {
		if err := os.WriteFile(filepath.Join(ws, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := e2etest.StartServer(t, e2etest.Scenarios(
		e2etest.Scenario("rolled back these files", e2etest.Turn(e2etest.Text("I see the rollback."))),
		e2etest.Scenario("change", e2etest.Turn(
			e2etest.Call("write_file", `{"path":"new.txt","content":"brand new\nfile\n"}`),
			e2etest.Call("edit_file", `{"path":"edit.txt","old_string":"beta","new_string":"BETA"}`),
			e2etest.Call("run_command", `{"command":"rm delete.txt"}`),
			e2etest.Call("run_command", `{"command":"sed -i 's/x/y/' sed.txt"}`),
		), e2etest.Turn(e2etest.Text("Done."))),
	), e2etest.WithWorkspace(ws), e2etest.WithApprovalMode("off"))
	sid := s.NewSession(t)
	r := s.Send(t, sid, "change the files")
	s.WaitStatus(t, r.ID, "completed")

	changed := wsFiles(t, ws)
	want := map[string][]byte{
		"new.txt":  []byte("brand new\nfile\n"),
		"edit.txt": []byte("alpha\nBETA\ngamma\n"),
		"sed.txt":  []byte("one y\ntwo y\nthree\n"),
		"keep.txt": orig["keep.txt"],
	}
	sameFiles(t, "after the run", changed, want)

	// Four tool calls checkpointed before they ran, one at the end.
	var created []event.CheckpointCreatedPayload
	for _, e := range s.Journal(t, r.ID) {
		if e.Type == event.CheckpointCreated {
			created = append(created, e2etest.Payload[event.CheckpointCreatedPayload](t, e))
		}
	}
	if len(created) != 5 || created[4].ToolCallID != "" || created[4].FilesChanged != 1 || !slices.Equal(created[4].Files, []string{"sed.txt"}) {
		t.Fatalf("checkpoint.created events = %+v", created)
	}

	var ch changesJSON
	if c := e2etest.Do(t, "GET", s.URL+"/api/runs/"+r.ID+"/changes", nil, &ch); c != http.StatusOK {
		t.Fatalf("changes: %d", c)
	}
	type fileWant struct {
		status         string
		added, removed int
		diffHas        []string
	}
	wantFiles := map[string]fileWant{
		"new.txt":    {"added", 2, 0, []string{"+brand new", "+file"}},
		"edit.txt":   {"modified", 1, 1, []string{"-beta", "+BETA", " alpha"}},
		"delete.txt": {"deleted", 0, 0, nil}, // a NUL makes it binary: no line counts
		"sed.txt":    {"modified", 2, 2, []string{"-one x", "-two x", "+one y", "+two y"}},
	}
	if ch.FilesChanged != 4 || len(ch.Files) != 4 {
		t.Fatalf("changes = %+v", ch)
	}
	for _, f := range ch.Files {
		w, ok := wantFiles[f.Path]
		if !ok || f.Status != w.status || f.Added != w.added || f.Removed != w.removed {
			t.Errorf("file %+v, want %+v", f, w)
		}
		for _, s := range w.diffHas {
			if !strings.Contains(f.Diff, "\n"+s+"\n") {
				t.Errorf("%s diff lacks %q:\n%s", f.Path, s, f.Diff)
			}
		}
	}
	// One tool call's changes: the sed call's are sed.txt alone.
	sedCall := created[3].ToolCallID
	var one changesJSON
	if c := e2etest.Do(t, "GET", s.URL+"/api/runs/"+r.ID+"/changes?tool_call="+sedCall, nil, &one); c != http.StatusOK || len(one.Files) != 1 || one.Files[0].Path != "sed.txt" {
		t.Fatalf("tool call changes: %d %+v", c, one)
	}

	// The preview changes nothing and says the rollback can be undone.
	var pre restoreJSON
	if c := e2etest.Do(t, "POST", s.URL+"/api/runs/"+r.ID+"/revert", map[string]any{"dry_run": true}, &pre); c != http.StatusOK {
		t.Fatalf("preview: %d", c)
	}
	if !pre.DryRun || !pre.Undoable || pre.Note == "" || len(pre.Files) != 4 || pre.Conflicts != 0 || pre.Before != "" {
		t.Fatalf("preview = %+v", pre)
	}
	sameFiles(t, "after the preview", wsFiles(t, ws), want)

	var rev restoreJSON
	if c := e2etest.Do(t, "POST", s.URL+"/api/runs/"+r.ID+"/revert", map[string]any{}, &rev); c != http.StatusOK {
		t.Fatalf("revert: %d", c)
	}
	if rev.Before == "" || rev.After == "" || len(rev.Files) != 4 {
		t.Fatalf("revert = %+v", rev)
	}
	for _, f := range rev.Files {
		if !f.Applied {
			t.Errorf("not applied: %+v", f)
		}
	}
	sameFiles(t, "after the revert", wsFiles(t, ws), orig)

	// The undo: the rollback's own span, before → after, restored.
	var undo restoreJSON
	if c := e2etest.Do(t, "POST", s.URL+"/api/checkpoints/"+rev.Before+"/restore", map[string]any{"to": rev.After}, &undo); c != http.StatusOK {
		t.Fatalf("undo: %d %+v", c, undo)
	}
	sameFiles(t, "after the undo", wsFiles(t, ws), want)

	// The session lists the checkpoints, the rollback's and the undo's
	// too, and the rollback is journaled with who did it.
	var list struct {
		Checkpoints []struct {
			ID     string `json:"id"`
			RunID  string `json:"run_id"`
			Reason string `json:"reason"`
		} `json:"checkpoints"`
	}
	if c := e2etest.Do(t, "GET", s.URL+"/api/sessions/"+sid+"/checkpoints", nil, &list); c != http.StatusOK || len(list.Checkpoints) != 9 {
		t.Fatalf("checkpoints: %d %+v", c, list)
	}

	// The next run is told which files were rolled back (the scenario
	// matching the note answers).
	r2 := s.Send(t, sid, "what now?")
	s.WaitStatus(t, r2.ID, "completed")
	var text string
	for _, e := range s.Journal(t, r2.ID) {
		if e.Type == event.MessageDone {
			text += e2etest.Payload[event.DonePayload](t, e).Text
		}
	}
	if text != "I see the rollback." {
		t.Fatalf("second run answered %q: the rollback note did not reach the model", text)
	}
}

// A file changed again after the run is a conflict: the preview flags it,
// a revert leaves it, and force on that path writes it.
func TestRevertConflict(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := e2etest.StartServer(t, e2etest.Script(
		e2etest.Turn(e2etest.Call("write_file", `{"path":"a.txt","content":"v2\n"}`), e2etest.Call("write_file", `{"path":"b.txt","content":"b\n"}`)),
		e2etest.Turn(e2etest.Text("ok")),
	), e2etest.WithWorkspace(ws), e2etest.WithApprovalMode("off"))
	sid := s.NewSession(t)
	r := s.Send(t, sid, "go")
	s.WaitStatus(t, r.ID, "completed")
	// A person changes a.txt after the run.
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("v3 by a person\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var pre restoreJSON
	if c := e2etest.Do(t, "POST", s.URL+"/api/runs/"+r.ID+"/revert", map[string]any{"dry_run": true}, &pre); c != http.StatusOK || pre.Conflicts != 1 {
		t.Fatalf("preview: %d %+v", c, pre)
	}
	var rev restoreJSON
	if c := e2etest.Do(t, "POST", s.URL+"/api/runs/"+r.ID+"/revert", map[string]any{}, &rev); c != http.StatusOK {
		t.Fatalf("revert: %d", c)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "v3 by a person\n" {
		t.Fatalf("conflicting file overwritten: %q", b)
	}
	if _, err := os.Stat(filepath.Join(ws, "b.txt")); !os.IsNotExist(err) {
		t.Fatalf("b.txt not removed: %v", err)
	}
	if c := e2etest.Do(t, "POST", s.URL+"/api/runs/"+r.ID+"/revert", map[string]any{"paths": []string{"a.txt"}, "force": true}, &rev); c != http.StatusOK {
		t.Fatalf("forced revert: %d", c)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "a.txt")); string(b) != "v1\n" {
		t.Fatalf("forced revert left %q", b)
	}
	// Bad input: a path outside, an unknown checkpoint, an unknown field.
	for _, tc := range []struct {
		method, url string
		body        any
		status      int
		code        string
	}{
		{"POST", "/api/runs/" + r.ID + "/revert", map[string]any{"paths": []string{"../x"}}, 400, "invalid_path"},
		{"POST", "/api/runs/" + r.ID + "/revert", map[string]any{"paths": []string{"/etc/passwd"}}, 400, "invalid_path"},
		{"POST", "/api/runs/" + r.ID + "/revert", map[string]any{"nope": 1}, 400, "invalid_input"},
		{"GET", "/api/checkpoints/ckp_0000000000000000000000000/diff", nil, 404, ""},
		{"GET", "/api/checkpoints/x/diff?to=later", nil, 404, "not_found"},
	} {
		var e struct {
			Error struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		c := e2etest.Do(t, tc.method, s.URL+tc.url, tc.body, &e)
		if c != tc.status || (tc.code != "" && e.Error.Code != tc.code) {
			t.Errorf("%s %s %v: %d %q, want %d %q", tc.method, tc.url, tc.body, c, e.Error.Code, tc.status, tc.code)
		}
	}
}

// A person's save in the Files panel takes a checkpoint first (issue 14:
// "before every edit a person saves"), so restoring that checkpoint puts
// the file back as it was before the save.
func TestPersonSaveTakesCheckpoint(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("ok"))), e2etest.WithWorkspace(ws))
	sid := s.NewSession(t)
	url := s.URL + "/api/sessions/" + sid + "/files/content?path=notes.txt"

	get, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	get.Body.Close()
	etag := get.Header.Get("ETag")
	if get.StatusCode != http.StatusOK || etag == "" {
		t.Fatalf("GET content: %d, ETag %q", get.StatusCode, etag)
	}
	put, err := http.NewRequest(http.MethodPut, url, strings.NewReader("after, by a person\n"))
	if err != nil {
		t.Fatal(err)
	}
	put.Header.Set("If-Match", etag)
	res, err := http.DefaultClient.Do(put)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("PUT content: %d", res.StatusCode)
	}

	var list struct {
		Checkpoints []struct {
			ID     string `json:"id"`
			Reason string `json:"reason"`
		} `json:"checkpoints"`
	}
	if c := e2etest.Do(t, "GET", s.URL+"/api/sessions/"+sid+"/checkpoints", nil, &list); c != http.StatusOK {
		t.Fatalf("checkpoints: %d", c)
	}
	var before string
	for _, c := range list.Checkpoints {
		if strings.Contains(c.Reason, "edit") {
			before = c.ID
		}
	}
	if before == "" {
		t.Fatalf("no checkpoint before the person's edit: %+v", list.Checkpoints)
	}
	var rev restoreJSON
	if c := e2etest.Do(t, "POST", s.URL+"/api/checkpoints/"+before+"/restore", map[string]any{"paths": []string{"notes.txt"}}, &rev); c != http.StatusOK {
		t.Fatalf("restore: %d %+v", c, rev)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "notes.txt")); string(b) != "before\n" {
		t.Fatalf("restored notes.txt = %q, want the content before the save", b)
	}
}
