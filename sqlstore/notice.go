package sqlstore

import (
	"context"
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
			case u.State != herald.UserRegistered:
				continue // withdrew since: nothing to confirm
			}
			var devices []herald.Device
			if !u.Consent.Marketing { // the consent may be a device's
				if devices, err = consentDevices(ctx, c, appID, id); err != nil {
					return err
				}
			}
			for _, rec := range herald.ReconfirmedRecords(u.Consent, devices, at) {
				device := ""
				if rec.DeviceID != nil {
					device = *rec.DeviceID
				}
				trail.add(rec, &id, device)
			}
		}
		return trail.flush(ctx, c, at)
	})
	return recorded, err
}

// ReconfirmingUsers returns the users named by the app's re-confirmation
// pushes whose reached users are not recorded yet.
func (s *Store) ReconfirmingUsers(ctx context.Context, appID string) (map[string]bool, error) {
	var ids []string
	err := s.reader().each(ctx, func(row scanner) error {
		var id string
		err := row.Scan(&id)
		ids = append(ids, id)
		return err
	}, `SELECT id FROM pushes WHERE app_id = ? AND kind = ?
		AND NOT EXISTS (SELECT 1 FROM reconfirmation_recorded r WHERE r.push_id = pushes.id)`, appID, herald.KindReconfirmation)
	if err != nil {
		return nil, err
	}
	users := map[string]bool{}
	for _, id := range ids {
		rs, err := s.Recipients(ctx, id)
		if err != nil {
			return nil, err
		}
		for _, r := range rs {
			users[r.UserID] = true
		}
	}
	return users, nil
}

// consentDevices returns the user's devices with their pairs, by id.
func consentDevices(ctx context.Context, c conn, appID, userID string) ([]herald.Device, error) {
	var out []herald.Device
	err := c.each(ctx, func(row scanner) error {
		var d herald.Device
		err := row.Scan(&d.ID, &d.Consent.Marketing, &d.Consent.MarketingNight)
		out = append(out, d)
		return err
	}, `SELECT device_id, marketing, marketing_night FROM devices WHERE app_id = ? AND user_id = ? ORDER BY device_id`, appID, userID)
	return out, err
}
