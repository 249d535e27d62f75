package hook

// The deliverer: sends queued delivery attempts and schedules retries.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	neturl "net/url"
	"time"

	"github.com/caduceus-dev/caduceus/internal/store"
)

// Attempts is how many times a delivery is tried before it fails for good.
const Attempts = 5

// Opener opens a sealed secret (a *secretbox.Box).
type Opener interface {
	Open(sealed, context string) (string, error)
}

// Config is what a Deliverer needs.
type Config struct {
	Store store.Store
	// Secrets gives the key webhook secrets are sealed with; it is asked
	// per attempt, so a server that has no key yet still sends Slack
	// posts.
	Secrets func() (Opener, error)
	// RunSecret is the key that signs the deliveries to a run's own
	// webhook_url (RunKey of the server's secretbox key); nil or an error
	// sends them unsigned.
	RunSecret func() (string, error)
	// Client posts; its Timeout bounds an attempt (default 10 s). It
	// should not follow redirects: a 3xx is reported as it is.
	Client *http.Client
	Log    *slog.Logger
	Now    func() time.Time
	// Backoff is the wait after the first failed attempt, doubled after
	// each later one (default 2 s: 2, 4, 8, 16 s).
	Backoff time.Duration
	// Poll is how often due attempts are looked for when nothing woke
	// the deliverer (default 1 s).
	Poll time.Duration
	// Link is the address of a run for people (the UI), "" for none.
	Link func(sessionID, runID string) string
}

// Deliverer sends the attempts in the store. Several processes may run
// one each on the same store: an attempt is claimed before it is sent.
type Deliverer struct {
	cfg  Config
	wake chan struct{}
}

// NewDeliverer fills cfg's defaults.
func NewDeliverer(cfg Config) *Deliverer {
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		}}
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = 2 * time.Second
	}
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	return &Deliverer{cfg: cfg, wake: make(chan struct{}, 1)}
}

