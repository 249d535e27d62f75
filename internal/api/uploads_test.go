package api_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/api"
	"github.com/caduceus-dev/caduceus/internal/event"
	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/transcript"
)

// pngBytes is a real w×h PNG.
func pngBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		img.Set(x, x%h, color.RGBA{200, 30, 30, 255})
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// upFile is one part of an upload: a file name and its content.
type upFile struct {
	name    string
	content []byte
}

// upload posts files as multipart/form-data, plus a plain form field so
// parts without a file name are seen to be ignored.
func (e *env) upload(sid string, files ...upFile) resp {
	e.t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	if err := mw.WriteField("note", "not a file"); err != nil {
		e.t.Fatal(err)
	}
	for _, f := range files {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="file"; filename="`+strings.ReplaceAll(f.name, `"`, `\"`)+`"`)
		h.Set("Content-Type", "image/png") // a lie for most: the server sniffs
		pw, err := mw.CreatePart(h)
		if err != nil {
			e.t.Fatal(err)
		}
		pw.Write(f.content)
	}
	mw.Close()
	return e.raw("POST", "/api/sessions/"+sid+"/uploads", mw.FormDataContentType(), b.Bytes())
}

// raw sends body with a content type as is.
func (e *env) raw(method, path, ctype string, body []byte) resp {
	e.t.Helper()
	r, err := http.NewRequestWithContext(e.ctx, method, e.srv.URL+path, bytes.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if ctype != "" {
		r.Header.Set("Content-Type", ctype)
	}
	res, err := e.srv.Client().Do(r)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{code: res.StatusCode, hdr: res.Header, body: b}
}

type attachmentJSON struct {
	Path   string `json:"path"`
	Name   string `json:"name"`
	MIME   string `json:"mime"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	Kind   string `json:"kind"`
}

// uploaded lists the files under the workspace's upload directory.
func uploaded(t *testing.T, ws string) []string {
	t.Helper()
	des, err := os.ReadDir(filepath.Join(ws, ".caduceus", "uploads"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, d := range des {
		names = append(names, d.Name())
	}
	return names
}

func TestUploadSavesSniffedSanitisedFiles(t *testing.T) {
	e := newEnv(t, withUploads(api.UploadLimits{MaxFileBytes: 64 << 10, MaxRequestBytes: 256 << 10}))
	s := e.session(t)
	img := pngBytes(t, 8, 4)
	r := e.upload(s.ID, upFile{"../../etc/.. shot.png", img}, upFile{"notes.txt", []byte("hello\n")},
		upFile{"report.pdf", []byte("%PDF-1.4\n%âãÏÓ\n")}, upFile{"notes.txt", []byte("again\n")}, upFile{"...", []byte("x")})
	r.want(t, http.StatusCreated, "")
	var out struct{ Attachments []attachmentJSON }
	r.decode(t, &out)
	sum := sha256.Sum256(img)
	want := []attachmentJSON{
		{".caduceus/uploads/shot.png", "shot.png", "image/png", int64(len(img)), hex.EncodeToString(sum[:]), "image"},
		{".caduceus/uploads/notes.txt", "notes.txt", "text/plain; charset=utf-8", 6, "", "file"},
		{".caduceus/uploads/report.pdf", "report.pdf", "application/pdf", 19, "", "file"},
		{".caduceus/uploads/notes-1.txt", "notes-1.txt", "text/plain; charset=utf-8", 6, "", "file"},
		{".caduceus/uploads/upload", "upload", "text/plain; charset=utf-8", 1, "", "file"},
	}
	if len(out.Attachments) != len(want) {
		t.Fatalf("attachments %+v", out.Attachments)
	}
	for i, w := range want {
		got := out.Attachments[i]
		if w.SHA256 == "" {
			got.SHA256 = ""
		}
		if got != w {
			t.Errorf("attachment %d = %+v, want %+v", i, got, w)
		}
	}
	b, err := os.ReadFile(filepath.Join(e.ws, ".caduceus/uploads/shot.png"))
	if err != nil || !bytes.Equal(b, img) {
		t.Fatalf("saved image differs: %v", err)
	}

	// The thumbnail route serves images inline, anything else as a download.
	g := e.req("GET", "/api/sessions/"+s.ID+"/uploads/shot.png", "")
	if g.code != 200 || g.hdr.Get("Content-Type") != "image/png" || !bytes.Equal(g.body, img) || !strings.Contains(g.hdr.Get("Content-Security-Policy"), "sandbox") {
		t.Fatalf("GET image: %d %v", g.code, g.hdr)
	}
	g = e.req("GET", "/api/sessions/"+s.ID+"/uploads/notes.txt", "")
	if g.code != 200 || g.hdr.Get("Content-Type") != "application/octet-stream" || !strings.HasPrefix(g.hdr.Get("Content-Disposition"), "attachment") {
		t.Fatalf("GET file: %d %v", g.code, g.hdr)
	}
	e.req("GET", "/api/sessions/"+s.ID+"/uploads/missing.png", "").want(t, 404, "not_found")
	e.req("GET", "/api/sessions/"+s.ID+"/uploads/..%2F..%2Fsecret", "").want(t, 400, "invalid_path")
	e.req("GET", "/api/sessions/"+s.ID+"/uploads/.hidden", "").want(t, 400, "invalid_path")
}

func TestUploadRefusalsSaveNothing(t *testing.T) {
	e := newEnv(t, withUploads(api.UploadLimits{MaxFileBytes: 1000, MaxRequestBytes: 4000}))
	s := e.session(t)
	path := "/api/sessions/" + s.ID + "/uploads"
	small := pngBytes(t, 2, 2)
	for _, c := range []struct {
		name   string
		do     func() resp
		status int
		code   string
	}{
		{"a file over the per-file limit, after a good one", func() resp {
			return e.upload(s.ID, upFile{"ok.png", small}, upFile{"big.txt", bytes.Repeat([]byte("a"), 1001)})
		}, 413, "upload_too_large"},
		{"a request over the per-request limit", func() resp {
			return e.upload(s.ID, upFile{"a.txt", bytes.Repeat([]byte("a"), 900)}, upFile{"b.txt", bytes.Repeat([]byte("b"), 900)},
				upFile{"c.txt", bytes.Repeat([]byte("c"), 900)}, upFile{"d.txt", bytes.Repeat([]byte("d"), 900)}, upFile{"e.txt", bytes.Repeat([]byte("e"), 900)})
		}, 413, "body_too_large"},
		{"text named like an image", func() resp { return e.upload(s.ID, upFile{"cat.png", []byte("<script>alert(1)</script>")}) }, 415, "upload_type_mismatch"},
		{"a JPEG named .png", func() resp {
			return e.upload(s.ID, upFile{"cat.png", append([]byte{0xFF, 0xD8, 0xFF, 0xE0}, make([]byte, 20)...)})
		}, 415, "upload_type_mismatch"},
		{"no file at all", func() resp { return e.upload(s.ID) }, 400, "no_files"},
		{"JSON instead of multipart", func() resp { return e.raw("POST", path, "application/json", []byte(`{"file":"x"}`)) }, 400, "invalid_multipart"},
		{"multipart without a boundary", func() resp { return e.raw("POST", path, "multipart/form-data", []byte("--x\r\n")) }, 400, "invalid_multipart"},
		{"garbage after the boundary", func() resp {
			return e.raw("POST", path, "multipart/form-data; boundary=XX", []byte("--XX\r\nContent-Disposition: form-data; name=\"f\"; filename=\"a.txt\"\r\n\r\nabc"))
		}, 400, "invalid_multipart"},
		{"binary noise", func() resp {
			return e.raw("POST", path, "multipart/form-data; boundary=XX", []byte{0, 1, 2, 0xff, '-', '-', 'X', 'Y', 0})
		}, 400, "no_files"},
		{"unknown session", func() resp { return e.upload("ses_nope", upFile{"a.txt", []byte("a")}) }, 404, "not_found"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.do().want(t, c.status, c.code)
			if names := uploaded(t, e.ws); len(names) != 0 {
				t.Fatalf("left behind: %v", names)
			}
		})
	}
}

// The uploads route alone gets a body cap above the JSON routes' 1 MiB.
func TestUploadBodyCapIsTheRoutesOwn(t *testing.T) {
	e := newEnv(t, withUploads(api.UploadLimits{MaxFileBytes: 3 << 20, MaxRequestBytes: 4 << 20}))
	s := e.session(t)
	big := bytes.Repeat([]byte("z"), 2<<20)
	e.upload(s.ID, upFile{"big.txt", big}).want(t, http.StatusCreated, "")
	body, _ := json.Marshal(map[string]string{"content": string(big)})
	e.raw("POST", "/api/sessions/"+s.ID+"/messages", "application/json", body).want(t, 413, "body_too_large")
	e.raw("PATCH", "/api/sessions/"+s.ID+"/uploads", "multipart/form-data; boundary=x", big).want(t, 413, "body_too_large")
}

// noImages is a model catalogue in which no model takes images.
type noImages struct{}

func (noImages) AcceptsImages(ref string) (string, bool, error) { return "local/tiny", false, nil }

func TestMessageAttachments(t *testing.T) {
	e := newEnv(t)
	s := e.session(t)
	img := pngBytes(t, 8, 4)
	r := e.upload(s.ID, upFile{"shot.png", img}, upFile{"report.txt", []byte("numbers\n")})
	r.want(t, http.StatusCreated, "")
	if err := os.WriteFile(filepath.Join(filepath.Dir(e.ws), "outside.txt"), []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside.txt", filepath.Join(e.ws, "link.txt")); err != nil {
		t.Fatal(err)
	}
	msgs := "/api/sessions/" + s.ID + "/messages"
	e.runErrCases(t, []errCase{
		{name: "outside by ..", method: "POST", path: msgs, body: `{"content":"x","attachments":[{"path":"../outside.txt"}]}`, status: 400, code: "invalid_attachment"},
		{name: "absolute", method: "POST", path: msgs, body: `{"content":"x","attachments":[{"path":"/etc/passwd"}]}`, status: 400, code: "invalid_attachment"},
		{name: "symlink out", method: "POST", path: msgs, body: `{"content":"x","attachments":[{"path":"link.txt"}]}`, status: 400, code: "invalid_attachment"},
		{name: "missing", method: "POST", path: msgs, body: `{"content":"x","attachments":[{"path":".caduceus/uploads/nope.png"}]}`, status: 400, code: "invalid_attachment"},
		{name: "a directory", method: "POST", path: msgs, body: `{"content":"x","attachments":[{"path":".caduceus"}]}`, status: 400, code: "invalid_attachment"},
		{name: "unknown field", method: "POST", path: msgs, body: `{"content":"x","attachments":[{"path":"a","data":"AAAA"}]}`, status: 400, code: "invalid_input"},
		{name: "nothing to send", method: "POST", path: msgs, body: `{"content":"  "}`, status: 400, code: "invalid_input"},
	})

	// An attachment alone is a message; the journal has its path, type
	// and digest, not its bytes.
	r = e.req("POST", msgs, `{"attachments":[{"path":".caduceus/uploads/shot.png"},{"path":".caduceus/uploads/report.txt"}]}`)
	r.want(t, http.StatusAccepted, "")
	var ru runJSON
	r.decode(t, &ru)
	evs, err := e.st.Events(e.ctx, store.EventQuery{RunID: ru.ID, Types: []event.Type{event.MessageUser}})
	if err != nil || len(evs) != 1 {
		t.Fatalf("message.user: %v %d", err, len(evs))
	}
	var p event.MessageUserPayload
	if err := json.Unmarshal(evs[0].Payload, &p); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(img)
	wantAtt := []event.Attachment{
		{Path: ".caduceus/uploads/shot.png", Name: "shot.png", MIME: "image/png", Size: int64(len(img)), SHA256: hex.EncodeToString(sum[:]), Kind: "image"},
	}
	if len(p.Attachments) != 2 || p.Attachments[0] != wantAtt[0] || p.Attachments[1].Kind != "file" || p.Attachments[1].MIME != "text/plain; charset=utf-8" {
		t.Fatalf("attachments %+v", p.Attachments)
	}
	if len(evs[0].Payload) > 1024 {
		t.Errorf("message.user is %d bytes: the image's bytes went into the journal?", len(evs[0].Payload))
	}
	// The transcript shows them, and the model is told of both.
	var tr struct{ Items []transcript.Item }
	e.req("GET", msgs, "").decode(t, &tr)
	if len(tr.Items) == 0 || len(tr.Items[0].Attachments) != 2 {
		t.Fatalf("transcript %+v", tr.Items)
	}
	m := transcript.UserMessage("", p.Attachments)
	if len(m.Images) != 1 || m.Images[0].Data != nil || !strings.Contains(m.Text, "Attached: .caduceus/uploads/report.txt") {
		t.Fatalf("model message %+v", m)
	}
}

func TestModelWithoutImagesRefusesBeforeTheRun(t *testing.T) {
	e := newEnv(t, withImages(noImages{}))
	s := e.session(t)
	e.upload(s.ID, upFile{"shot.png", pngBytes(t, 2, 2)}, upFile{"a.txt", []byte("a")}).want(t, http.StatusCreated, "")
	msgs := "/api/sessions/" + s.ID + "/messages"
	e.runErrCases(t, []errCase{
		{name: "an image", method: "POST", path: msgs, body: `{"content":"look","attachments":[{"path":".caduceus/uploads/shot.png"}]}`, status: 400, code: "model_lacks_image_input"},
	})
	if runs, _ := e.st.SessionRuns(e.ctx, s.ID); len(runs) != 0 {
		t.Fatalf("a run was queued: %+v", runs)
	}
	// Files are fine for any model.
	e.req("POST", msgs, `{"content":"read it","attachments":[{"path":".caduceus/uploads/a.txt"}]}`).want(t, http.StatusAccepted, "")
}

// withUploads sets the upload bounds.
func withUploads(l api.UploadLimits) envOpt { return func(c *envConfig) { c.uploads = l } }

// withImages sets which models take image input.
func withImages(i api.ImageInput) envOpt { return func(c *envConfig) { c.images = i } }
