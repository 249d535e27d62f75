package sqlite

// Outgoing webhooks and inbound triggers (issue 17, h17-hooks).

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/caduceus-dev/caduceus/internal/store"
	"github.com/caduceus-dev/caduceus/internal/store/sqlrow"
)

func (r reader) GetWebhook(ctx context.Context, id string) (store.Webhook, error) {
	w, err := sqlrow.ScanWebhook(r.queryRow(ctx, `SELECT `+sqlrow.WebhookCols+` FROM webhooks WHERE id = ?`, id))
	if err != nil {
		return w, notFound(err, "webhook", id)
	}
	return w, nil
}

func (r reader) ListWebhooks(ctx context.Context) ([]store.Webhook, error) {
	rows, err := r.query(ctx, `SELECT `+sqlrow.WebhookCols+` FROM webhooks ORDER BY name, id`)
	if err != nil {
		return nil, fmt.Errorf("list webhooks: %w", err)
	}
	defer rows.Close()
	out, err := sqlrow.Collect(rows, sqlrow.ScanWebhook)
	if err != nil {
		return nil, fmt.Errorf("list webhooks: %w", err)
	}
	return out, nil
}

func (r reader) ListDeliveries(ctx context.Context, webhookID string, limit int) ([]store.Delivery, error) {
	rows, err := r.query(ctx, `SELECT `+sqlrow.DeliveryCols+` FROM webhook_deliveries WHERE webhook_id = ?
		ORDER BY created_at_ms DESC, id DESC LIMIT ?`, webhookID, limit)
	if err != nil {
		return nil, fmt.Errorf("list deliveries: %w", err)
	}
	defer rows.Close()
	out, err := sqlrow.Collect(rows, sqlrow.ScanDelivery)
	if err != nil {
		return nil, fmt.Errorf("list deliveries: %w", err)
	}
	return out, nil
}

func (r reader) GetTrigger(ctx context.Context, id string) (store.Trigger, error) {
	tr, err := sqlrow.ScanTrigger(r.queryRow(ctx, `SELECT `+sqlrow.TriggerCols+` FROM triggers WHERE id = ?`, id))
	if err != nil {
		return tr, notFound(err, "trigger", id)
	}
	return tr, nil
}

func (r reader) ListTriggers(ctx context.Context) ([]store.Trigger, error) {
	rows, err := r.query(ctx, `SELECT `+sqlrow.TriggerCols+` FROM triggers ORDER BY name, id`)
	if err != nil {
		return nil, fmt.Errorf("list triggers: %w", err)
	}
	defer rows.Close()
	out, err := sqlrow.Collect(rows, sqlrow.ScanTrigger)
	if err != nil {
		return nil, fmt.Errorf("list triggers: %w", err)
	}
	return out, nil
}

func (t *txn) InsertWebhook(ctx context.Context, w store.Webhook) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO webhooks (`+sqlrow.WebhookCols+`) VALUES (?,?,?,?,?,?,?,?,?,?,?)`,
		w.ID, w.Name, w.URL, w.Kind, w.SecretSealed, stringsJSON(w.Events), w.SessionID, w.ProfileID, w.Enabled, ms(w.CreatedAt), ms(w.UpdatedAt))
	if err != nil {
		return fmt.Errorf("insert webhook: %w", err)
	}
	return nil
}

func (t *txn) UpdateWebhook(ctx context.Context, w store.Webhook) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE webhooks SET name = ?, url = ?, kind = ?, secret_sealed = ?, events = ?,
		session_id = ?, profile_id = ?, enabled = ?, updated_at_ms = ? WHERE id = ?`,
		w.Name, w.URL, w.Kind, w.SecretSealed, stringsJSON(w.Events), w.SessionID, w.ProfileID, w.Enabled, ms(w.UpdatedAt), w.ID)
	return affectedOne(res, err, "webhook", w.ID)
}

