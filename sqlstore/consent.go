package sqlstore

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/heraldpush/herald"
)

// consentLog collects the consent records of one operation, to be written
// by flush at the end of its transaction, after the device and user rows
// they are about.
type consentLog struct {
	appID string
	recs  []herald.ConsentRecord
	// brought is a device newly mapped to a user that keeps its own
	// marketing consent: the user's clock takes the device's.
	brought *broughtClock
}

type broughtClock struct{ deviceID, userID string }

// add appends a record about the device (deviceID "" for the user's own
// pair) of the user (nil for none).
func (l *consentLog) add(rec herald.ConsentRecord, userID *string, deviceID string) {
	rec.AppID = l.appID
	if userID != nil {
		id := *userID
		rec.UserID = &id
	}
	if deviceID != "" {
		rec.DeviceID = &deviceID
	}
	l.recs = append(l.recs, rec)
}

// consentApp is what writing records needs of the app.
type consentApp struct {
	webhook bool
	loc     *time.Location
	// notice: decisions are told to the user by a result notice.
	notice bool
}

func consentAppOf(ctx context.Context, c conn, appID string) (consentApp, error) {
	var tz, notice string
	var events sql.NullString
	a := herald.App{ID: appID}
	if err := c.queryRow(ctx, `SELECT webhook_url, webhook_events, time_zone, consent_notice FROM apps WHERE id = ?`, appID).
		Scan(&a.WebhookURL, &events, &tz, &notice); err != nil {
		return consentApp{}, err
	}
	a.TimeZone = tz
	if err := readNotices(&a, notice, ""); err != nil {
		return consentApp{}, err
	}
	if events.Valid {
		if err := json.Unmarshal([]byte(events.String), &a.WebhookEvents); err != nil {
			return consentApp{}, err
		}
	}
	return consentApp{webhook: a.Takes(herald.WebhookConsent), loc: a.Location(), notice: a.ConsentNotice.Enabled}, nil
}

// flush writes the records: each user's get the next numbers of the user's
// sequence (the increment also locks the user's row, which orders these
// writes against EndConsentEvent), the clocks move, and each user whose
// first pending event this is gets the job that sends it.
func (l *consentLog) flush(ctx context.Context, c conn, now time.Time) error {
	if len(l.recs) == 0 && l.brought == nil {
		return nil
	}
	app, err := consentAppOf(ctx, c, l.appID)
	if err != nil {
		return err
	}
	firstPending := map[string]int64{}
	var users []string
	var jobs []herald.Job
	for _, rec := range l.recs {
		event, id, err := writeRecord(ctx, c, app, rec)
		if err != nil {
			return err
		}
		if app.notice && rec.Notify && herald.NoticeSource(rec.Source) {
			jobs = append(jobs, herald.ConsentNoticeJob{AppID: l.appID, RecordID: id})
		}
		if event.Seq > 0 && firstPending[*rec.UserID] == 0 {
			firstPending[*rec.UserID] = event.Seq
			users = append(users, *rec.UserID)
		}
	}
	if b := l.brought; b != nil {
		if err := bringClock(ctx, c, app, l.appID, b.deviceID, b.userID, now); err != nil {
			return err
		}
	}
	for _, u := range users {
		var earlier int
		if err := c.queryRow(ctx, `SELECT COUNT(*) FROM consent_changes WHERE app_id = ? AND user_id = ? AND event = 'pending' AND seq < ?`,
			l.appID, u, firstPending[u]).Scan(&earlier); err != nil {
			return err
		}
		if earlier == 0 {
			jobs = append(jobs, herald.ConsentEventJob{AppID: l.appID, UserID: u, Seq: firstPending[u]})
		}
	}
	_, err = c.insertJobs(ctx, jobs)
	return err
}

// writeRecord inserts one record and moves the clocks it moves; it returns
// the job of its event when it has a pending one (Seq 0 otherwise).
func writeRecord(ctx context.Context, c conn, app consentApp, rec herald.ConsentRecord) (herald.ConsentEventJob, int64, error) {
	var job herald.ConsentEventJob
	var id int64
	event := herald.EventNone
	if rec.UserID != nil {
		at := rec.At.UnixMilli()
		if err := c.queryRow(ctx, `UPDATE users SET consent_seq = consent_seq + 1,
			updated_at = CASE WHEN updated_at < CAST(? AS BIGINT) THEN CAST(? AS BIGINT) ELSE updated_at END
			WHERE app_id = ? AND user_id = ? RETURNING consent_seq`,
			at, at, rec.AppID, *rec.UserID).Scan(&rec.Seq); err != nil {
			return job, id, err
		}
		if rec.Notify && app.webhook {
			event, job = herald.EventPending, herald.ConsentEventJob{AppID: rec.AppID, UserID: *rec.UserID, Seq: rec.Seq}
		}
	}
	if err := c.queryRow(ctx, `INSERT INTO consent_changes (app_id, user_id, seq, device_id, at, source, marketing_from, marketing_to,
		night_from, night_to, event) VALUES (?,?,?,?,?,?,?,?,?,?,?) RETURNING id`,
		rec.AppID, rec.UserID, rec.Seq, rec.DeviceID, rec.At.UnixMilli(), rec.Source, rec.From.Marketing, rec.To.Marketing,
		rec.From.MarketingNight, rec.To.MarketingNight, event).Scan(&id); err != nil {
		return job, id, err
	}
	return job, id, moveClocks(ctx, c, app, rec)
}

