package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/heraldpush/herald"
)

var _ herald.NoticeStore = (*Store)(nil)

// ClaimReconfirmation claims the app's run of day and stores its push.
func (s *Store) ClaimReconfirmation(ctx context.Context, appID, day string, p *herald.Push, rs []herald.Recipient, job herald.Job) (bool, error) {
	claimed := false
	err := s.inTx(ctx, func(c conn) error {
		var pushID any
		if p != nil {
			pushID = p.ID
		}
		n, err := c.exec(ctx, `INSERT INTO reconfirmation_runs (app_id, day, push_id) VALUES (?,?,?) ON CONFLICT (app_id, day) DO NOTHING`,
			appID, day, pushID)
		if err != nil || n == 0 {
			return err
		}
		claimed = true
		if p == nil {
			return nil
		}
		return insertPush(ctx, c, *p, rs, job)
	})
	return claimed, err
}

// ReconfirmationClaimed reports whether the app's run of day was made.
func (s *Store) ReconfirmationClaimed(ctx context.Context, appID, day string) (bool, error) {
	var n int
	err := s.reader().queryRow(ctx, `SELECT COUNT(*) FROM reconfirmation_runs WHERE app_id = ? AND day = ?`, appID, day).Scan(&n)
	return n > 0, err
}

// RecordReconfirmed writes the trail records of the users a
// re-confirmation push reached, once per push.
func (s *Store) RecordReconfirmed(ctx context.Context, appID, pushID string, userIDs []string, at time.Time) (bool, error) {
	recorded := false
	err := s.inTx(ctx, func(c conn) error {
		n, err := c.exec(ctx, `INSERT INTO reconfirmation_recorded (push_id) VALUES (?) ON CONFLICT (push_id) DO NOTHING`, pushID)
		if err != nil || n == 0 {
			return err
		}
		recorded = true
		trail := &consentLog{appID: appID}
		for _, id := range userIDs {
			u, err := userByID(ctx, c, appID, id)
			switch {
			case errors.Is(err, herald.ErrUserNotFound):
				continue
			case err != nil:
				return err
			case u.State != herald.UserRegistered || !u.Consent.Marketing:
				continue // withdrew or refused since: nothing to confirm
			}
			trail.add(herald.ConsentReconfirmed(u.Consent, at), &id, "")
		}
		return trail.flush(ctx, c, at)
	})
	return recorded, err
}

// ImportConsent records consent collected before Herald.
func (s *Store) ImportConsent(ctx context.Context, appID string, entries []herald.ConsentImport, now time.Time) (int, []herald.ImportSkip, error) {
	var imported int
	var skipped []herald.ImportSkip
	err := s.inTx(ctx, func(c conn) error {
		imported, skipped = 0, []herald.ImportSkip{}
		trail := &consentLog{appID: appID}
		for _, e := range entries {
			reason, err := s.importOne(ctx, c, trail, e, now)
			if err != nil {
				return err
			}
			if reason != "" {
				skipped = append(skipped, herald.ImportSkip{UserID: e.UserID, Reason: reason})
				continue
			}
			imported++
		}
		return trail.flush(ctx, c, now)
	})
	return imported, skipped, err
}

// importOne sets one user's pair and adds its records to the trail, or
// returns why it is skipped.
func (s *Store) importOne(ctx context.Context, c conn, trail *consentLog, e herald.ConsentImport, now time.Time) (string, error) {
	u, err := userByID(ctx, c, trail.appID, e.UserID)
	switch {
	case errors.Is(err, herald.ErrUserNotFound):
		return herald.SkipUnknownUser, nil
	case err != nil:
		return "", err
	case u.State != herald.UserRegistered:
		return herald.SkipWithdrawnUser, nil
	}
	var last sql.NullInt64
	if err := c.queryRow(ctx, `SELECT MAX(at) FROM consent_changes WHERE app_id = ? AND user_id = ?`, trail.appID, e.UserID).Scan(&last); err != nil {
		return "", err
	}
	// The trail of this batch is written at its end: a second entry of
	// the user in it is judged against the first.
	for _, rec := range trail.recs {
		if rec.UserID != nil && *rec.UserID == e.UserID && (!last.Valid || rec.At.UnixMilli() > last.Int64) {
			last = sql.NullInt64{Int64: rec.At.UnixMilli(), Valid: true}
		}
	}
	if reason := herald.ImportSkipReason(e, now, fromMS(last)); reason != "" {
		return reason, nil
	}
	next, err := e.Change.Apply(u.Consent, "")
	if err != nil {
		return herald.SkipPair, nil
	}
	var again int
	if err := c.queryRow(ctx, `SELECT COUNT(*) FROM consent_changes WHERE app_id = ? AND user_id = ? AND device_id IS NULL
		AND source = ? AND at = ? AND marketing_to = ? AND night_to = ?`, trail.appID, e.UserID, herald.SourceImport, e.At.UnixMilli(),
		next.Marketing, next.MarketingNight).Scan(&again); err != nil {
		return "", err
	}
	if again > 0 {
		return herald.SkipImported, nil // a file imported again
	}
	set := u.WithConsent(next)
	if _, err := c.exec(ctx, `UPDATE users SET marketing = ?, marketing_night = ?, consent_set = ? WHERE app_id = ? AND user_id = ?`,
		set.Consent.Marketing, set.Consent.MarketingNight, set.ConsentSet, trail.appID, e.UserID); err != nil {
		return "", err
	}
	trail.add(herald.ConsentImported(u.Consent, next, e.At), &e.UserID, "")
	if err := s.adoptedDevices(ctx, c, trail, e.UserID, herald.SourceImport, next, e.At); err != nil {
		return "", err
	}
	_, err = c.exec(ctx, `UPDATE devices SET marketing = ?, marketing_night = ? WHERE app_id = ? AND user_id = ?`,
		next.Marketing, next.MarketingNight, trail.appID, e.UserID)
	return "", err
}
