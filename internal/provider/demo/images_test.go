package demo

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"strconv"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/provider"
)

// The demo model answers a message with loaded images by describing them;
// an image the runner did not load, or a later turn, plays the script.
func TestDescribesImages(t *testing.T) {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewRGBA(image.Rect(0, 0, 7, 5))); err != nil {
		t.Fatal(err)
	}
	p := New(Script{Scenarios: []Scenario{{Turns: turns("scripted")}}})
	loaded := provider.Message{Role: provider.RoleUser, Text: "see", Images: []provider.Image{
		{Path: ".caduceus/uploads/a.png", MIME: "image/png", Data: b.Bytes()},
		{Path: "b.webp", MIME: "image/webp", Data: []byte("RIFF....WEBP")},
	}}
	for _, tc := range []struct {
		name string
		msgs []provider.Message
		want []string
	}{
		{"loaded", []provider.Message{loaded}, []string{"received 2 as image input", "a.png (image/png, " + strconv.Itoa(b.Len()) + " bytes, 7×5 pixels)", "b.webp (image/webp, 12 bytes)"}},
		{"not loaded", []provider.Message{{Role: provider.RoleUser, Text: "see", Images: []provider.Image{{Path: "a.png", MIME: "image/png"}}}}, []string{"scripted"}},
		{"a later turn", []provider.Message{loaded, assistant("x")}, []string{EndOfScript}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := collect(t, context.Background(), p, req(tc.msgs...))
			for _, w := range tc.want {
				if !strings.Contains(r.Text, w) {
					t.Errorf("text %q lacks %q", r.Text, w)
				}
			}
		})
	}
}
