package api

// Attachments through a real server: an uploaded image reaches an
// OpenAI-compatible server as an image_url part and Anthropic as an image
// block; a file changed after it was attached is not sent as if it were
// the same; the demo model says what it received.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

func attachPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		img.Set(x, 0, color.RGBA{10, 200, 10, 255})
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// uploadFile posts one file to the session's uploads and returns its path.
func uploadFile(t *testing.T, s *e2etest.Server, sid, name string, content []byte) string {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", name)
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(content)
	mw.Close()
	res, err := http.Post(s.URL+"/api/sessions/"+sid+"/uploads", mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		Attachments []struct{ Path string } `json:"attachments"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != http.StatusCreated || len(out.Attachments) != 1 {
		t.Fatalf("upload: %d %v %+v", res.StatusCode, err, out)
	}
	return out.Attachments[0].Path
}

// sendAttached posts a message with attachments and returns its run.
func sendAttached(t *testing.T, s *e2etest.Server, sid, content, model string, paths ...string) e2etest.RunJSON {
	t.Helper()
	atts := make([]map[string]string, len(paths))
	for i, p := range paths {
		atts[i] = map[string]string{"path": p}
	}
	var out e2etest.RunJSON
	if c := e2etest.Do(t, "POST", s.URL+"/api/sessions/"+sid+"/messages",
		map[string]any{"content": content, "model": model, "attachments": atts}, &out); c != http.StatusAccepted {
		t.Fatalf("send: %d", c)
	}
	return out
}

func TestAttachmentsReachProviders(t *testing.T) {
	t.Parallel()
	img := attachPNG(t, 16, 8)
	b64 := base64.StdEncoding.EncodeToString(img)
	for _, tc := range []struct {
		name string
		fake func(t *testing.T) *llmFake
		// image reports whether the request's first user message carries
		// the image, and returns that message's text.
		image func(t *testing.T, body []byte) (bool, string)
	}{
		{"openai", func(t *testing.T) *llmFake { return newOpenAIFake(t, "sk-a", "sk-a") }, func(t *testing.T, body []byte) (bool, string) {
			var req struct {
				Messages []struct {
					Role    string          `json:"role"`
					Content json.RawMessage `json:"content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(body, &req); err != nil {
				t.Fatal(err)
			}
			for _, m := range req.Messages {
				if m.Role != "user" {
					continue
				}
				var parts []struct {
					Type     string `json:"type"`
					Text     string `json:"text"`
					ImageURL struct {
						URL string `json:"url"`
					} `json:"image_url"`
				}
				if json.Unmarshal(m.Content, &parts) != nil {
					var s string
					_ = json.Unmarshal(m.Content, &s)
					return false, s
				}
				has, text := false, ""
				for _, p := range parts {
					has = has || p.Type == "image_url" && p.ImageURL.URL == "data:image/png;base64,"+b64
					text += p.Text
				}
				return has, text
			}
			return false, ""
		}},
		{"anthropic", func(t *testing.T) *llmFake { return newAnthropicFake(t, "sk-ant-a", "sk-ant-a") }, func(t *testing.T, body []byte) (bool, string) {
			var req struct {
				Messages []struct {
					Role    string `json:"role"`
					Content []struct {
						Type   string `json:"type"`
						Text   string `json:"text"`
						Source struct {
							Type      string `json:"type"`
							MediaType string `json:"media_type"`
							Data      string `json:"data"`
						} `json:"source"`
					} `json:"content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(body, &req); err != nil {
				t.Fatal(err)
			}
			has, text := false, ""
			for _, b := range req.Messages[0].Content {
				has = has || b.Type == "image" && b.Source.Type == "base64" && b.Source.MediaType == "image/png" && b.Source.Data == b64
				text += b.Text
			}
			return has, text
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := tc.fake(t)
			s := startWith(t, f)
			sid := s.NewSession(t)
			p := uploadFile(t, s, sid, "chart.png", img)
			f.stream(f.text("a chart"))
			s.WaitStatus(t, sendAttached(t, s, sid, "what is this?", f.ref(), p).ID, "completed")
			bodies := f.bodies()
			has, text := tc.image(t, bodies[len(bodies)-1])
			if !has || !strings.Contains(text, "what is this?") || !strings.Contains(text, "Attached image: .caduceus/uploads/chart.png") {
				t.Fatalf("image %v, text %q", has, text)
			}

			// The file changes: the next request does not pass the new
			// content off as the image the person attached.
			var sess struct{ Workspace string }
			e2etest.Do(t, "GET", s.URL+"/api/sessions/"+sid, nil, &sess)
			if err := os.WriteFile(filepath.Join(sess.Workspace, p), attachPNG(t, 4, 4), 0o644); err != nil {
				t.Fatal(err)
			}
			f.stream(f.text("ok"))
			s.WaitStatus(t, sendModel(t, s, sid, "and now?", f.ref()).ID, "completed")
			bodies = f.bodies()
			has, text = tc.image(t, bodies[len(bodies)-1])
			if has || !strings.Contains(text, "not sent: the file changed after it was attached") {
				t.Fatalf("after a change: image %v, text %q", has, text)
			}
		})
	}
}

func TestDemoModelDescribesAttachedImage(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("scripted"))))
	sid := s.NewSession(t)
	p := uploadFile(t, s, sid, "photo.png", attachPNG(t, 40, 30))
	ru := s.WaitStatus(t, sendAttached(t, s, sid, "", "", p).ID, "completed")
	var text string
	for _, e := range s.Journal(t, ru.ID) {
		if e.Type == "message.done" {
			var d struct{ Text string }
			_ = json.Unmarshal(e.Payload, &d)
			text += d.Text
		}
	}
	if !strings.Contains(text, "photo.png (image/png") || !strings.Contains(text, "40×30 pixels") {
		t.Fatalf("the demo model said %q", text)
	}
}