// moveClocks restarts the device's and the user's clock on a record that
// confirms marketing consent, stops the user's on a withdrawal, and sets a
// device taking its user's pair to the user's clock.
func moveClocks(ctx context.Context, c conn, app consentApp, rec herald.ConsentRecord) error {
	at := rec.At.UnixMilli()
	switch {
	case rec.Source == herald.SourceWithdrawal:
		_, err := c.exec(ctx, `UPDATE users SET consent_confirmed_at = NULL, consent_due_at = NULL WHERE app_id = ? AND user_id = ?`,
			rec.AppID, *rec.UserID)
		return err
	case rec.Confirms:
		if rec.DeviceID != nil {
			if _, err := c.exec(ctx, `UPDATE devices SET consent_confirmed_at = ? WHERE app_id = ? AND device_id = ?`,
				at, rec.AppID, *rec.DeviceID); err != nil {
				return err
			}
		}
		if rec.UserID != nil {
			return setUserClock(ctx, c, app, rec.AppID, *rec.UserID, rec.At)
		}
	case rec.DeviceID != nil && rec.UserID != nil && rec.To.Marketing:
		_, err := c.exec(ctx, `UPDATE devices SET consent_confirmed_at = (SELECT consent_confirmed_at FROM users WHERE app_id = ? AND user_id = ?)
			WHERE app_id = ? AND device_id = ?`, rec.AppID, *rec.UserID, rec.AppID, *rec.DeviceID)
		return err
	}
	return nil
}

// setUserClock moves the user's clock to at, unless it already shows a
// later confirmation.
func setUserClock(ctx context.Context, c conn, app consentApp, appID, userID string, at time.Time) error {
	_, err := c.exec(ctx, `UPDATE users SET consent_confirmed_at = ?, consent_due_at = ?
		WHERE app_id = ? AND user_id = ? AND (consent_confirmed_at IS NULL OR consent_confirmed_at <= ?)`,
		at.UnixMilli(), herald.ConsentDueAt(at, app.loc).UnixMilli(), appID, userID, at.UnixMilli())
	return err
}

// bringClock gives the user the clock of a device newly mapped to it with
// its own marketing consent: the device's, or now when the device has none
// (its consent predates the clock).
func bringClock(ctx context.Context, c conn, app consentApp, appID, deviceID, userID string, now time.Time) error {
	var at sql.NullInt64
	if err := c.queryRow(ctx, `SELECT consent_confirmed_at FROM devices WHERE app_id = ? AND device_id = ?`, appID, deviceID).Scan(&at); err != nil {
		return err
	}
	t := now
	if at.Valid {
		t = time.UnixMilli(at.Int64).UTC()
	}
	return setUserClock(ctx, c, app, appID, userID, t)
}

const consentRecordColumns = `id, app_id, user_id, seq, device_id, at, source, marketing_from, marketing_to, night_from, night_to, event`

func scanConsentRecord(row scanner) (herald.ConsentRecord, herald.ConsentEventState, error) {
	var r herald.ConsentRecord
	var at int64
	var event herald.ConsentEventState
	err := row.Scan(&r.ID, &r.AppID, &r.UserID, &r.Seq, &r.DeviceID, &at, &r.Source, &r.From.Marketing, &r.To.Marketing,
		&r.From.MarketingNight, &r.To.MarketingNight, &event)
	r.At = time.UnixMilli(at).UTC()
	return r, event, err
}

// ConsentHistory returns a user's consent records, oldest first.
func (s *ConsentStore) ConsentHistory(ctx context.Context, appID, userID string) ([]herald.ConsentRecord, error) {
	r := s.reader()
	if _, err := userByID(ctx, r, appID, userID); err != nil {
		return nil, err
	}
	recs := []herald.ConsentRecord{}
	err := r.each(ctx, func(row scanner) error {
		rec, _, err := scanConsentRecord(row)
		recs = append(recs, rec)
		return err
	}, `SELECT `+consentRecordColumns+` FROM consent_changes WHERE app_id = ? AND user_id = ? ORDER BY seq`, appID, userID)
	return recs, err
}

// ConsentEvent returns the user's record seq and the state of its event.
func (s *ConsentStore) ConsentEvent(ctx context.Context, appID, userID string, seq int64) (herald.ConsentRecord, herald.ConsentEventState, error) {
	return scanConsentRecord(s.reader().queryRow(ctx, `SELECT `+consentRecordColumns+` FROM consent_changes
		WHERE app_id = ? AND user_id = ? AND seq = ?`, appID, userID, seq))
}

