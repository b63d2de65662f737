package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/heraldpush/herald"
)

const appColumns = `id, name, api_key, secret_hash, tier, app_user_enabled, registered, time_zone,
	default_marketing, default_marketing_night, fcm_credentials, webhook_url, webhook_secret, created_at,
	no_ad_prefix_check, sandbox, send_rate_per_minute, ad_sender_name, ad_sender_contact, ad_opt_out,
	consent_notice, reconfirmation, identity_verification, webhook_events, approval_mode, approval_min_users,
	marketing_cap_per_day, marketing_cap_per_week`

// appReadColumns are appColumns and those only the service writes.
const appReadColumns = appColumns + `, fcm_warning, fcm_warning_at, fcm_credentials_at, identity_secret, identity_refusals,
	identity_previous, identity_rotated_at`

func scanApp(row scanner) (herald.App, error) {
	var a herald.App
	var created int64
	var warned, stored, rotated sql.NullInt64
	var notice, reconfirm string
	var events sql.NullString
	var perDay, perWeek sql.NullInt64
	err := row.Scan(&a.ID, &a.Name, &a.APIKey, &a.SecretHash, &a.Tier, &a.AppUserEnabled, &a.Registered,
		&a.TimeZone, &a.DefaultConsent.Marketing, &a.DefaultConsent.MarketingNight, &a.FCMCredentials,
		&a.WebhookURL, &a.WebhookSecret, &created, &a.NoAdPrefixCheck, &a.Sandbox, &a.SendRatePerMinute,
		&a.AdSenderName, &a.AdSenderContact, &a.AdOptOut, &notice, &reconfirm, &a.IdentityVerification,
		&events, &a.Approval.Mode, &a.Approval.MinUsers, &perDay, &perWeek, &a.FCMWarning, &warned, &stored, &a.IdentitySecret, &a.IdentityRefusals,
		&a.PreviousIdentitySecret, &rotated)
	if err == nil {
		err = readNotices(&a, notice, reconfirm)
	}
	if err == nil && events.Valid {
		err = json.Unmarshal([]byte(events.String), &a.WebhookEvents)
	}
	a.CreatedAt = time.UnixMilli(created).UTC()
	a.MarketingCap = herald.MarketingCap{PerDay: intOrNil(perDay), PerWeek: intOrNil(perWeek)}
	a.FCMWarningAt, a.FCMCredentialsAt = fromMS(warned), fromMS(stored)
	if rotated.Valid {
		a.IdentityRotatedAt = time.UnixMilli(rotated.Int64).UTC()
	}
	return a, err
}

func appByID(ctx context.Context, c conn, id string) (herald.App, error) {
	return scanApp(c.queryRow(ctx, `SELECT `+appReadColumns+` FROM apps WHERE id = ?`, id))
}

// CreateApp inserts a new app; an app with no send rate gets the default.
func (s *AppStore) CreateApp(ctx context.Context, a herald.App) error {
	return s.inTx(ctx, func(c conn) error {
		notice, reconfirm := writeNotices(a)
		_, err := c.exec(ctx, `INSERT INTO apps (`+appColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
			a.ID, a.Name, a.APIKey, a.SecretHash, a.Tier, a.AppUserEnabled, a.Registered, a.TimeZone,
			a.DefaultConsent.Marketing, a.DefaultConsent.MarketingNight, a.FCMCredentials, a.WebhookURL,
			a.WebhookSecret, a.CreatedAt.UnixMilli(), a.NoAdPrefixCheck, a.Sandbox, a.SendRate(),
			a.AdSenderName, a.AdSenderContact, a.AdOptOut, notice, reconfirm, a.IdentityVerification, writeWebhookEvents(a),
			a.Approval.ModeOrOff(), a.Approval.MinUsers, nullInt(a.MarketingCap.PerDay), nullInt(a.MarketingCap.PerWeek))
		return err
	})
}

