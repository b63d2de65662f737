package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/heraldpush/herald"
)

const deviceColumns = `app_id, device_id, token, platform, app_source_version, user_id, marketing, marketing_night,
	created_at, token_updated_at`

func scanDevice(row interface{ Scan(...any) error }) (herald.Device, error) {
	var d herald.Device
	var created, updated int64
	err := row.Scan(&d.AppID, &d.ID, &d.Token, &d.Platform, &d.AppSourceVersion, &d.UserID,
		&d.Consent.Marketing, &d.Consent.MarketingNight, &created, &updated)
	d.CreatedAt, d.TokenUpdatedAt = time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
	return d, translate(err)
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func deviceByID(ctx context.Context, q querier, appID, deviceID string) (herald.Device, error) {
	return scanDevice(q.QueryRowContext(ctx, `SELECT `+deviceColumns+` FROM devices WHERE app_id = ? AND device_id = ?`, appID, deviceID))
}

func scanUser(row interface{ Scan(...any) error }) (herald.User, error) {
	var u herald.User
	var created int64
	var withdrawn sql.NullInt64
	err := row.Scan(&u.AppID, &u.ID, &u.State, &u.Consent.Marketing, &u.Consent.MarketingNight, &u.ConsentSet, &created, &withdrawn)
	if errors.Is(err, sql.ErrNoRows) {
		return u, herald.ErrUserNotFound
	}
	u.CreatedAt = time.UnixMilli(created).UTC()
	if withdrawn.Valid {
		t := time.UnixMilli(withdrawn.Int64).UTC()
		u.WithdrawnAt = &t
	}
	return u, err
}

func userByID(ctx context.Context, q querier, appID, userID string) (herald.User, error) {
	return scanUser(q.QueryRowContext(ctx, `SELECT app_id, user_id, state, marketing, marketing_night, consent_set, created_at, withdrawn_at
		FROM users WHERE app_id = ? AND user_id = ?`, appID, userID))
}

// registerUser makes sure the user exists in the registered state: a new
// user is created, a withdrawn one re-registered with its consent reset.
func registerUser(ctx context.Context, tx *sql.Tx, appID, userID string, now time.Time) (herald.User, error) {
	_, err := tx.ExecContext(ctx, `INSERT INTO users (app_id, user_id, state, created_at) VALUES (?, ?, 'registered', ?)
		ON CONFLICT (app_id, user_id) DO UPDATE SET state = 'registered', withdrawn_at = NULL WHERE state = 'withdrawn'`,
		appID, userID, now.UnixMilli())
	if err != nil {
		return herald.User{}, err
	}
	return userByID(ctx, tx, appID, userID)
}

// RegisterDevice upserts a device (registerPushToken). The token moves to
// this device from any other; two registrations racing for one token are
// serialised by the token's unique index (the loser runs again and takes
// the token over), and a device changed meanwhile is judged again.
func (db *DB) RegisterDevice(ctx context.Context, appID string, reg herald.DeviceRegistration) (herald.Device, error) {
	var out herald.Device
	err := db.inTxRetry(ctx, true, func(tx *sql.Tx) error {
		now := db.Now()
		// One token, one device: a token registered again moves.
		if _, err := tx.ExecContext(ctx, `DELETE FROM devices WHERE app_id = ? AND token = ? AND device_id <> ?`,
			appID, reg.Token, reg.DeviceID); err != nil {
			return err
		}
		old, err := deviceByID(ctx, tx, appID, reg.DeviceID)
		isNew := errors.Is(err, herald.ErrNotFound)
		if err != nil && !isNew {
			return err
		}
		d := old
		if isNew {
			app, err := scanApp(tx.QueryRowContext(ctx, `SELECT `+appReadColumns+` FROM apps WHERE id = ?`, appID))
			if err != nil {
				return err
			}
			d = herald.NewDevice(app, reg.DeviceID, now)
		}
		d.Register(reg, now)
		if reg.UserID != nil {
			if err := mapDevice(ctx, tx, &d, *reg.UserID, now); err != nil {
				return err
			}
		}
		if isNew {
			_, err = tx.ExecContext(ctx, `INSERT INTO devices (`+deviceColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?)`,
				d.AppID, d.ID, d.Token, d.Platform, d.AppSourceVersion, d.UserID, d.Consent.Marketing,
				d.Consent.MarketingNight, d.CreatedAt.UnixMilli(), d.TokenUpdatedAt.UnixMilli())
		} else {
			err = updateDevice(ctx, tx, old, d)
		}
		out = d
		return err
	})
	return out, err
}

// mapDevice maps d to userID, registering the user (again, when withdrawn);
// the device's consent follows herald's Device.MapTo.
func mapDevice(ctx context.Context, tx *sql.Tx, d *herald.Device, userID string, now time.Time) error {
	u, err := registerUser(ctx, tx, d.AppID, userID, now)
	if err != nil {
		return err
	}
	d.MapTo(u)
	return nil
}

// updateDevice writes d over old, guarded: errConflict when another writer
// changed the device since old was read.
func updateDevice(ctx context.Context, tx *sql.Tx, old, d herald.Device) error {
	return guard(tx.ExecContext(ctx, `UPDATE devices SET token = ?, platform = ?, app_source_version = ?, user_id = ?,
		marketing = ?, marketing_night = ?, token_updated_at = ?
		WHERE app_id = ? AND device_id = ? AND token = ? AND user_id IS ? AND marketing = ? AND marketing_night = ?
		AND token_updated_at = ?`,
		d.Token, d.Platform, d.AppSourceVersion, d.UserID, d.Consent.Marketing, d.Consent.MarketingNight,
		d.TokenUpdatedAt.UnixMilli(), d.AppID, d.ID,
		old.Token, old.UserID, old.Consent.Marketing, old.Consent.MarketingNight, old.TokenUpdatedAt.UnixMilli()))
}

// SetDeviceUser maps a device to a user, or unmaps it (setUserId).
func (db *DB) SetDeviceUser(ctx context.Context, appID, deviceID string, userID *string) (herald.Device, error) {
	return db.changeDevice(ctx, appID, deviceID, func(tx *sql.Tx, d *herald.Device) error {
		if userID == nil {
			d.UserID = nil
			return nil
		}
		return mapDevice(ctx, tx, d, *userID, db.Now())
	})
}

// SetDeviceConsent applies the in-app consent switch to one device.
func (db *DB) SetDeviceConsent(ctx context.Context, appID, deviceID string, change herald.ConsentChange) (herald.Device, error) {
	return db.changeDevice(ctx, appID, deviceID, func(_ *sql.Tx, d *herald.Device) error {
		c, err := change.Apply(d.Consent, "")
		d.Consent = c
		return err
	})
}

// changeDevice reads a device, changes it and writes it back, guarded; a
// device changed meanwhile is read and changed again.
func (db *DB) changeDevice(ctx context.Context, appID, deviceID string, change func(*sql.Tx, *herald.Device) error) (herald.Device, error) {
	var d herald.Device
	err := db.inTxRetry(ctx, false, func(tx *sql.Tx) error {
		old, err := deviceByID(ctx, tx, appID, deviceID)
		if err != nil {
			return err
		}
		d = old
		if err := change(tx, &d); err != nil {
			return err
		}
		return updateDevice(ctx, tx, old, d)
	})
	return d, err
}

// DeleteDevice removes a device and its token.
func (db *DB) DeleteDevice(ctx context.Context, appID, deviceID string) error {
	return db.execOne(ctx, `DELETE FROM devices WHERE app_id = ? AND device_id = ?`, appID, deviceID)
}

// DeleteToken removes the device holding token.
func (db *DB) DeleteToken(ctx context.Context, appID, token string) error {
	return db.execOne(ctx, `DELETE FROM devices WHERE app_id = ? AND token = ?`, appID, token)
}

// SetUserConsent applies change to the user and every device mapped to it.
// The user's pair is written only over the pair the change was applied to,
// so two changes at once never lose one another.
func (db *DB) SetUserConsent(ctx context.Context, appID, userID string, change herald.ConsentChange) (herald.Consent, error) {
	var next herald.Consent
	err := db.inTxRetry(ctx, false, func(tx *sql.Tx) error {
		u, err := registeredUser(ctx, tx, appID, userID)
		if err != nil {
			return err
		}
		if next, err = change.Apply(u.Consent, "state"); err != nil {
			return err
		}
		set := u.WithConsent(next)
		if err := guard(tx.ExecContext(ctx, `UPDATE users SET marketing = ?, marketing_night = ?, consent_set = ?
			WHERE app_id = ? AND user_id = ? AND state = 'registered' AND marketing = ? AND marketing_night = ? AND consent_set = ?`,
			set.Consent.Marketing, set.Consent.MarketingNight, set.ConsentSet, appID, userID,
			u.Consent.Marketing, u.Consent.MarketingNight, u.ConsentSet)); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE devices SET marketing = ?, marketing_night = ? WHERE app_id = ? AND user_id = ?`,
			next.Marketing, next.MarketingNight, appID, userID)
		return err
	})
	return next, err
}

func registeredUser(ctx context.Context, tx *sql.Tx, appID, userID string) (herald.User, error) {
	u, err := userByID(ctx, tx, appID, userID)
	if err == nil && u.State == herald.UserWithdrawn {
		err = herald.ErrUserWithdrawn
	}
	return u, err
}

// WithdrawUser removes every device of the user and resets its consent.
// The state change is guarded, so of two withdrawals at once one succeeds
// and the other answers ErrUserWithdrawn.
func (db *DB) WithdrawUser(ctx context.Context, appID, userID string) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		u, err := registeredUser(ctx, tx, appID, userID)
		if err != nil {
			return err
		}
		w := u.Withdrawn(db.Now())
		res, err := tx.ExecContext(ctx, `UPDATE users SET state = ?, marketing = ?, marketing_night = ?, consent_set = ?, withdrawn_at = ?
			WHERE app_id = ? AND user_id = ? AND state = 'registered'`,
			w.State, w.Consent.Marketing, w.Consent.MarketingNight, w.ConsentSet, ms(w.WithdrawnAt), appID, userID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return herald.ErrUserWithdrawn // withdrawn meanwhile
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM devices WHERE app_id = ? AND user_id = ?`, appID, userID)
		return err
	})
}

// User returns a user with its devices and their topics.
func (db *DB) User(ctx context.Context, appID, userID string) (herald.User, []herald.Device, error) {
	u, err := userByID(ctx, db.Reader, appID, userID)
	if err != nil {
		return u, nil, err
	}
	rows, err := db.Reader.QueryContext(ctx, `SELECT `+deviceColumns+` FROM devices WHERE app_id = ? AND user_id = ? ORDER BY created_at, device_id`, appID, userID)
	if err != nil {
		return u, nil, err
	}
	defer rows.Close()
	devices := []herald.Device{}
	for rows.Next() {
		d, err := scanDevice(rows)
		if err != nil {
			return u, nil, err
		}
		devices = append(devices, d)
	}
	if err := rows.Err(); err != nil {
		return u, nil, err
	}
	for i := range devices {
		if devices[i].Topics, err = deviceTopics(ctx, db.Reader, appID, devices[i].ID); err != nil {
			return u, nil, err
		}
	}
	return u, devices, nil
}

func deviceTopics(ctx context.Context, q querier, appID, deviceID string) ([]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT topic FROM device_topics WHERE app_id = ? AND device_id = ? ORDER BY topic`, appID, deviceID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	topics := []string{}
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, err
		}
		topics = append(topics, t)
	}
	return topics, rows.Err()
}