// Poke makes the send loop look for due attempts now.
func (d *Deliverer) Poke() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Send sends attempts until ctx ends.
func (d *Deliverer) Send(ctx context.Context) {
	tick := time.NewTicker(d.cfg.Poll)
	defer tick.Stop()
	for {
		for ctx.Err() == nil {
			sent, err := d.SendOne(ctx)
			if err != nil {
				d.cfg.Log.Warn("webhook delivery", "err", err)
				break
			}
			if !sent {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-d.wake:
		case <-tick.C:
		}
	}
}

// errFinal marks a failure no retry can mend.
var errFinal = errors.New("not retried")

// claimFor is how long a claimed attempt stays its sender's: past it,
// another process takes the attempt again (its sender died).
const claimFor = time.Minute

// SendOne claims one due attempt and sends it; sent is false when none
// was due.
func (d *Deliverer) SendOne(ctx context.Context) (sent bool, err error) {
	now := d.cfg.Now()
	// Every process sends (h17-deliver): a read first keeps the look
	// each second from taking the store's write lock when nothing is due.
	if due, err := d.cfg.Store.DeliveryDue(ctx, now); err != nil || !due {
		return false, err
	}
	var a store.Delivery
	var ok bool
	err = d.cfg.Store.Write(ctx, func(tx store.Tx) error {
		var err error
		a, ok, err = tx.ClaimDelivery(ctx, now, now.Add(claimFor))
		return err
	})
	if err != nil || !ok {
		return false, err
	}
	code, sendErr, took := d.post(ctx, a)
	a.StatusCode, a.Duration = code, took
	a.Error = ""
	if sendErr != nil {
		a.Error = sendErr.Error()
	}
	// A network error or the receiver's fault may pass; a 4xx, or a webhook
	// deleted or disabled since, will not change.
	retry := (code == 0 || code >= 500) && !errors.Is(sendErr, errFinal)
	switch {
	case sendErr == nil && code >= 200 && code < 300:
		a.State = store.DeliveryOK
	case retry && a.Attempt < Attempts:
		a.State = store.DeliveryRetried
	default:
		a.State = store.DeliveryFailed
	}
	err = d.cfg.Store.Write(ctx, func(tx store.Tx) error {
		if err := tx.FinishDelivery(ctx, a); err != nil {
			return err
		}
		if a.State != store.DeliveryRetried {
			return nil
		}
		next := a
		next.ID = attemptID(baseID(a.ID), a.Attempt+1)
		next.Attempt++
		next.State, next.StatusCode, next.Error, next.Duration = store.DeliveryPending, 0, "", 0
		end := d.cfg.Now()
		next.CreatedAt, next.NextAt = end, end.Add(d.cfg.Backoff<<(a.Attempt-1))
		return tx.InsertDelivery(ctx, next)
	})
	if err != nil {
		return true, fmt.Errorf("record delivery %s: %w", a.ID, err)
	}
	d.cfg.Log.Info("webhook delivery", "delivery", a.ID, "webhook", a.WebhookID, "run", a.RunID,
		"attempt", a.Attempt, "state", a.State, "status", a.StatusCode, "err", a.Error)
	return true, nil
}

// post sends one attempt. A configured webhook is read again so a changed
// URL or secret, or one disabled since, counts.
func (d *Deliverer) post(ctx context.Context, a store.Delivery) (code int, err error, took time.Duration) {
	url, kind, secret := a.URL, store.WebhookJSON, ""
	if a.WebhookID == "" && d.cfg.RunSecret != nil {
		s, err := d.cfg.RunSecret()
		if err != nil {
			return 0, fmt.Errorf("run webhook key: %w", err), 0
		}
		secret = s
	}
	if a.WebhookID != "" {
		w, err := d.cfg.Store.GetWebhook(ctx, a.WebhookID)
		if errors.Is(err, store.ErrNotFound) {
			return 0, fmt.Errorf("the webhook was deleted: %w", errFinal), 0
		}
		if err != nil {
			return 0, err, 0
		}
		if !w.Enabled && a.Event != EventTest {
			return 0, fmt.Errorf("the webhook is disabled: %w", errFinal), 0
		}
		url, kind, secret = w.URL, w.Kind, ""
		if kind == store.WebhookJSON && w.SecretSealed != "" {
			box, err := d.cfg.Secrets()
			if err != nil {
				return 0, fmt.Errorf("webhook secret: %w", err), 0
			}
			if secret, err = box.Open(w.SecretSealed, SecretContext("webhook", w.ID)); err != nil {
				return 0, fmt.Errorf("webhook secret: %w", err), 0
			}
		}
	}
	body := []byte(a.Payload)
	if kind == store.WebhookSlack {
		body = slackBody(a.Payload)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("the webhook URL is not valid: %w", errFinal), 0 // the error would quote it
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Caduceus-Webhook/1")
	if kind == store.WebhookJSON && secret != "" {
		now := d.cfg.Now()
		req.Header.Set(HeaderTimestamp, fmt.Sprint(now.Unix()))
		req.Header.Set(HeaderSignature, Sign(secret, now, body))
	}
	start := time.Now()
	resp, err := d.cfg.Client.Do(req)
	took = time.Since(start)
	if err != nil {
		// Not the *url.Error itself: it quotes the URL, which can hold a
		// token (Slack's do), and the error is logged and shown to readers.
		var ue *neturl.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, fmt.Errorf("post: %w", err), took
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
	if resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return resp.StatusCode, fmt.Errorf("HTTP %d", resp.StatusCode), took
	}
	return resp.StatusCode, nil, took
}

// RunKeyLabel names the run key among the secrets derived from the
// server's secretbox key (secretbox.Box.Derive).
const RunKeyLabel = "caduceus run webhook signing key v1"

// SecretContext is the secretbox context a webhook's or trigger's secret
// is sealed under: a sealed value moved to another row does not open.
func SecretContext(kind, id string) string { return kind + ":" + id }
