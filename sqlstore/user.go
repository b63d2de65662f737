package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/heraldpush/herald"
)

// deviceColumns are the columns of a device that scanDevice reads.
const deviceColumns = `app_id, device_id, token, platform, app_source_version, user_id, marketing, marketing_night,
	created_at, token_updated_at, locale, time_zone, last_seen_at`

// deviceWriteColumns are the columns deviceRow writes: deviceColumns and
// version_key, which follows from the version (herald.VersionKey).
const deviceWriteColumns = deviceColumns + `, version_key`

func scanDevice(row scanner) (herald.Device, error) {
	var d herald.Device
	var created, updated, seen int64
	err := row.Scan(&d.AppID, &d.ID, &d.Token, &d.Platform, &d.AppSourceVersion, &d.UserID,
		&d.Consent.Marketing, &d.Consent.MarketingNight, &created, &updated, &d.Locale, &d.TimeZone, &seen)
	d.CreatedAt, d.TokenUpdatedAt, d.LastSeenAt = time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC(), time.UnixMilli(seen).UTC()
	return d, err
}

func deviceByID(ctx context.Context, c conn, appID, deviceID string) (herald.Device, error) {
	return scanDevice(c.queryRow(ctx, `SELECT `+deviceColumns+` FROM devices WHERE app_id = ? AND device_id = ?`, appID, deviceID))
}

func scanUser(row scanner) (herald.User, error) {
	var u herald.User
	var created int64
	var withdrawn, confirmed sql.NullInt64
	err := row.Scan(&u.AppID, &u.ID, &u.State, &u.Consent.Marketing, &u.Consent.MarketingNight, &u.ConsentSet, &created, &withdrawn,
		&confirmed)
	if errors.Is(err, herald.ErrNotFound) {
		return u, herald.ErrUserNotFound
	}
	u.CreatedAt = time.UnixMilli(created).UTC()
	u.WithdrawnAt = fromMS(withdrawn)
	u.ConsentConfirmedAt = fromMS(confirmed)
	return u, err
}

// userColumns are the columns scanUser reads.
const userColumns = `app_id, user_id, state, marketing, marketing_night, consent_set, created_at, withdrawn_at,
	consent_confirmed_at`

func userByID(ctx context.Context, c conn, appID, userID string) (herald.User, error) {
	return scanUser(c.queryRow(ctx, `SELECT `+userColumns+` FROM users WHERE app_id = ? AND user_id = ?`, appID, userID))
}

// registerUserSQL makes sure the user exists in the registered state: a
// new user is created, a withdrawn one re-registered with its consent
// reset. The upsert locks the user's row until the transaction ends, so a
// concurrent withdrawal or consent change waits for the device mapped
// here. It returns the row it wrote, none for a user registered already,
// which it leaves as it is.
const registerUserSQL = `INSERT INTO users (app_id, user_id, state, created_at, updated_at) VALUES (?, ?, 'registered', ?, ?)
	ON CONFLICT (app_id, user_id) DO UPDATE SET state = 'registered', withdrawn_at = NULL, updated_at = excluded.updated_at
	WHERE users.state = 'withdrawn'
	RETURNING ` + userColumns

// registerUser runs registerUserSQL and returns the user, read when
// registered already.
func registerUser(ctx context.Context, c conn, appID, userID string, now time.Time) (herald.User, error) {
	u, err := scanUser(c.queryRow(ctx, registerUserSQL, appID, userID, now.UnixMilli(), now.UnixMilli()))
	if errors.Is(err, herald.ErrUserNotFound) {
		return userByID(ctx, c, appID, userID)
	}
	return u, err
}

// appDefaultsSQL reads what a new device takes of its app
// (herald.NewDevice).
const appDefaultsSQL = `SELECT default_marketing, default_marketing_night FROM apps WHERE id = ?`

// registration is what RegisterDevice reads before it decides, in one
// round trip (see readRegistration).
type registration struct {
	old   herald.Device
	isNew bool
	app   herald.App
	user  herald.User // when the registration names a user
}