// App returns the app with id, or herald.ErrNotFound.
func (s *AppStore) App(ctx context.Context, id string) (herald.App, error) {
	return appByID(ctx, s.reader(), id)
}

// AppByAPIKey returns the app with the API key, or herald.ErrNotFound.
func (s *AppStore) AppByAPIKey(ctx context.Context, apiKey string) (herald.App, error) {
	return scanApp(s.reader().queryRow(ctx, `SELECT `+appReadColumns+` FROM apps WHERE api_key = ?`, apiKey))
}

// ListApps returns every app, oldest first.
func (s *AppStore) ListApps(ctx context.Context) ([]herald.App, error) {
	apps := []herald.App{}
	err := s.reader().each(ctx, func(r scanner) error {
		a, err := scanApp(r)
		if err == nil {
			apps = append(apps, a)
		}
		return err
	}, `SELECT `+appReadColumns+` FROM apps ORDER BY created_at, id`)
	return apps, err
}

// UpdateApp writes the app's settings.
func (s *AppStore) UpdateApp(ctx context.Context, a herald.App) error {
	notice, reconfirm := writeNotices(a)
	return s.execOne(ctx, `UPDATE apps SET name = ?, tier = ?, app_user_enabled = ?, registered = ?, time_zone = ?,
		default_marketing = ?, default_marketing_night = ?, no_ad_prefix_check = ?, sandbox = ?, send_rate_per_minute = ?,
		ad_sender_name = ?, ad_sender_contact = ?, ad_opt_out = ?, consent_notice = ?, reconfirmation = ?,
		identity_verification = ?, webhook_events = ?, approval_mode = ?, approval_min_users = ?,
		marketing_cap_per_day = ?, marketing_cap_per_week = ?
		WHERE id = ?`,
		a.Name, a.Tier, a.AppUserEnabled, a.Registered, a.TimeZone,
		a.DefaultConsent.Marketing, a.DefaultConsent.MarketingNight, a.NoAdPrefixCheck, a.Sandbox, a.SendRate(),
		a.AdSenderName, a.AdSenderContact, a.AdOptOut, notice, reconfirm, a.IdentityVerification, writeWebhookEvents(a),
		a.Approval.ModeOrOff(), a.Approval.MinUsers, nullInt(a.MarketingCap.PerDay), nullInt(a.MarketingCap.PerWeek), a.ID)
}

// writeWebhookEvents is how an app's webhookEvents are stored: a JSON
// array, NULL for the default list.
func writeWebhookEvents(a herald.App) any {
	if a.WebhookEvents == nil {
		return nil
	}
	b, _ := json.Marshal(a.WebhookEvents) // strings always encode
	return string(b)
}

// noticeColumns is how the consent notice settings are stored: one JSON
// object per setting, "" for the zero value (off, default templates).
type noticeColumns struct {
	Enabled  bool   `json:"enabled"`
	Title    string `json:"title,omitempty"`
	Content  string `json:"content,omitempty"`
	LeadDays int    `json:"leadDays,omitempty"`
}

func writeNotices(a herald.App) (string, string) {
	enc := func(v noticeColumns) string {
		if v == (noticeColumns{}) {
			return ""
		}
		b, _ := json.Marshal(v) // a struct of strings and numbers always encodes
		return string(b)
	}
	n, r := a.ConsentNotice, a.Reconfirmation
	return enc(noticeColumns{n.Enabled, n.Title, n.Content, 0}), enc(noticeColumns{r.Enabled, r.Title, r.Content, r.LeadDays})
}

