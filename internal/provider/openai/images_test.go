package openai

import (
	"testing"

	"github.com/caduceus-dev/caduceus/internal/provider"
)

// A user message with loaded images becomes text and image_url parts
// (data: URLs); without loaded images it keeps the plain string form.
func TestImagesBecomeImageParts(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   provider.Message
		want string
	}{
		{"loaded", provider.Message{Role: provider.RoleUser, Text: "what is this?", Images: []provider.Image{
			{Path: "a.png", MIME: "image/png", Data: []byte("\x89PNG..")},
		}}, `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"what is this?"},` +
			`{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORy4u"}}]}],` + streamTail + `}`},
		{"an image alone", provider.Message{Role: provider.RoleUser, Images: []provider.Image{{Path: "a.webp", MIME: "image/webp", Data: []byte("RIFF")}}},
			`{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/webp;base64,UklGRg=="}}]}],` + streamTail + `}`},
		{"not loaded", provider.Message{Role: provider.RoleUser, Text: "hi", Images: []provider.Image{{Path: "a.png", MIME: "image/png"}}},
			`{"model":"m","messages":[{"role":"user","content":"hi"}],` + streamTail + `}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := encodeRequest(provider.Request{Model: "m", Messages: []provider.Message{tc.in}}, compat{})
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
