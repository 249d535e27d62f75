package sqlrow

// Outgoing webhooks, their deliveries and inbound triggers (issue 17).

import (
	"fmt"
	"time"

	"github.com/caduceus-dev/caduceus/internal/store"
)

// WebhookCols are the columns ScanWebhook reads, in its order.
const WebhookCols = `id, name, url, kind, secret_sealed, events, session_id, profile_id, enabled, created_at_ms, updated_at_ms`

// ScanWebhook reads one row of WebhookCols.
func ScanWebhook(s Scanner) (store.Webhook, error) {
	var w store.Webhook
	var events string
	var c, u int64
	if err := s.Scan(&w.ID, &w.Name, &w.URL, &w.Kind, &w.SecretSealed, &events, &w.SessionID, &w.ProfileID, &w.Enabled, &c, &u); err != nil {
		return w, err
	}
	var err error
	if w.Events, err = StringList(events); err != nil {
		return w, fmt.Errorf("webhook %q events: %w", w.ID, err)
	}
	w.CreatedAt, w.UpdatedAt = fromMS(c), fromMS(u)
	return w, nil
}

// DeliveryCols are the columns ScanDelivery reads, in its order.
const DeliveryCols = `id, webhook_id, run_id, url, event, payload, attempt, state, status_code, error, duration_ms, next_at_ms, created_at_ms`

// ScanDelivery reads one row of DeliveryCols.
func ScanDelivery(s Scanner) (store.Delivery, error) {
	var d store.Delivery
	var dur, next, c int64
	if err := s.Scan(&d.ID, &d.WebhookID, &d.RunID, &d.URL, &d.Event, &d.Payload, &d.Attempt, &d.State, &d.StatusCode, &d.Error, &dur, &next, &c); err != nil {
		return d, err
	}
	d.Duration = time.Duration(dur) * time.Millisecond
	d.NextAt, d.CreatedAt = fromMS(next), fromMS(c)
	return d, nil
}

// TriggerCols are the columns ScanTrigger reads, in its order.
const TriggerCols = `id, name, secret_sealed, template, profile_id, workspace, session_policy, session_id, enabled, created_at_ms, updated_at_ms`

// ScanTrigger reads one row of TriggerCols.
func ScanTrigger(s Scanner) (store.Trigger, error) {
	var tr store.Trigger
	var c, u int64
	if err := s.Scan(&tr.ID, &tr.Name, &tr.SecretSealed, &tr.Template, &tr.ProfileID, &tr.Workspace, &tr.SessionPolicy, &tr.SessionID, &tr.Enabled, &c, &u); err != nil {
		return tr, err
	}
	tr.CreatedAt, tr.UpdatedAt = fromMS(c), fromMS(u)
	return tr, nil
}