func readNotices(a *herald.App, notice, reconfirm string) error {
	var n, r noticeColumns
	for _, c := range []struct {
		s string
		v *noticeColumns
	}{{notice, &n}, {reconfirm, &r}} {
		if c.s == "" {
			continue
		}
		if err := json.Unmarshal([]byte(c.s), c.v); err != nil {
			return fmt.Errorf("app %s: consent notice setting: %w", a.ID, err)
		}
	}
	a.ConsentNotice = herald.ConsentNotice{Enabled: n.Enabled, Title: n.Title, Content: n.Content}
	a.Reconfirmation = herald.Reconfirmation{Enabled: r.Enabled, Title: r.Title, Content: r.Content, LeadDays: r.LeadDays}
	return nil
}

// DeleteApp removes an app and everything it owns.
func (s *AppStore) DeleteApp(ctx context.Context, id string) error {
	return s.inTx(ctx, func(c conn) error {
		// user_pushes, the delivery events and the cap receipts have no
		// foreign key to cascade (see migrations 30, 38 and 44).
		for _, table := range []string{"user_pushes", "delivery_events", "delivery_event_streams", "marketing_receipts"} {
			if _, err := c.exec(ctx, `DELETE FROM `+table+` WHERE app_id = ?`, id); err != nil {
				return err
			}
		}
		return execOneIn(ctx, c, `DELETE FROM apps WHERE id = ?`, id)
	})
}

// SetSecretHash replaces the app's secret key hash; the old key is dead at
// once.
func (s *AppStore) SetSecretHash(ctx context.Context, id string, hash []byte) error {
	return s.execOne(ctx, `UPDATE apps SET secret_hash = ? WHERE id = ?`, hash, id)
}

// SetFCMCredentials stores (or, with nil, removes) the sealed service-account
// file, noting when, and clears FCM's last warning about the old one.
func (s *AppStore) SetFCMCredentials(ctx context.Context, id string, sealed []byte) error {
	var at any
	if len(sealed) > 0 {
		at = s.Now().UnixMilli()
	}
	return s.execOne(ctx, `UPDATE apps SET fcm_credentials = ?, fcm_credentials_at = ?, fcm_warning = '', fcm_warning_at = NULL
		WHERE id = ?`, sealed, at, id)
}

// SetFCMWarning records FCM's last refusal of the app's credentials.
func (s *AppStore) SetFCMWarning(ctx context.Context, id, warning string, at time.Time) error {
	return s.execOne(ctx, `UPDATE apps SET fcm_warning = ?, fcm_warning_at = ? WHERE id = ?`, warning, at.UnixMilli(), id)
}

// SetWebhook stores the webhook URL and sealed secret; an empty URL removes
// the webhook.
func (s *AppStore) SetWebhook(ctx context.Context, id, url string, sealedSecret []byte) error {
	if url == "" {
		sealedSecret = nil
	}
	return s.execOne(ctx, `UPDATE apps SET webhook_url = ?, webhook_secret = ? WHERE id = ?`, url, sealedSecret, id)
}

// SetIdentitySecret replaces the app's sealed identity secret; the one it
// replaces is kept as the previous, rotated now.
func (s *AppStore) SetIdentitySecret(ctx context.Context, id string, sealed []byte) error {
	return s.execOne(ctx, `UPDATE apps SET identity_previous = identity_secret, identity_rotated_at = ?, identity_secret = ?
		WHERE id = ?`, s.Now().UnixMilli(), sealed, id)
}

// CountIdentityRefusal adds one to the app's refused identity tokens. The
// addition is the statement's, never a read then a write, so that refusals
// counted together are all kept.
func (s *AppStore) CountIdentityRefusal(ctx context.Context, id string) error {
	return s.execOne(ctx, `UPDATE apps SET identity_refusals = identity_refusals + 1 WHERE id = ?`, id)
}

// nullInt is a nullable whole number as a statement's argument: NULL for
// nil.
func nullInt(v *int) any {
	if v == nil {
		return nil
	}
	return int64(*v)
}

// intOrNil is a nullable whole number as read: nil for NULL.
func intOrNil(v sql.NullInt64) *int {
	if !v.Valid {
		return nil
	}
	n := int(v.Int64)
	return &n
}