func (t *txn) DeleteWebhook(ctx context.Context, id string) error {
	if err := t.dropJobWebhook(ctx, id); err != nil {
		return err
	}
	if _, err := t.tx.ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE webhook_id = ?`, id); err != nil {
		return fmt.Errorf("delete webhook deliveries: %w", err)
	}
	if _, err := t.tx.ExecContext(ctx, `DELETE FROM webhooks WHERE id = ?`, id); err != nil {
		return fmt.Errorf("delete webhook: %w", err)
	}
	return nil
}

func (t *txn) InsertDelivery(ctx context.Context, d store.Delivery) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO webhook_deliveries (`+sqlrow.DeliveryCols+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)
		ON CONFLICT (id) DO NOTHING`,
		d.ID, d.WebhookID, d.RunID, d.URL, d.Event, d.Payload, d.Attempt, d.State, d.StatusCode, d.Error,
		d.Duration.Milliseconds(), ms(d.NextAt), ms(d.CreatedAt))
	if err != nil {
		return fmt.Errorf("insert delivery: %w", err)
	}
	return nil
}

func (t *txn) ClaimDelivery(ctx context.Context, now, until time.Time) (store.Delivery, bool, error) {
	d, err := sqlrow.ScanDelivery(t.tx.QueryRowContext(ctx, `UPDATE webhook_deliveries SET state = 'sending', next_at_ms = ?
		WHERE id = (SELECT id FROM webhook_deliveries WHERE state IN ('pending', 'sending') AND next_at_ms <= ?
			ORDER BY next_at_ms, id LIMIT 1)
		RETURNING `+sqlrow.DeliveryCols, ms(until), ms(now)))
	if errors.Is(err, sql.ErrNoRows) {
		return d, false, nil
	}
	if err != nil {
		return d, false, fmt.Errorf("claim delivery: %w", err)
	}
	return d, true, nil
}

func (t *txn) FinishDelivery(ctx context.Context, d store.Delivery) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE webhook_deliveries SET state = ?, status_code = ?, error = ?, duration_ms = ?
		WHERE id = ?`, d.State, d.StatusCode, d.Error, d.Duration.Milliseconds(), d.ID)
	return affectedOne(res, err, "delivery", d.ID)
}

func (t *txn) InsertTrigger(ctx context.Context, tr store.Trigger) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO triggers (`+sqlrow.TriggerCols+`) VALUES (?,?,?,?,?,?,?,?,?,?,?)`,
		tr.ID, tr.Name, tr.SecretSealed, tr.Template, tr.ProfileID, tr.Workspace, tr.SessionPolicy, tr.SessionID, tr.Enabled,
		ms(tr.CreatedAt), ms(tr.UpdatedAt))
	if err != nil {
		return fmt.Errorf("insert trigger: %w", err)
	}
	return nil
}

func (t *txn) UpdateTrigger(ctx context.Context, tr store.Trigger) error {
	res, err := t.tx.ExecContext(ctx, `UPDATE triggers SET name = ?, secret_sealed = ?, template = ?, profile_id = ?,
		workspace = ?, session_policy = ?, session_id = ?, enabled = ?, updated_at_ms = ? WHERE id = ?`,
		tr.Name, tr.SecretSealed, tr.Template, tr.ProfileID, tr.Workspace, tr.SessionPolicy, tr.SessionID, tr.Enabled,
		ms(tr.UpdatedAt), tr.ID)
	return affectedOne(res, err, "trigger", tr.ID)
}

func (t *txn) DeleteTrigger(ctx context.Context, id string) error {
	if _, err := t.tx.ExecContext(ctx, `DELETE FROM trigger_signatures WHERE trigger_id = ?`, id); err != nil {
		return fmt.Errorf("delete trigger signatures: %w", err)
	}
	if _, err := t.tx.ExecContext(ctx, `DELETE FROM triggers WHERE id = ?`, id); err != nil {
		return fmt.Errorf("delete trigger: %w", err)
	}
	return nil
}

func (t *txn) SeeTriggerSignature(ctx context.Context, triggerID, signature string, at, forgetBefore time.Time) (bool, error) {
	if _, err := t.tx.ExecContext(ctx, `DELETE FROM trigger_signatures WHERE trigger_id = ? AND seen_at_ms < ?`,
		triggerID, ms(forgetBefore)); err != nil {
		return false, fmt.Errorf("forget trigger signatures: %w", err)
	}
	res, err := t.tx.ExecContext(ctx, `INSERT INTO trigger_signatures (trigger_id, signature, seen_at_ms) VALUES (?,?,?)
		ON CONFLICT (trigger_id, signature) DO NOTHING`, triggerID, signature, ms(at))
	if err != nil {
		return false, fmt.Errorf("see trigger signature: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("see trigger signature: %w", err)
	}
	return n == 1, nil
}

// affectedOne turns an update that matched no row into ErrNotFound.
func affectedOne(res sql.Result, err error, what, id string) error {
	if err != nil {
		return fmt.Errorf("update %s %q: %w", what, id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("update %s %q: %w", what, id, err)
	}
	if n == 0 {
		return fmt.Errorf("%s %q: %w", what, id, store.ErrNotFound)
	}
	return nil
}

func (r reader) RunWebhook(ctx context.Context, runID string) (string, error) {
	var url string
	err := r.queryRow(ctx, `SELECT url FROM run_webhooks WHERE run_id = ?`, runID).Scan(&url)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("run webhook %s: %w", runID, err)
	}
	return url, nil
}

func (t *txn) PutRunWebhook(ctx context.Context, runID, url string) error {
	if _, err := t.tx.ExecContext(ctx, `INSERT INTO run_webhooks (run_id, url) VALUES (?,?)`, runID, url); err != nil {
		return fmt.Errorf("put run webhook: %w", err)
	}
	return nil
}
