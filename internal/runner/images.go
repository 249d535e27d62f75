package runner

import (
	"fmt"
	"strings"

	"github.com/caduceus-dev/caduceus/internal/provider"
	"github.com/caduceus-dev/caduceus/internal/workspace"
)

// MaxImageBytes bounds one image read into a model request. The journal
// holds only an attached image's path, type and digest; its bytes are read
// from the workspace each time a request is built.
const MaxImageBytes = 20 << 20

// loadImages fills in the bytes of the images msgs name, read from the
// session's workspace. An image that cannot be sent as attached — the
// model takes no image input, the file is gone, or its content is no
// longer the one attached (its SHA-256 differs) — is dropped and a line
// in the message says why, so the model never mistakes another picture
// for the one the person meant and knows one is missing.
func loadImages(dir string, msgs []provider.Message, accepts bool, model string) []provider.Message {
	var ws *workspace.Workspace
	var openErr error
	defer func() {
		if ws != nil {
			ws.Close()
		}
	}()
	out := msgs
	copied := false
	for i, m := range msgs {
		if len(m.Images) == 0 {
			continue
		}
		if !copied {
			out, copied = append([]provider.Message(nil), msgs...), true
		}
		var keep []provider.Image
		var notes []string
		for _, im := range m.Images {
			if !accepts {
				notes = append(notes, fmt.Sprintf("[image %s not sent: the model %s takes no image input]", im.Path, model))
				continue
			}
			if ws == nil && openErr == nil {
				ws, openErr = workspace.Open(dir)
			}
			if openErr != nil {
				notes = append(notes, fmt.Sprintf("[image %s not sent: the workspace cannot be opened]", im.Path))
				continue
			}
			f, err := ws.Read(im.Path, MaxImageBytes)
			switch {
			case err != nil:
				reason := workspace.Code(err)
				if reason == "" {
					reason = "unreadable"
				}
				notes = append(notes, fmt.Sprintf("[image %s not sent: %s]", im.Path, reason))
			case im.SHA256 != "" && f.ETag != `"`+im.SHA256+`"`:
				notes = append(notes, fmt.Sprintf("[image %s not sent: the file changed after it was attached]", im.Path))
			default:
				im.Data = f.Content
				keep = append(keep, im)
			}
		}
		m.Images = keep
		if len(notes) > 0 {
			m.Text = strings.TrimLeft(m.Text+"\n"+strings.Join(notes, "\n"), "\n")
		}
		out[i] = m
	}
	return out
}
