package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/internal/provider"
)

// An attached image is read from the workspace when the request is built,
// and only if it is still the file that was attached.
func TestLoadImages(t *testing.T) {
	dir := t.TempDir()
	content := []byte("\x89PNG\r\n\x1a\nfake")
	if err := os.WriteFile(filepath.Join(dir, "a.png"), content, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(content)
	good := hex.EncodeToString(sum[:])
	msg := func(sha string) []provider.Message {
		return []provider.Message{{Role: provider.RoleUser, Text: "look", Images: []provider.Image{{Path: "a.png", MIME: "image/png", SHA256: sha}}}}
	}
	for _, tc := range []struct {
		name    string
		in      []provider.Message
		accepts bool
		loaded  bool
		note    string
	}{
		{"unchanged", msg(good), true, true, ""},
		{"changed since attached", msg(strings.Repeat("0", 64)), true, false, "changed after it was attached"},
		{"model without images", msg(good), false, false, "takes no image input"},
		{"gone", []provider.Message{{Role: provider.RoleUser, Images: []provider.Image{{Path: "b.png", MIME: "image/png"}}}}, true, false, "not_found"},
		{"outside", []provider.Message{{Role: provider.RoleUser, Images: []provider.Image{{Path: "../a.png", MIME: "image/png"}}}}, true, false, "path_outside_workspace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := loadImages(dir, tc.in, tc.accepts, "p/m")
			if tc.in[0].Images[0].Data != nil {
				t.Fatal("the caller's messages were changed")
			}
			m := out[0]
			if tc.loaded != (len(m.Images) == 1 && string(m.Images[0].Data) == string(content)) {
				t.Fatalf("images %+v", m.Images)
			}
			if tc.note == "" && m.Text != "look" || tc.note != "" && !strings.Contains(m.Text, tc.note) {
				t.Fatalf("text %q, want a note %q", m.Text, tc.note)
			}
		})
	}
}
