package sqlite

import (
	"context"
	"database/sql"
	"time"

	"github.com/heraldpush/herald"
)

const appColumns = `id, name, api_key, secret_hash, tier, app_user_enabled, registered, time_zone,
	default_marketing, default_marketing_night, fcm_credentials, webhook_url, webhook_secret, created_at`

// appReadColumns are appColumns and those only the service writes.
const appReadColumns = appColumns + `, fcm_warning, fcm_warning_at`

func scanApp(row interface{ Scan(...any) error }) (herald.App, error) {
	var a herald.App
	var created int64
	var warned sql.NullInt64
	err := row.Scan(&a.ID, &a.Name, &a.APIKey, &a.SecretHash, &a.Tier, &a.AppUserEnabled, &a.Registered,
		&a.TimeZone, &a.DefaultConsent.Marketing, &a.DefaultConsent.MarketingNight, &a.FCMCredentials,
		&a.WebhookURL, &a.WebhookSecret, &created, &a.FCMWarning, &warned)
	a.CreatedAt = time.UnixMilli(created).UTC()
	if warned.Valid {
		t := time.UnixMilli(warned.Int64).UTC()
		a.FCMWarningAt = &t
	}
	return a, translate(err)
}

// CreateApp inserts a new app.
func (db *DB) CreateApp(ctx context.Context, a herald.App) error {
	_, err := db.Writer.ExecContext(ctx, `INSERT INTO apps (`+appColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		a.ID, a.Name, a.APIKey, a.SecretHash, a.Tier, a.AppUserEnabled, a.Registered, a.TimeZone,
		a.DefaultConsent.Marketing, a.DefaultConsent.MarketingNight, a.FCMCredentials, a.WebhookURL,
		a.WebhookSecret, a.CreatedAt.UnixMilli())
	return err
}

// App returns the app with id, or herald.ErrNotFound.
func (db *DB) App(ctx context.Context, id string) (herald.App, error) {
	return scanApp(db.Reader.QueryRowContext(ctx, `SELECT `+appReadColumns+` FROM apps WHERE id = ?`, id))
}

// AppByAPIKey returns the app with the API key, or herald.ErrNotFound.
func (db *DB) AppByAPIKey(ctx context.Context, apiKey string) (herald.App, error) {
	return scanApp(db.Reader.QueryRowContext(ctx, `SELECT `+appReadColumns+` FROM apps WHERE api_key = ?`, apiKey))
}

// ListApps returns every app, oldest first.
func (db *DB) ListApps(ctx context.Context) ([]herald.App, error) {
	rows, err := db.Reader.QueryContext(ctx, `SELECT `+appReadColumns+` FROM apps ORDER BY created_at, id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	apps := []herald.App{}
	for rows.Next() {
		a, err := scanApp(rows)
		if err != nil {
			return nil, err
		}
		apps = append(apps, a)
	}
	return apps, rows.Err()
}

// UpdateApp writes the app's settings.
func (db *DB) UpdateApp(ctx context.Context, a herald.App) error {
	return db.execOne(ctx, `UPDATE apps SET name = ?, tier = ?, app_user_enabled = ?, registered = ?, time_zone = ?,
		default_marketing = ?, default_marketing_night = ? WHERE id = ?`,
		a.Name, a.Tier, a.AppUserEnabled, a.Registered, a.TimeZone,
		a.DefaultConsent.Marketing, a.DefaultConsent.MarketingNight, a.ID)
}

// DeleteApp removes an app and everything it owns.
func (db *DB) DeleteApp(ctx context.Context, id string) error {
	return db.execOne(ctx, `DELETE FROM apps WHERE id = ?`, id)
}

// SetSecretHash replaces the app's secret key hash; the old key is dead at
// once.
func (db *DB) SetSecretHash(ctx context.Context, id string, hash []byte) error {
	return db.execOne(ctx, `UPDATE apps SET secret_hash = ? WHERE id = ?`, hash, id)
}

// SetFCMCredentials stores (or, with nil, removes) the sealed service-account
// file.
func (db *DB) SetFCMCredentials(ctx context.Context, id string, sealed []byte) error {
	return db.execOne(ctx, `UPDATE apps SET fcm_credentials = ?, fcm_warning = '', fcm_warning_at = NULL WHERE id = ?`, sealed, id)
}

// SetFCMWarning records FCM's last refusal of the app's credentials.
func (db *DB) SetFCMWarning(ctx context.Context, id, warning string, at time.Time) error {
	return db.execOne(ctx, `UPDATE apps SET fcm_warning = ?, fcm_warning_at = ? WHERE id = ?`, warning, at.UnixMilli(), id)
}

// SetWebhook stores the webhook URL and sealed secret; an empty URL removes
// the webhook.
func (db *DB) SetWebhook(ctx context.Context, id, url string, sealedSecret []byte) error {
	if url == "" {
		sealedSecret = nil
	}
	return db.execOne(ctx, `UPDATE apps SET webhook_url = ?, webhook_secret = ? WHERE id = ?`, url, sealedSecret, id)
}

// execOne runs a write that must touch exactly one row; none is
// herald.ErrNotFound.
func (db *DB) execOne(ctx context.Context, query string, args ...any) error {
	return db.inTx(ctx, func(tx *sql.Tx) error { return execOneTx(ctx, tx, query, args...) })
}

func execOneTx(ctx context.Context, tx *sql.Tx, query string, args ...any) error {
	res, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n == 0 {
		return herald.ErrNotFound
	}
	return nil
}
