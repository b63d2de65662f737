package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/heraldpush/herald"
)

// Queue is the part of River's client the store uses to insert jobs in its
// own transactions.
type Queue interface {
	InsertTx(ctx context.Context, tx *sql.Tx, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
	InsertManyTx(ctx context.Context, tx *sql.Tx, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error)
	JobCancelTx(ctx context.Context, tx *sql.Tx, jobID int64) (*rivertype.JobRow, error)
}

func (db *DB) insertJobs(ctx context.Context, tx *sql.Tx, jobs []herald.Job) error {
	if len(jobs) == 0 {
		return nil
	}
	params := make([]river.InsertManyParams, len(jobs))
	for i, j := range jobs {
		params[i] = river.InsertManyParams{Args: j}
	}
	_, err := db.Queue.InsertManyTx(ctx, tx, params)
	return err
}

func ms(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMilli()
}

func fromMS(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := time.UnixMilli(v.Int64).UTC()
	return &t
}

// AcceptPush stores a push with its recipients, charge and job at once.
func (db *DB) AcceptPush(ctx context.Context, p herald.Push, rs []herald.Recipient, idem *herald.Idempotency, job herald.Job) (string, bool, error) {
	id, replayed := p.ID, false
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		if idem != nil {
			prior, err := db.claimIdempotencyKey(ctx, tx, p, idem)
			if err != nil || prior != "" {
				id, replayed = prior, prior != ""
				return err
			}
		}
		edits, _ := json.Marshal(p.Edits)
		if _, err := tx.ExecContext(ctx, `INSERT INTO pushes (id, app_id, kind, topic, request_group_id, status, marketing, is_marketing_opt,
			title, content, link_url, image_url, badge, requested_users, server_actions_half, scheduled_at, created_at, edits)
			VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			p.ID, p.AppID, p.Kind, p.Topic, p.RequestGroupID, p.Status, p.Marketing, p.IsMarketingOpt, p.Content.Title, p.Content.Content,
			p.Content.LinkURL, p.Content.ImageURL, p.Badge, p.RequestedUsers, p.ServerActionsHalf, ms(p.ScheduledAt),
			p.CreatedAt.UnixMilli(), string(edits)); err != nil {
			return err
		}
		if err := insertRecipients(ctx, tx, p.ID, rs); err != nil {
			return err
		}
		if err := db.charge(ctx, tx, p.AppID, p.ID, p.ServerActionsHalf, p.CreatedAt); err != nil {
			return err
		}
		res, err := db.Queue.InsertTx(ctx, tx, job, nil)
		if err != nil {
			return fmt.Errorf("insert job: %w", err)
		}
		_, err = tx.ExecContext(ctx, `UPDATE pushes SET job_id = ? WHERE id = ?`, res.Job.ID, p.ID)
		return err
	})
	return id, replayed, err
}

// claimIdempotencyKey returns the push a key already stands for, or claims
// the key for p and returns "". The claim is an insert that does nothing on
// conflict, so of two requests with one key at once exactly one claims it;
// an expired key is taken over only if it is still the one that was read.
func (db *DB) claimIdempotencyKey(ctx context.Context, tx *sql.Tx, p herald.Push, idem *herald.Idempotency) (string, error) {
	// Keys live 24 hours; the app's expired ones go as new ones come.
	if _, err := tx.ExecContext(ctx, `DELETE FROM idempotency WHERE app_id = ? AND created_at <= ?`,
		p.AppID, p.CreatedAt.Add(-herald.IdempotencyWindow).UnixMilli()); err != nil {
		return "", err
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO idempotency (app_id, key, request_hash, push_id, created_at) VALUES (?,?,?,?,?)
		ON CONFLICT (app_id, key) DO NOTHING`, p.AppID, idem.Key, idem.Hash, p.ID, p.CreatedAt.UnixMilli())
	if err != nil {
		return "", err
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return "", nil
	}
	stored, err := idempotencyRecord(ctx, tx, p.AppID, idem.Key)
	if err != nil {
		return "", err
	}
	decision, err := herald.DecideIdempotency(stored, *idem, p.CreatedAt)
	if err != nil || decision == herald.IdempotencyReplay {
		return stored.PushID, err
	}
	return "", guard(tx.ExecContext(ctx, `UPDATE idempotency SET request_hash = ?, push_id = ?, created_at = ?
		WHERE app_id = ? AND key = ? AND created_at = ?`, idem.Hash, p.ID, p.CreatedAt.UnixMilli(),
		p.AppID, idem.Key, stored.CreatedAt.UnixMilli()))
}

// idempotencyRecord reads a stored key; nil when there is none.
func idempotencyRecord(ctx context.Context, q querier, appID, key string) (*herald.IdempotencyRecord, error) {
	var r herald.IdempotencyRecord
	var created int64
	err := q.QueryRowContext(ctx, `SELECT request_hash, push_id, created_at FROM idempotency WHERE app_id = ? AND key = ?`,
		appID, key).Scan(&r.Hash, &r.PushID, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	r.CreatedAt = time.UnixMilli(created)
	return &r, err
}

// IdempotentPush returns the push a recent idempotency key stands for.
func (db *DB) IdempotentPush(ctx context.Context, appID string, idem herald.Idempotency, now time.Time) (herald.Push, bool, error) {
	stored, err := idempotencyRecord(ctx, db.Reader, appID, idem.Key)
	if err != nil {
		return herald.Push{}, false, err
	}
	decision, err := herald.DecideIdempotency(stored, idem, now)
	if err != nil || decision != herald.IdempotencyReplay {
		return herald.Push{}, false, err
	}
	p, err := db.Push(ctx, stored.PushID)
	return p, err == nil, err
}

// charge records half Server Actions for a push, on the app's local day.
func (db *DB) charge(ctx context.Context, tx *sql.Tx, appID, pushID string, half int64, at time.Time) error {
	return insertUsage(ctx, tx, herald.Charge(appID, pushID, half, at, db.location(ctx, tx, appID)))
}

// insertUsage writes ledger entries.
func insertUsage(ctx context.Context, tx *sql.Tx, entries []herald.UsageEntry) error {
	for _, e := range entries {
		if _, err := tx.ExecContext(ctx, `INSERT INTO usage (app_id, push_id, day, half_units, created_at) VALUES (?,?,?,?,?)`,
			e.AppID, e.PushID, e.Day, e.Half, e.At.UnixMilli()); err != nil {
			return err
		}
	}
	return nil
}

func (db *DB) location(ctx context.Context, tx *sql.Tx, appID string) *time.Location {
	var tz string
	tx.QueryRowContext(ctx, `SELECT time_zone FROM apps WHERE id = ?`, appID).Scan(&tz)
	return herald.App{TimeZone: tz}.Location()
}

func insertRecipients(ctx context.Context, tx *sql.Tx, pushID string, rs []herald.Recipient) error {
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO push_recipients (push_id, idx, user_id, title, content, link_url, image_url) VALUES (?,?,?,?,?,?,?)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for i, r := range rs {
		var title, content, link, image any
		if c := r.Content; c != nil {
			title, content, link, image = c.Title, c.Content, c.LinkURL, c.ImageURL
		}
		if _, err := stmt.ExecContext(ctx, pushID, i, r.UserID, title, content, link, image); err != nil {
			return err
		}
	}
	return nil
}

const pushColumns = `id, app_id, kind, topic, request_group_id, status, failure_reason, marketing, is_marketing_opt, title, content,
	link_url, image_url, badge, requested_users, server_actions_half, scheduled_at, created_at, started_at, finished_at, edits`

// scanPush reads pushColumns, then any extra columns into extra.
func scanPush(row interface{ Scan(...any) error }, extra ...any) (herald.Push, error) {
	var p herald.Push
	var scheduled, started, finished sql.NullInt64
	var created int64
	var edits string
	err := row.Scan(append([]any{&p.ID, &p.AppID, &p.Kind, &p.Topic, &p.RequestGroupID, &p.Status, &p.FailureReason, &p.Marketing,
		&p.IsMarketingOpt, &p.Content.Title, &p.Content.Content, &p.Content.LinkURL, &p.Content.ImageURL, &p.Badge,
		&p.RequestedUsers, &p.ServerActionsHalf, &scheduled, &created, &started, &finished, &edits}, extra...)...)
	if err != nil {
		return p, translate(err)
	}
	p.ScheduledAt, p.StartedAt, p.FinishedAt = fromMS(scheduled), fromMS(started), fromMS(finished)
	p.CreatedAt = time.UnixMilli(created).UTC()
	p.Counts.RequestedUsers = p.RequestedUsers
	return p, json.Unmarshal([]byte(edits), &p.Edits)
}

// Push returns a push with its counts.
func (db *DB) Push(ctx context.Context, id string) (herald.Push, error) {
	p, err := db.PushRecord(ctx, id)
	if err != nil {
		return p, err
	}
	return p, db.fillCounts(ctx, &p)
}

// PushRecord returns a push without its counts.
func (db *DB) PushRecord(ctx context.Context, id string) (herald.Push, error) {
	return scanPush(db.Reader.QueryRowContext(ctx, `SELECT `+pushColumns+` FROM pushes WHERE id = ?`, id))
}

func (db *DB) fillCounts(ctx context.Context, p *herald.Push) error {
	rows, err := db.Reader.QueryContext(ctx, `SELECT state, COUNT(*), SUM(old_for_badge), SUM(old_for_image)
		FROM deliveries WHERE push_id = ? GROUP BY state`, p.ID)
	if err != nil {
		return err
	}
	defer rows.Close()
	c := &p.Counts
	for rows.Next() {
		var state herald.DeliveryState
		var n, oldBadge, oldImage int
		if err := rows.Scan(&state, &n, &oldBadge, &oldImage); err != nil {
			return err
		}
		c.CountState(state, n)
		if state == herald.DeliverySent {
			c.BadgeUnsupported, c.ImageUnsupported = oldBadge, oldImage
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return db.Reader.QueryRowContext(ctx, `SELECT COUNT(*) FROM unreachable WHERE push_id = ?`, p.ID).Scan(&c.Unreachable)
}

// PushStatus returns only a push's status.
func (db *DB) PushStatus(ctx context.Context, id string) (herald.PushStatus, error) {
	var status herald.PushStatus
	err := db.Reader.QueryRowContext(ctx, `SELECT status FROM pushes WHERE id = ?`, id).Scan(&status)
	return status, translate(err)
}

// DevicesByID returns those of the devices that still exist.
func (db *DB) DevicesByID(ctx context.Context, appID string, deviceIDs []string) (map[string]herald.Device, error) {
	out := make(map[string]herald.Device, len(deviceIDs))
	err := db.devicesWhere(ctx, `device_id`, appID, deviceIDs, func(d herald.Device) { out[d.ID] = d })
	return out, err
}

// Recipients returns a push's requested users in request order.
func (db *DB) Recipients(ctx context.Context, pushID string) ([]herald.Recipient, error) {
	rows, err := db.Reader.QueryContext(ctx, `SELECT user_id, title, content, link_url, image_url FROM push_recipients WHERE push_id = ? ORDER BY idx`, pushID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []herald.Recipient
	for rows.Next() {
		var r herald.Recipient
		var title, content, link, image sql.NullString
		if err := rows.Scan(&r.UserID, &title, &content, &link, &image); err != nil {
			return nil, err
		}
		if title.Valid {
			r.Content = &herald.Content{Title: title.String, Content: content.String, LinkURL: link.String, ImageURL: image.String}
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// DevicesOfUsers returns the devices mapped to each of the users.
func (db *DB) DevicesOfUsers(ctx context.Context, appID string, userIDs []string) (map[string][]herald.Device, error) {
	out := make(map[string][]herald.Device, len(userIDs))
	err := db.devicesWhere(ctx, `user_id`, appID, userIDs, func(d herald.Device) { out[*d.UserID] = append(out[*d.UserID], d) })
	return out, err
}

// DevicesOfTopic returns the devices subscribed to a topic.
func (db *DB) DevicesOfTopic(ctx context.Context, appID, topic string) ([]herald.Device, error) {
	return db.deviceList(ctx, `SELECT `+prefixed("d.", deviceColumns)+` FROM devices d JOIN device_topics t
		ON t.app_id = d.app_id AND t.device_id = d.device_id WHERE d.app_id = ? AND t.topic = ? ORDER BY d.created_at, d.device_id`, appID, topic)
}

// AllDevices returns every device of the app.
func (db *DB) AllDevices(ctx context.Context, appID string) ([]herald.Device, error) {
	return db.deviceList(ctx, `SELECT `+deviceColumns+` FROM devices WHERE app_id = ? ORDER BY created_at, device_id`, appID)
}

func (db *DB) deviceList(ctx context.Context, query string, args ...any) ([]herald.Device, error) {
	rows, err := db.Reader.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []herald.Device
	for rows.Next() {
		d, err := scanDevice(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// prefixed qualifies each column of a list with a table alias.
func prefixed(alias, columns string) string {
	parts := strings.Split(columns, ",")
	for i, c := range parts {
		parts[i] = alias + strings.TrimSpace(c)
	}
	return strings.Join(parts, ", ")
}

// devicesWhere calls found for each device of the app whose column holds one
// of values, in batches that keep under SQLite's variable limit.
func (db *DB) devicesWhere(ctx context.Context, column, appID string, values []string, found func(herald.Device)) error {
	const batch = 500
	for start := 0; start < len(values); start += batch {
		part := values[start:min(start+batch, len(values))]
		args := make([]any, 0, len(part)+1)
		args = append(args, appID)
		for _, v := range part {
			args = append(args, v)
		}
		rows, err := db.Reader.QueryContext(ctx, `SELECT `+deviceColumns+` FROM devices WHERE app_id = ? AND `+column+` IN (`+
			placeholders(len(part))+`) ORDER BY created_at, device_id`, args...)
		if err != nil {
			return err
		}
		for rows.Next() {
			d, err := scanDevice(rows)
			if err != nil {
				rows.Close()
				return err
			}
			found(d)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	return nil
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}