// readRegistration moves the token to the device from any other (one
// token, one device: a token registered again moves), reads the device
// and its app's defaults and, when reg names a user, registers the user
// (registerUserSQL) and reads it, all in one pipeline.
func readRegistration(ctx context.Context, c conn, appID string, reg herald.DeviceRegistration, now time.Time) (registration, error) {
	r := registration{app: herald.App{ID: appID}}
	var appErr error
	stmts := []Stmt{
		{Query: `DELETE FROM devices WHERE app_id = ? AND token = ? AND device_id <> ?`, Args: []any{appID, reg.Token, reg.DeviceID}},
		{Query: `SELECT ` + deviceColumns + ` FROM devices WHERE app_id = ? AND device_id = ?`, Args: []any{appID, reg.DeviceID},
			Row: func(row Row) (err error) {
				r.old, err = scanDevice(row)
				if errors.Is(err, herald.ErrNotFound) {
					r.isNew, err = true, nil
				}
				return err
			}},
		{Query: appDefaultsSQL, Args: []any{appID}, Row: func(row Row) error {
			appErr = row.Scan(&r.app.DefaultConsent.Marketing, &r.app.DefaultConsent.MarketingNight)
			if errors.Is(appErr, herald.ErrNotFound) {
				return nil // an answer only for a new device
			}
			return appErr
		}},
	}
	if reg.UserID != nil {
		// The read after the upsert sees its row, or the row registered
		// already, which the upsert locked.
		stmts = append(stmts,
			Stmt{Query: registerUserSQL, Args: []any{appID, *reg.UserID, now.UnixMilli(), now.UnixMilli()}},
			Stmt{Query: `SELECT ` + userColumns + ` FROM users WHERE app_id = ? AND user_id = ?`, Args: []any{appID, *reg.UserID},
				Row: func(row Row) (err error) {
					r.user, err = scanUser(row)
					return err
				}})
	}
	err := c.pipeline(ctx, stmts...)
	if r.isNew && appErr != nil {
		return r, appErr // the app's, as the upsert after it may fail for want of the app
	}
	return r, err
}

// RegisterDevice upserts a device (registerPushToken). The token moves to
// this device from any other; two registrations racing for one token are
// serialised by the token's unique index (the loser runs again and takes
// the token over), and a device changed meanwhile is judged again. A new
// device's default pair and a pair taken from its user are recorded in the
// consent trail. It reads in one round trip (readRegistration) and writes
// the device in a second; registrations arriving together share a commit
// (see TxOptions.Batched) and, on an engine that is a RegistrationJoiner,
// are made together, each table read and written once for them all
// (registrations, the joint). An app's registrations share one lane
// (TxOptions.Key), so that a batch holds every one that queued while the
// last ran: spread over the lanes by user, each batch held a lane's share
// of them and paid its round trips, statements and commit for that few.
func (s *UserStore) RegisterDevice(ctx context.Context, appID string, reg herald.DeviceRegistration) (herald.Device, error) {
	it := &regItem{appID: appID, reg: reg}
	opts := TxOptions{Batched: true, Key: "registrations\x00" + appID, Joint: s.regs, Item: it}
	err := s.inTxRetryWith(ctx, opts, true, func(c conn) error {
		now := s.Now()
		r, err := readRegistration(ctx, c, appID, reg, now)
		if err != nil {
			return err
		}
		if reg.IdentityRefused(r.old, r.isNew) {
			return herald.ErrIdentityRefused
		}
		d, trail := registered(r, reg, now)
		if r.isNew {
			_, err = c.exec(ctx, `INSERT INTO devices (`+deviceWriteColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, deviceRow(d)...)
		} else {
			err = updateDevice(ctx, c, r.old, d)
		}
		if err != nil {
			return err
		}
		it.out = d
		return trail.flush(ctx, c, now)
	})
	return it.out, err
}

// registered decides a registration on what was read for it: the device
// as it is to be written, and the consent records it makes.
func registered(r registration, reg herald.DeviceRegistration, now time.Time) (herald.Device, *consentLog) {
	trail := &consentLog{appID: r.app.ID}
	d := r.old
	if r.isNew {
		d = herald.NewDevice(r.app, reg.DeviceID, now)
		if rec, ok := herald.ConsentDefaulted(d.Consent, now); ok {
			trail.add(rec, reg.UserID, d.ID)
		}
	}
	d.Register(reg, now)
	if reg.UserID != nil {
		mapDeviceTo(&d, r.user, now, trail)
	}
	return d, trail
}

