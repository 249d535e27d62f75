package browser

// Webhooks and triggers (issue 17, h17-hooks): an admin adds a webhook in
// Settings, sees its secret once, tests it against a local receiver and
// reads the delivery in its log; adds a trigger and sees its secret and
// address.

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/caduceus-dev/caduceus/e2e/e2etest"
	"github.com/caduceus-dev/caduceus/internal/hook"
)

func TestUIWebhooksAndTriggers(t *testing.T) {
	t.Parallel()
	s := e2etest.StartServer(t, e2etest.Scenarios(e2etest.Scenario("", e2etest.Turn(e2etest.Text("ok")))))
	var got atomic.Int32
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(hook.HeaderSignature) != "" {
			got.Add(1)
		}
	}))
	defer recv.Close()
	b := openBrowser(t, s)
	b.navigate("/#settings/webhooks")
	b.waitVisible("[data-testid=webhooks-page]")
	b.typeInto("[data-testid=webhook-name]", "ci")
	b.typeInto("[data-testid=webhook-url]", recv.URL)
	b.click("[data-testid=webhook-add]")
	b.waitVisible("[data-testid=hook-secret]")
	if !strings.Contains(b.text("[data-testid=hook-secret]"), "whsec_") {
		t.Fatalf("secret shown: %q", b.text("[data-testid=hook-secret]"))
	}
	b.waitVisible("[data-testid=webhook-row][data-name=ci]")
	b.click("[data-testid=webhook-test]")
	b.waitVisible("[data-testid=delivery][data-state=ok]")
	if got.Load() != 1 {
		t.Fatalf("the receiver got %d signed posts, want 1", got.Load())
	}
	b.click("[data-testid=webhook-toggle]")
	b.waitJS("the webhook to show disabled", q("[data-testid=webhook-row][data-name=ci] .row-title")+".textContent.includes('(disabled)')")

	b.navigate("/#settings/triggers")
	b.waitVisible("[data-testid=triggers-page]")
	b.typeInto("[data-testid=trigger-name]", "deploys")
	b.typeInto("[data-testid=trigger-template]", "Deploy {{.ref}}")
	b.click("[data-testid=trigger-add]")
	b.waitVisible("[data-testid=hook-secret]")
	b.waitVisible("[data-testid=trigger-row][data-name=deploys]")
	if row := b.text("[data-testid=trigger-row][data-name=deploys]"); !strings.Contains(row, "/hooks/trg_") {
		t.Fatalf("trigger row = %q", row)
	}
	first := b.text("[data-testid=hook-secret]")
	b.click("[data-testid=trigger-rotate]")
	b.waitJS("a new secret to show", q("[data-testid=hook-secret]")+".textContent !== "+js(first))
}
