package sqlstore

import (
	"context"
	"errors"
	"time"

	"github.com/heraldpush/herald"
)

// ClaimReconfirmation makes a re-confirmation run under the app's claim.
// The claim is the app's row, updated to itself: on PostgreSQL a second
// run (on any node) waits for the first to commit, and at READ COMMITTED
// its later statements then see the first's push, so the users it names
// are left out; on SQLite the writer serializes the runs the same way.
func (s *ConsentStore) ClaimReconfirmation(ctx context.Context, appID, day string, until time.Time, p *herald.Push, rs []herald.Recipient, job herald.Job) (int, bool, error) {
	var named int
	claimed := false
	err := s.inTxRetry(ctx, false, func(c conn) error {
		named, claimed = 0, false
		if err := c.lockRow(ctx, `apps`, `id = ?`, appID); err != nil {
			return err
		}
		var keep []herald.Recipient
		if p != nil {
			pending, err := reconfirmingUsers(ctx, c, appID)
			if err != nil {
				return err
			}
			due, err := dueUsers(ctx, c, appID, until)
			if err != nil {
				return err
			}
			keep = herald.StillToReconfirm(rs, due, pending)
		}
		var pushID any
		if len(keep) > 0 {
			pushID = p.ID
		}
		if day != "" {
			n, err := c.exec(ctx, `INSERT INTO reconfirmation_runs (app_id, day, push_id) VALUES (?,?,?) ON CONFLICT (app_id, day) DO NOTHING`,
				appID, day, pushID)
			if err != nil || n == 0 {
				return err
			}
		}
		claimed = true
		if len(keep) == 0 {
			return nil
		}
		q := *p
		q.RequestedUsers, named = len(keep), len(keep)
		return insertPush(ctx, c, q, keep, []herald.Job{job})
	})
	if !claimed {
		named = 0
	}
	return named, claimed, err
}

// dueUsers returns the app's users due for re-confirmation by until.
func dueUsers(ctx context.Context, c conn, appID string, until time.Time) (map[string]bool, error) {
	due := map[string]bool{}
	err := c.each(ctx, func(row scanner) error {
		var id string
		err := row.Scan(&id)
		due[id] = true
		return err
	}, `SELECT u.user_id`+dueWhere, appID, until.UnixMilli())
	return due, err
}

// ReconfirmationClaimed reports whether the app's run of day was made.
func (s *ConsentStore) ReconfirmationClaimed(ctx context.Context, appID, day string) (bool, error) {
	var n int
	err := s.reader().queryRow(ctx, `SELECT COUNT(*) FROM reconfirmation_runs WHERE app_id = ? AND day = ?`, appID, day).Scan(&n)
	return n > 0, err
}

// RecordReconfirmed writes the trail records of the users a
// re-confirmation push reached, once per push.
func (s *ConsentStore) RecordReconfirmed(ctx context.Context, appID, pushID string, userIDs []string, at time.Time) (bool, error) {
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
func (s *ConsentStore) ReconfirmingUsers(ctx context.Context, appID string) (map[string]bool, error) {
	return reconfirmingUsers(ctx, s.reader(), appID)
}

func reconfirmingUsers(ctx context.Context, c conn, appID string) (map[string]bool, error) {
	type pending struct {
		id   string
		list []byte
	}
	var ps []pending
	err := c.each(ctx, func(row scanner) error {
		var p pending
		err := row.Scan(&p.id, &p.list)
		ps = append(ps, p)
		return err
	}, `SELECT id, recipients FROM pushes WHERE app_id = ? AND kind = ?
		AND NOT EXISTS (SELECT 1 FROM reconfirmation_recorded r WHERE r.push_id = pushes.id)`, appID, herald.KindReconfirmation)
	if err != nil {
		return nil, err
	}
	users := map[string]bool{}
	for _, p := range ps {
		if p.list == nil { // accepted before recipients were stored with the push
			err := c.each(ctx, func(row scanner) error {
				var id string
				err := row.Scan(&id)
				users[id] = true
				return err
			}, `SELECT user_id FROM push_recipients WHERE push_id = ?`, p.id)
			if err != nil {
				return nil, err
			}
			continue
		}
		rs, err := decodeRecipients(p.list)
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