// deviceRow is d's values in the order of deviceWriteColumns.
func deviceRow(d herald.Device) []any {
	return []any{d.AppID, d.ID, d.Token, d.Platform, d.AppSourceVersion, d.UserID, d.Consent.Marketing,
		d.Consent.MarketingNight, d.CreatedAt.UnixMilli(), d.TokenUpdatedAt.UnixMilli(), d.Locale, d.TimeZone,
		d.LastSeenAt.UnixMilli(), herald.VersionKey(d.AppSourceVersion)}
}

// mapDevice maps d to userID, registering the user (again, when
// withdrawn): see mapDeviceTo.
func mapDevice(ctx context.Context, c conn, d *herald.Device, userID string, now time.Time, trail *consentLog) error {
	u, err := registerUser(ctx, c, d.AppID, userID, now)
	if err != nil {
		return err
	}
	mapDeviceTo(d, u, now, trail)
	return nil
}

// mapDeviceTo maps d to u, registered; the device's consent follows
// herald's Device.MapTo. A device newly mapped takes the user's pair
// (recorded in trail) or, keeping its own marketing consent, brings its
// clock to the user.
func mapDeviceTo(d *herald.Device, u herald.User, now time.Time, trail *consentLog) {
	before, already := d.Consent, d.UserID != nil && *d.UserID == u.ID
	d.MapTo(u)
	switch {
	case already:
	case u.ConsentSet:
		if rec, ok := herald.ConsentAdopted(herald.SourceSDK, before, d.Consent, now); ok {
			trail.add(rec, d.UserID, d.ID)
		}
	case d.Consent.Marketing:
		trail.brought = &broughtClock{deviceID: d.ID, userID: u.ID}
	}
}

// updateDevice writes d over old, guarded: errConflict when another writer
// changed the device since old was read.
func updateDevice(ctx context.Context, c conn, old, d herald.Device) error {
	st := updateDeviceStmt(old, d)
	return guard(c.exec(ctx, st.Query, st.Args...))
}

// updateDeviceStmt is updateDevice's statement, for a pipeline: its Exec
// answers errConflict when it changed no row.
func updateDeviceStmt(old, d herald.Device) Stmt {
	return Stmt{Query: `UPDATE devices SET token = ?, platform = ?, app_source_version = ?, user_id = ?,
		marketing = ?, marketing_night = ?, token_updated_at = ?, locale = ?, time_zone = ?, last_seen_at = ?, version_key = ?
		WHERE app_id = ? AND device_id = ? AND token = ? AND user_id IS NOT DISTINCT FROM ? AND marketing = ?
		AND marketing_night = ? AND token_updated_at = ?`,
		Args: []any{d.Token, d.Platform, d.AppSourceVersion, d.UserID, d.Consent.Marketing, d.Consent.MarketingNight,
			d.TokenUpdatedAt.UnixMilli(), d.Locale, d.TimeZone, d.LastSeenAt.UnixMilli(), herald.VersionKey(d.AppSourceVersion),
			d.AppID, d.ID,
			old.Token, old.UserID, old.Consent.Marketing, old.Consent.MarketingNight, old.TokenUpdatedAt.UnixMilli()},
		Exec: func(n int64) error { return guard(n, nil) }}
}

// SetDeviceUser maps a device to a user, or unmaps it (setUserId).
func (s *UserStore) SetDeviceUser(ctx context.Context, appID, deviceID string, userID *string) (herald.Device, error) {
	return s.changeDevice(ctx, appID, deviceID, func(c conn, d *herald.Device, trail *consentLog) error {
		if userID == nil {
			d.UserID = nil
			return nil
		}
		return mapDevice(ctx, c, d, *userID, s.Now(), trail)
	})
}

