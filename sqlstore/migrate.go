package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/heraldpush/herald"
)

// GoMigrations are the migrations written in Go, which both engines
// register beside their SQL files: the ones that apply a rule of the
// domain, which SQL cannot state once for both. rebind turns the shared
// dialect's placeholders into the engine's.
func GoMigrations(rebind func(string) string) []*goose.Migration {
	return []*goose.Migration{
		// 13: the consent clock's backfill. There is nothing to undo on the
		// way down: the estimates cannot be told from real confirmations.
		goose.NewGoMigration(13, &goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
			return backfillConsentClocks(ctx, tx, rebind)
		}}, nil),
		// 36: the version keys of the devices of before (migration 35
		// added the column). Down has nothing to undo: 35's down drops it.
		goose.NewGoMigration(36, &goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
			return backfillVersionKeys(ctx, tx, rebind)
		}}, nil),
	}
}

// backfillVersionKeys sets each device's version_key (herald.VersionKey)
// from its app version: one update a distinct version, of which an app
// has a few dozen.
func backfillVersionKeys(ctx context.Context, tx *sql.Tx, rebind func(string) string) error {
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT app_source_version FROM devices`)
	if err != nil {
		return err
	}
	var versions []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return err
		}
		versions = append(versions, v)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, v := range versions {
		if k := herald.VersionKey(v); k != "" {
			if _, err := tx.ExecContext(ctx, rebind(`UPDATE devices SET version_key = ? WHERE app_source_version = ?`), k, v); err != nil {
				return fmt.Errorf("version key of %q: %w", v, err)
			}
		}
	}
	return nil
}

// backfillPage is how many users backfillConsentClocks reads at a time.
const backfillPage = 1000

// backfillConsentClocks gives consent stored before the consent trail
// existed a clock: without one, its user would never be listed as due for
// re-confirmation. It is taken as given when the user (or the device) was
// registered, the earliest it can have been, so the estimate errs towards
// asking early; the user is due when herald.ConsentDueAt says, on the
// app's calendar, as for every confirmation since.
func backfillConsentClocks(ctx context.Context, tx *sql.Tx, rebind func(string) string) error {
	if _, err := tx.ExecContext(ctx, `UPDATE devices SET consent_confirmed_at = created_at
		WHERE consent_confirmed_at IS NULL AND marketing`); err != nil {
		return err
	}
	set, err := tx.PrepareContext(ctx, rebind(`UPDATE users SET consent_confirmed_at = ?, consent_due_at = ?
		WHERE app_id = ? AND user_id = ?`))
	if err != nil {
		return err
	}
	defer set.Close()
	// Each page is set before the next is read, so the next no longer
	// holds it; users of an app that is gone are never selected.
	for {
		page, err := unclockedUsers(ctx, tx, rebind)
		if err != nil || len(page) == 0 {
			return err
		}
		for _, u := range page {
			due := herald.ConsentDueAt(u.created, herald.App{TimeZone: u.timeZone}.Location())
			if _, err := set.ExecContext(ctx, u.created.UnixMilli(), due.UnixMilli(), u.appID, u.userID); err != nil {
				return fmt.Errorf("consent clock of user %q of app %s: %w", u.userID, u.appID, err)
			}
		}
	}
}

// unclockedUser is a registered user with marketing consent (its own or a
// device's) and no consent clock.
type unclockedUser struct {
	appID, userID, timeZone string
	created                 time.Time
}

// unclockedUsers reads a page of unclocked users.
func unclockedUsers(ctx context.Context, tx *sql.Tx, rebind func(string) string) ([]unclockedUser, error) {
	rows, err := tx.QueryContext(ctx, rebind(`SELECT u.app_id, u.user_id, a.time_zone, u.created_at
		FROM users u JOIN apps a ON a.id = u.app_id
		WHERE u.consent_confirmed_at IS NULL AND u.state = 'registered'
		AND (u.marketing OR EXISTS (SELECT 1 FROM devices d WHERE d.app_id = u.app_id AND d.user_id = u.user_id AND d.marketing))
		LIMIT ?`), backfillPage)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var page []unclockedUser
	for rows.Next() {
		var u unclockedUser
		var created int64
		if err := rows.Scan(&u.appID, &u.userID, &u.timeZone, &created); err != nil {
			return nil, err
		}
		u.created = time.UnixMilli(created)
		page = append(page, u)
	}
	return page, rows.Err()
}
