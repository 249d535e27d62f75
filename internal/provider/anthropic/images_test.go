package anthropic

import (
	"encoding/json"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/provider/anthropic/anthropictest"
)

// An attached image becomes an image block with a base64 source, before
// the text of its message; an image whose bytes were not loaded (the
// runner refused it) is not sent at all.
func TestImagesBecomeImageBlocks(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   provider.Message
		want string
	}{
		{"loaded", provider.Message{Role: provider.RoleUser, Text: "what is this?", Images: []provider.Image{
			{Path: "a.png", MIME: "image/png", Data: []byte("\x89PNG..")},
			{Path: "b.jpg", MIME: "image/jpeg", Data: []byte{0xff, 0xd8, 0xff}},
		}}, `[{"role":"user","content":[
			{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORy4u"}},
			{"type":"image","source":{"type":"base64","media_type":"image/jpeg","data":"/9j/"}},
			{"type":"text","text":"what is this?"}]}]`},
		{"not loaded", provider.Message{Role: provider.RoleUser, Text: "and this?", Images: []provider.Image{{Path: "a.png", MIME: "image/png"}}},
			`[{"role":"user","content":[{"type":"text","text":"and this?"}]}]`},
		{"an image alone", provider.Message{Role: provider.RoleUser, Images: []provider.Image{{Path: "a.gif", MIME: "image/gif", Data: []byte("GIF89a")}}},
			`[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/gif","data":"R0lGODlh"}}]}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.Marshal(convertMessages([]provider.Message{tc.in}))
			if err != nil {
				t.Fatal(err)
			}
			assertJSON(t, got, tc.want)
			body, _ := json.Marshal(buildRequest(provider.Request{Model: "m", Messages: []provider.Message{tc.in}}, DefaultMaxTokens))
			if err := anthropictest.Validate(body); err != nil {
				t.Errorf("the API would reject it: %v", err)
			}
		})
	}
}