// SetDeviceConsent applies the in-app consent switch to one device and
// records it, the same pair set again included (a re-confirmation).
func (s *UserStore) SetDeviceConsent(ctx context.Context, appID, deviceID string, change herald.ConsentChange) (herald.Device, error) {
	return s.changeDevice(ctx, appID, deviceID, func(_ conn, d *herald.Device, trail *consentLog) error {
		// Checked on the device as read: the update is guarded on its
		// user, so a device mapped to another user meanwhile is judged again.
		if change.Identity != nil && d.UserID != nil && !change.Identity.Verifies(*d.UserID) {
			return herald.ErrIdentityRefused
		}
		c, err := change.Apply(d.Consent, "")
		if err != nil {
			return err
		}
		trail.add(herald.ConsentDecision(herald.SourceSDK, d.Consent, c, s.Now()), d.UserID, d.ID)
		d.Consent = c
		return nil
	})
}

// changeDevice reads a device, changes it and writes it back, guarded; a
// device changed meanwhile is read and changed again. The consent records
// the change made are written first: they lock the user's row before the
// device's, in the order SetUserConsent takes them. Changes arriving
// together share a commit (see TxOptions.Batched).
func (s *UserStore) changeDevice(ctx context.Context, appID, deviceID string, change func(conn, *herald.Device, *consentLog) error) (herald.Device, error) {
	var d herald.Device
	err := s.inBatchedTxRetry(ctx, deviceID, false, func(c conn) error {
		old, err := deviceByID(ctx, c, appID, deviceID)
		if err != nil {
			return err
		}
		d = old
		trail := &consentLog{appID: appID}
		if err := change(c, &d, trail); err != nil {
			return err
		}
		if err := trail.flush(ctx, c, s.Now()); err != nil {
			return err
		}
		return updateDevice(ctx, c, old, d)
	})
	return d, err
}

// DeleteDevice removes a device and its token.
func (s *UserStore) DeleteDevice(ctx context.Context, appID, deviceID string) error {
	return s.execOne(ctx, `DELETE FROM devices WHERE app_id = ? AND device_id = ?`, appID, deviceID)
}

// DeleteToken removes the device holding token.
func (s *UserStore) DeleteToken(ctx context.Context, appID, token string) error {
	return s.execOne(ctx, `DELETE FROM devices WHERE app_id = ? AND token = ?`, appID, token)
}

// SetUserConsent applies change to the user and every device mapped to it.
// The user's pair is written only over the pair the change was applied to,
// so two changes at once never lose one another. The user's record (the
// same pair set again included: a re-confirmation) and those of the
// devices whose pair changed go to the consent trail.
func (s *UserStore) SetUserConsent(ctx context.Context, appID, userID string, change herald.ConsentChange) (herald.Consent, error) {
	var next herald.Consent
	src := change.Source
	if src == "" {
		src = herald.SourceServerAPI
	}
	err := s.inTxRetry(ctx, false, func(c conn) error {
		u, err := registeredUser(ctx, c, appID, userID)
		if err != nil {
			return err
		}
		if next, err = change.Apply(u.Consent, "state"); err != nil {
			return err
		}
		set := u.WithConsent(next)
		if err := guard(c.exec(ctx, `UPDATE users SET marketing = ?, marketing_night = ?, consent_set = ?
			WHERE app_id = ? AND user_id = ? AND state = 'registered' AND marketing = ? AND marketing_night = ? AND consent_set = ?`,
			set.Consent.Marketing, set.Consent.MarketingNight, set.ConsentSet, appID, userID,
			u.Consent.Marketing, u.Consent.MarketingNight, u.ConsentSet)); err != nil {
			return err
		}
		now := s.Now()
		trail := &consentLog{appID: appID}
		trail.add(herald.ConsentDecision(src, u.Consent, next, now), &userID, "")
		if err := s.adoptedDevices(ctx, c, trail, userID, src, next, now); err != nil {
			return err
		}
		if _, err = c.exec(ctx, `UPDATE devices SET marketing = ?, marketing_night = ? WHERE app_id = ? AND user_id = ?`,
			next.Marketing, next.MarketingNight, appID, userID); err != nil {
			return err
		}
		return trail.flush(ctx, c, now)
	})
	return next, err
}