// ConsentRecord returns the app's trail record id.
func (s *ConsentStore) ConsentRecord(ctx context.Context, appID string, id int64) (herald.ConsentRecord, error) {
	rec, _, err := scanConsentRecord(s.reader().queryRow(ctx, `SELECT `+consentRecordColumns+` FROM consent_changes
		WHERE app_id = ? AND id = ?`, appID, id))
	return rec, err
}

// EndConsentEvent ends the user's pending event seq and queues the next.
// It locks the user's row first, as flush does, so a record made at the
// same time either is seen here as pending (and queued here) or sees this
// event ended (and queues its own job).
func (s *ConsentStore) EndConsentEvent(ctx context.Context, appID, userID string, seq int64, end herald.ConsentEventState) (bool, error) {
	ended := false
	err := s.inTx(ctx, func(c conn) error {
		if err := c.lockRow(ctx, `users`, `app_id = ? AND user_id = ?`, appID, userID); err != nil && !errors.Is(err, herald.ErrNotFound) {
			return err
		}
		n, err := c.exec(ctx, `UPDATE consent_changes SET event = ? WHERE app_id = ? AND user_id = ? AND seq = ? AND event = 'pending'`,
			end, appID, userID, seq)
		if err != nil || n == 0 {
			return err
		}
		ended = true
		var next sql.NullInt64
		if err := c.queryRow(ctx, `SELECT MIN(seq) FROM consent_changes WHERE app_id = ? AND user_id = ? AND event = 'pending'`,
			appID, userID).Scan(&next); err != nil || !next.Valid {
			return err
		}
		_, err = c.insertJobs(ctx, []herald.Job{herald.ConsentEventJob{AppID: appID, UserID: userID, Seq: next.Int64}})
		return err
	})
	return ended, err
}

// dueWhere selects the registered users of an app whose marketing consent
// (their own, or any of their devices') is due at or before a time.
const dueWhere = ` FROM users u WHERE u.app_id = ? AND u.state = 'registered' AND u.consent_due_at IS NOT NULL
	AND u.consent_due_at <= ? AND (u.marketing OR EXISTS (SELECT 1 FROM devices d WHERE d.app_id = u.app_id
	AND d.user_id = u.user_id AND d.marketing))`

// ConsentDue returns a page of users due for re-confirmation, soonest due
// first. Its cursor is "<due ms>.<base64url of the last user id>".
func (s *ConsentStore) ConsentDue(ctx context.Context, appID string, until time.Time, limit int, cursor string) ([]herald.ConsentDue, string, error) {
	where, args := dueWhere, []any{appID, until.UnixMilli()}
	if cursor != "" {
		due, user, ok := cutDueCursor(cursor)
		if !ok {
			return nil, "", herald.Invalid(herald.Detail{Field: "cursor", Reason: "is not a cursor this list gave"})
		}
		where += ` AND (u.consent_due_at > ? OR u.consent_due_at = ? AND u.user_id > ?)`
		args = append(args, due, due, user)
	}
	out := []herald.ConsentDue{}
	err := s.reader().each(ctx, func(row scanner) error {
		var d herald.ConsentDue
		var confirmed, due int64
		var devM, devN bool
		err := row.Scan(&d.UserID, &d.Consent.Marketing, &d.Consent.MarketingNight, &confirmed, &due, &devM, &devN)
		d.Consent.Marketing = d.Consent.Marketing || devM
		d.Consent.MarketingNight = d.Consent.MarketingNight || devN
		d.ConfirmedAt, d.DueAt = time.UnixMilli(confirmed).UTC(), time.UnixMilli(due).UTC()
		out = append(out, d)
		return err
	}, `SELECT u.user_id, u.marketing, u.marketing_night, u.consent_confirmed_at, u.consent_due_at,
		EXISTS (SELECT 1 FROM devices d WHERE d.app_id = u.app_id AND d.user_id = u.user_id AND d.marketing),
		EXISTS (SELECT 1 FROM devices d WHERE d.app_id = u.app_id AND d.user_id = u.user_id AND d.marketing_night)`+
		where+` ORDER BY u.consent_due_at, u.user_id LIMIT ?`, append(args, limit+1)...)
	if err != nil || len(out) <= limit {
		return out, "", err
	}
	out = out[:limit]
	last := out[limit-1]
	return out, strconv.FormatInt(last.DueAt.UnixMilli(), 10) + "." + base64.RawURLEncoding.EncodeToString([]byte(last.UserID)), nil
}

func cutDueCursor(c string) (int64, string, bool) {
	ms, user, ok := strings.Cut(c, ".")
	due, err := strconv.ParseInt(ms, 10, 64)
	id, err2 := base64.RawURLEncoding.DecodeString(user)
	return due, string(id), ok && err == nil && err2 == nil && len(id) > 0
}

// CountConsentDue counts the users due for re-confirmation by until.
func (s *ConsentStore) CountConsentDue(ctx context.Context, appID string, until time.Time) (int, error) {
	var n int
	err := s.reader().queryRow(ctx, `SELECT COUNT(*)`+dueWhere, appID, until.UnixMilli()).Scan(&n)
	return n, err
}
