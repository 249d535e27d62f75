package postgres

// Outgoing webhooks and inbound triggers (issue 17, h17-hooks), as in the
// SQLite store.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlrow"
)

func (r reader) GetWebhook(ctx context.Context, id string) (store.Webhook, error) {
	w, err := sqlrow.ScanWebhook(r.q.QueryRow(ctx, `SELECT `+sqlrow.WebhookCols+` FROM webhooks WHERE id = $1`, id))
	if err != nil {
		return w, notFound(err, "webhook", id)
	}
	return w, nil
}

func (r reader) ListWebhooks(ctx context.Context) ([]store.Webhook, error) {
	rows, err := r.q.Query(ctx, `SELECT `+sqlrow.WebhookCols+` FROM webhooks ORDER BY name, id`)
	if err != nil {
		return nil, fmt.Errorf("list webhooks: %w", err)
	}
	defer rows.Close()
	var out []store.Webhook
	for rows.Next() {
		w, err := sqlrow.ScanWebhook(rows)
		if err != nil {
			return nil, fmt.Errorf("list webhooks: %w", err)
		}
		out = append(out, w)
	}
	return out, rows.Err()
}

func (r reader) ListDeliveries(ctx context.Context, webhookID string, limit int) ([]store.Delivery, error) {
	rows, err := r.q.Query(ctx, `SELECT `+sqlrow.DeliveryCols+` FROM webhook_deliveries WHERE webhook_id = $1
		ORDER BY created_at_ms DESC, id DESC LIMIT $2`, webhookID, limit)
	if err != nil {
		return nil, fmt.Errorf("list deliveries: %w", err)
	}
	defer rows.Close()
	var out []store.Delivery
	for rows.Next() {
		d, err := sqlrow.ScanDelivery(rows)
		if err != nil {
			return nil, fmt.Errorf("list deliveries: %w", err)
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

func (r reader) GetTrigger(ctx context.Context, id string) (store.Trigger, error) {
	tr, err := sqlrow.ScanTrigger(r.q.QueryRow(ctx, `SELECT `+sqlrow.TriggerCols+` FROM triggers WHERE id = $1`, id))
	if err != nil {
		return tr, notFound(err, "trigger", id)
	}
	return tr, nil
}

func (r reader) ListTriggers(ctx context.Context) ([]store.Trigger, error) {
	rows, err := r.q.Query(ctx, `SELECT `+sqlrow.TriggerCols+` FROM triggers ORDER BY name, id`)
	if err != nil {
		return nil, fmt.Errorf("list triggers: %w", err)
	}
	defer rows.Close()
	var out []store.Trigger
	for rows.Next() {
		tr, err := sqlrow.ScanTrigger(rows)
		if err != nil {
			return nil, fmt.Errorf("list triggers: %w", err)
		}
		out = append(out, tr)
	}
	return out, rows.Err()
}

func (t *txn) InsertWebhook(ctx context.Context, w store.Webhook) error {
	_, err := t.c.Exec(ctx, `INSERT INTO webhooks (`+sqlrow.WebhookCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)`,
		w.ID, w.Name, w.URL, w.Kind, w.SecretSealed, stringsJSON(w.Events), w.SessionID, w.ProfileID, w.Enabled, ms(w.CreatedAt), ms(w.UpdatedAt))
	if err != nil {
		return fmt.Errorf("insert webhook: %w", err)
	}
	return nil
}

func (t *txn) UpdateWebhook(ctx context.Context, w store.Webhook) error {
	res, err := t.c.Exec(ctx, `UPDATE webhooks SET name = $1, url = $2, kind = $3, secret_sealed = $4, events = $5,
		session_id = $6, profile_id = $7, enabled = $8, updated_at_ms = $9 WHERE id = $10`,
		w.Name, w.URL, w.Kind, w.SecretSealed, stringsJSON(w.Events), w.SessionID, w.ProfileID, w.Enabled, ms(w.UpdatedAt), w.ID)
	return affectedOne(res, err, "webhook", w.ID)
}

func (t *txn) DeleteWebhook(ctx context.Context, id string) error {
	if err := t.dropJobWebhook(ctx, id); err != nil {
		return err
	}
	if _, err := t.c.Exec(ctx, `DELETE FROM webhook_deliveries WHERE webhook_id = $1`, id); err != nil {
		return fmt.Errorf("delete webhook deliveries: %w", err)
	}
	if _, err := t.c.Exec(ctx, `DELETE FROM webhooks WHERE id = $1`, id); err != nil {
		return fmt.Errorf("delete webhook: %w", err)
	}
	return nil
}

func (t *txn) InsertDelivery(ctx context.Context, d store.Delivery) error {
	_, err := t.c.Exec(ctx, `INSERT INTO webhook_deliveries (`+sqlrow.DeliveryCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13)
		ON CONFLICT (id) DO NOTHING`,
		d.ID, d.WebhookID, d.RunID, d.URL, d.Event, d.Payload, d.Attempt, d.State, d.StatusCode, d.Error,
		d.Duration.Milliseconds(), ms(d.NextAt), ms(d.CreatedAt))
	if err != nil {
		return fmt.Errorf("insert delivery: %w", err)
	}
	return nil
}

func (t *txn) ClaimDelivery(ctx context.Context, now, until time.Time) (store.Delivery, bool, error) {
	d, err := sqlrow.ScanDelivery(t.c.QueryRow(ctx, `UPDATE webhook_deliveries SET state = 'sending', next_at_ms = $1
		WHERE id = (SELECT id FROM webhook_deliveries WHERE state IN ('pending', 'sending') AND next_at_ms <= $2
			ORDER BY next_at_ms, id LIMIT 1 FOR UPDATE SKIP LOCKED)
		RETURNING `+sqlrow.DeliveryCols, ms(until), ms(now)))
	if errors.Is(err, pgx.ErrNoRows) {
		return d, false, nil
	}
	if err != nil {
		return d, false, fmt.Errorf("claim delivery: %w", err)
	}
	return d, true, nil
}

func (t *txn) FinishDelivery(ctx context.Context, d store.Delivery) error {
	res, err := t.c.Exec(ctx, `UPDATE webhook_deliveries SET state = $1, status_code = $2, error = $3, duration_ms = $4
		WHERE id = $5`, d.State, d.StatusCode, d.Error, d.Duration.Milliseconds(), d.ID)
	return affectedOne(res, err, "delivery", d.ID)
}

func (t *txn) InsertTrigger(ctx context.Context, tr store.Trigger) error {
	_, err := t.c.Exec(ctx, `INSERT INTO triggers (`+sqlrow.TriggerCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)`,
		tr.ID, tr.Name, tr.SecretSealed, tr.Template, tr.ProfileID, tr.Workspace, tr.SessionPolicy, tr.SessionID, tr.Enabled,
		ms(tr.CreatedAt), ms(tr.UpdatedAt))
	if err != nil {
		return fmt.Errorf("insert trigger: %w", err)
	}
	return nil
}

func (t *txn) UpdateTrigger(ctx context.Context, tr store.Trigger) error {
	res, err := t.c.Exec(ctx, `UPDATE triggers SET name = $1, secret_sealed = $2, template = $3, profile_id = $4,
		workspace = $5, session_policy = $6, session_id = $7, enabled = $8, updated_at_ms = $9 WHERE id = $10`,
		tr.Name, tr.SecretSealed, tr.Template, tr.ProfileID, tr.Workspace, tr.SessionPolicy, tr.SessionID, tr.Enabled,
		ms(tr.UpdatedAt), tr.ID)
	return affectedOne(res, err, "trigger", tr.ID)
}

func (t *txn) DeleteTrigger(ctx context.Context, id string) error {
	if _, err := t.c.Exec(ctx, `DELETE FROM trigger_signatures WHERE trigger_id = $1`, id); err != nil {
		return fmt.Errorf("delete trigger signatures: %w", err)
	}
	if _, err := t.c.Exec(ctx, `DELETE FROM triggers WHERE id = $1`, id); err != nil {
		return fmt.Errorf("delete trigger: %w", err)
	}
	return nil
}

func (t *txn) SeeTriggerSignature(ctx context.Context, triggerID, signature string, at, forgetBefore time.Time) (bool, error) {
	if _, err := t.c.Exec(ctx, `DELETE FROM trigger_signatures WHERE trigger_id = $1 AND seen_at_ms < $2`,
		triggerID, ms(forgetBefore)); err != nil {
		return false, fmt.Errorf("forget trigger signatures: %w", err)
	}
	res, err := t.c.Exec(ctx, `INSERT INTO trigger_signatures (trigger_id, signature, seen_at_ms) VALUES ($1,$2,$3)
		ON CONFLICT (trigger_id, signature) DO NOTHING`, triggerID, signature, ms(at))
	if err != nil {
		return false, fmt.Errorf("see trigger signature: %w", err)
	}
	return res.RowsAffected() == 1, nil
}

// affectedOne turns an update that matched no row into ErrNotFound.
func affectedOne(tag pgconn.CommandTag, err error, what, id string) error {
	if err != nil {
		return fmt.Errorf("update %s %q: %w", what, id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%s %q: %w", what, id, store.ErrNotFound)
	}
	return nil
}

func (r reader) RunWebhook(ctx context.Context, runID string) (string, error) {
	var url string
	err := r.q.QueryRow(ctx, `SELECT url FROM run_webhooks WHERE run_id = $1`, runID).Scan(&url)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("run webhook %s: %w", runID, err)
	}
	return url, nil
}

func (t *txn) PutRunWebhook(ctx context.Context, runID, url string) error {
	if _, err := t.c.Exec(ctx, `INSERT INTO run_webhooks (run_id, url) VALUES ($1,$2)`, runID, url); err != nil {
		return fmt.Errorf("put run webhook: %w", err)
	}
	return nil
}