// adoptedDevices records the user's devices whose pair next changes (on a
// withdrawal, those that had any consent to lose).
func (s *UserStore) adoptedDevices(ctx context.Context, c conn, trail *consentLog, userID string, src herald.ConsentSource, next herald.Consent, now time.Time) error {
	return c.each(ctx, func(row scanner) error {
		var id string
		var was herald.Consent
		if err := row.Scan(&id, &was.Marketing, &was.MarketingNight); err != nil {
			return err
		}
		if rec, ok := herald.ConsentAdopted(src, was, next, now); ok {
			trail.add(rec, &userID, id)
		}
		return nil
	}, `SELECT device_id, marketing, marketing_night FROM devices WHERE app_id = ? AND user_id = ? ORDER BY created_at, device_id`,
		trail.appID, userID)
}

func registeredUser(ctx context.Context, c conn, appID, userID string) (herald.User, error) {
	u, err := userByID(ctx, c, appID, userID)
	if err == nil && u.State == herald.UserWithdrawn {
		err = herald.ErrUserWithdrawn
	}
	return u, err
}

// WithdrawUser removes every device, tag and frequency-cap receipt of the
// user and resets its consent,
// recorded in the consent trail (which outlives the devices and keeps the
// user id: see docs/consent.md). The state change is guarded, so of two withdrawals at once one succeeds
// and the other answers ErrUserWithdrawn.
func (s *UserStore) WithdrawUser(ctx context.Context, appID, userID string) error {
	return s.inTx(ctx, func(c conn) error {
		u, err := registeredUser(ctx, c, appID, userID)
		if err != nil {
			return err
		}
		w := u.Withdrawn(s.Now())
		n, err := c.exec(ctx, `UPDATE users SET state = ?, marketing = ?, marketing_night = ?, consent_set = ?, withdrawn_at = ?
			WHERE app_id = ? AND user_id = ? AND state = 'registered'`,
			w.State, w.Consent.Marketing, w.Consent.MarketingNight, w.ConsentSet, ms(w.WithdrawnAt), appID, userID)
		if err != nil {
			return err
		}
		if n == 0 {
			return herald.ErrUserWithdrawn // withdrawn meanwhile
		}
		// The user's record, then one for each device that loses consent
		// with it.
		trail := &consentLog{appID: appID}
		trail.add(herald.ConsentWithdrawn(u.Consent, *w.WithdrawnAt), &userID, "")
		if err := s.adoptedDevices(ctx, c, trail, userID, herald.SourceWithdrawal, herald.Consent{}, *w.WithdrawnAt); err != nil {
			return err
		}
		if _, err = c.exec(ctx, `DELETE FROM devices WHERE app_id = ? AND user_id = ?`, appID, userID); err != nil {
			return err
		}
		if _, err = c.exec(ctx, `DELETE FROM user_tags WHERE app_id = ? AND user_id = ?`, appID, userID); err != nil {
			return err
		}
		if _, err = c.exec(ctx, `DELETE FROM marketing_receipts WHERE app_id = ? AND user_id = ?`, appID, userID); err != nil {
			return err
		}
		return trail.flush(ctx, c, *w.WithdrawnAt)
	})
}

// User returns a user with its devices and their topics.
func (s *UserStore) User(ctx context.Context, appID, userID string) (herald.User, []herald.Device, error) {
	r := s.reader()
	u, err := userByID(ctx, r, appID, userID)
	if err != nil {
		return u, nil, err
	}
	devices := []herald.Device{}
	err = r.each(ctx, func(row scanner) error {
		d, err := scanDevice(row)
		devices = append(devices, d)
		return err
	}, `SELECT `+deviceColumns+` FROM devices WHERE app_id = ? AND user_id = ? ORDER BY created_at, device_id`, appID, userID)
	if err != nil {
		return u, nil, err
	}
	for i := range devices {
		if devices[i].Topics, err = deviceTopics(ctx, r, appID, devices[i].ID); err != nil {
			return u, nil, err
		}
	}
	return u, devices, nil
}

func deviceTopics(ctx context.Context, c conn, appID, deviceID string) ([]string, error) {
	topics := []string{}
	err := c.each(ctx, func(row scanner) error {
		var t string
		err := row.Scan(&t)
		topics = append(topics, t)
		return err
	}, `SELECT topic FROM device_topics WHERE app_id = ? AND device_id = ? ORDER BY topic`, appID, deviceID)
	return topics, err
}
