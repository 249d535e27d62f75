package browser

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
)

// The disk fills under the server (a small tmpfs data dir): the banner says
// the server cannot save and why; a send shows the plain storage_full
// message once; when space returns the banner goes and a send runs.
func TestUIStorageFull(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	s := e2etest.StartServer(t, e2etest.Script(e2etest.Turn(e2etest.Text("Saved."))), e2etest.WithDataDir(dir))
	b := openBrowser(t, s)
	b.navigate("/")
	b.newSessionUI()
	b.waitJS("connection live", q("[data-testid=connection][data-state=live]"))

	filler := filepath.Join(dir, "filler")
	_ = exec.Command("dd", "if=/dev/zero", "of="+filler, "bs=64k").Run() // stops when the disk is full
	b.typeInto(composerSel, "keep this")
	b.press("Enter")
	b.waitJS("the storage error under the composer", q("[data-testid=composer-error]")+`?.textContent.includes("disk is full")`)
	b.waitFreshHealth()
	b.waitJS("the banner", q(bannerSel+"[data-kind=store_write]"))
	if txt := b.text(bannerSel); !strings.Contains(txt, "Saving is not possible") || !strings.Contains(txt, "disk is full") {
		t.Fatalf("banner = %q", txt)
	}
	t.Logf("screenshot: %s", b.screenshot(screenshotDir(t), "storage-full"))

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	b.clearInput(composerSel)
	b.sendMessage("now there is room")
	b.waitJS("the answer", qa(itemSel("assistant"))+`.some(e => e.textContent.includes("Saved."))`)
	b.waitFreshHealth()
	b.waitGone(bannerSel)
}
