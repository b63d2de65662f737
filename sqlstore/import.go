package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/heraldpush/herald"
)

// importUser is what an import needs of a user, read once per batch and
// kept current as the batch's entries are applied in order.
type importUser struct {
	registered bool
	consent    herald.Consent
	seq        int64 // the seq of the user's last record
	confirmed  sql.NullInt64
	due        sql.NullInt64
	last       sql.NullInt64 // the time of the user's latest record
	imports    []importedPair
	devices    []importDevice
}

type importedPair struct {
	at   int64
	pair herald.Consent
}

type importDevice struct {
	id      string
	consent herald.Consent
}

// importBatch is the writes of one import, made at its end in a few
// batched statements: an import of 1,000 users costs a handful of round
// trips rather than ten per user.
type importBatch struct {
	users, trail, pairs, clocks [][]any
}

// ImportConsent records consent collected before Herald. The batch's
// users, their latest records, earlier imports and devices are read in a
// few queries, each entry is judged in order against them, and the writes
// go out together; a user changed by another writer meanwhile (its seq
// moved) makes the transaction run again.
func (s *ConsentStore) ImportConsent(ctx context.Context, appID string, entries []herald.ConsentImport, now time.Time) (int, []herald.ImportSkip, error) {
	var imported int
	var skipped []herald.ImportSkip
	err := s.inTxRetry(ctx, false, func(c conn) error {
		imported, skipped = 0, []herald.ImportSkip{}
		app, err := consentAppOf(ctx, c, appID)
		if err != nil {
			return err
		}
		users, err := importUsers(ctx, c, appID, entries)
		if err != nil {
			return err
		}
		read := map[string]int64{}
		for id, u := range users {
			read[id] = u.seq
		}
		var w importBatch
		for _, e := range entries {
			if reason := importEntry(&w, app, appID, users[e.UserID], e, now); reason != "" {
				skipped = append(skipped, herald.ImportSkip{UserID: e.UserID, Reason: reason})
				continue
			}
			imported++
		}
		return w.write(ctx, c, appID, users, read)
	})
	return imported, skipped, err
}

// importEntry judges one entry against its user (nil when unknown) and,
// unless it returns why it is skipped, applies it to the user and adds
// its writes to w: the user's pair and clock, one record for the user and
// one for each device whose pair changes (which takes the user's clock).
func importEntry(w *importBatch, app consentApp, appID string, u *importUser, e herald.ConsentImport, now time.Time) string {
	switch {
	case u == nil:
		return herald.SkipUnknownUser
	case !u.registered:
		return herald.SkipWithdrawnUser
	}
	if reason := herald.ImportSkipReason(e, now, fromMS(u.last)); reason != "" {
		return reason
	}
	next := e.Consent
	at := e.At.UnixMilli()
	for _, p := range u.imports {
		if p.at == at && p.pair == next {
			return herald.SkipImported // a file imported again
		}
	}
	rec := herald.ConsentImported(u.consent, next, e.At)
	if rec.Confirms && (!u.confirmed.Valid || u.confirmed.Int64 <= at) {
		u.confirmed = sql.NullInt64{Int64: at, Valid: true}
		u.due = sql.NullInt64{Int64: herald.ConsentDueAt(e.At, app.loc).UnixMilli(), Valid: true}
	}
	u.seq++
	w.trail = append(w.trail, []any{appID, e.UserID, u.seq, nil, at, rec.Source, rec.From.Marketing, rec.To.Marketing,
		rec.From.MarketingNight, rec.To.MarketingNight})
	for i, d := range u.devices {
		adopted, changed := herald.ConsentAdopted(herald.SourceImport, d.consent, next, e.At)
		if !changed {
			continue
		}
		u.seq++
		w.trail = append(w.trail, []any{appID, e.UserID, u.seq, d.id, at, adopted.Source, adopted.From.Marketing, adopted.To.Marketing,
			adopted.From.MarketingNight, adopted.To.MarketingNight})
		w.pairs = append(w.pairs, []any{next.Marketing, next.MarketingNight, appID, d.id})
		if next.Marketing {
			w.clocks = append(w.clocks, []any{u.confirmed, appID, d.id})
		}
		u.devices[i].consent = next
	}
	u.consent, u.last = next, sql.NullInt64{Int64: max(at, u.last.Int64), Valid: true}
	u.imports = append(u.imports, importedPair{at, next})
	return ""
}

// write makes the batch's writes; each user's row is written once, with
// its final state, guarded by the seq read at the start.
func (w importBatch) write(ctx context.Context, c conn, appID string, users map[string]*importUser, read map[string]int64) error {
	for id, u := range users {
		if u.seq != read[id] {
			w.users = append(w.users, []any{u.consent.Marketing, u.consent.MarketingNight, true, u.seq, u.confirmed, u.due, appID, id, read[id]})
		}
	}
	ns, err := c.execMany(ctx, `UPDATE users SET marketing = ?, marketing_night = ?, consent_set = ?, consent_seq = ?,
		consent_confirmed_at = ?, consent_due_at = ? WHERE app_id = ? AND user_id = ? AND consent_seq = ?`, w.users)
	if err != nil {
		return err
	}
	for _, n := range ns {
		if n != 1 {
			return errConflict
		}
	}
	for _, q := range []struct {
		sql  string
		args [][]any
	}{
		{`INSERT INTO consent_changes (app_id, user_id, seq, device_id, at, source, marketing_from, marketing_to, night_from, night_to)
			VALUES (?,?,?,?,?,?,?,?,?,?)`, w.trail},
		{`UPDATE devices SET marketing = ?, marketing_night = ? WHERE app_id = ? AND device_id = ?`, w.pairs},
		{`UPDATE devices SET consent_confirmed_at = ? WHERE app_id = ? AND device_id = ?`, w.clocks},
	} {
		if _, err := c.execMany(ctx, q.sql, q.args); err != nil {
			return err
		}
	}
	return nil
}

// importUsers reads the entries' users (those registered or withdrawn),
// with their latest record, earlier imports and devices.
func importUsers(ctx context.Context, c conn, appID string, entries []herald.ConsentImport) (map[string]*importUser, error) {
	seen := map[string]bool{}
	var ids []string
	for _, e := range entries {
		if !seen[e.UserID] {
			seen[e.UserID] = true
			ids = append(ids, e.UserID)
		}
	}
	users := map[string]*importUser{}
	const part = 500
	for start := 0; start < len(ids); start += part {
		args := []any{appID}
		for _, id := range ids[start:min(start+part, len(ids))] {
			args = append(args, id)
		}
		in := ` IN (` + placeholders(len(args)-1) + `)`
		if err := readImportUsers(ctx, c, users, in, args); err != nil {
			return nil, err
		}
	}
	return users, nil
}

// readImportUsers reads one part of the users (user_id IN in).
func readImportUsers(ctx context.Context, c conn, users map[string]*importUser, in string, args []any) error {
	err := c.each(ctx, func(row scanner) error {
		var id, state string
		u := &importUser{}
		err := row.Scan(&id, &state, &u.consent.Marketing, &u.consent.MarketingNight, &u.seq, &u.confirmed, &u.due)
		u.registered, users[id] = state == string(herald.UserRegistered), u
		return err
	}, `SELECT user_id, state, marketing, marketing_night, consent_seq, consent_confirmed_at, consent_due_at FROM users
		WHERE app_id = ? AND user_id`+in, args...)
	if err != nil {
		return err
	}
	err = c.each(ctx, func(row scanner) error {
		var id, source string
		var at int64
		var deviceID sql.NullString
		var to herald.Consent
		if err := row.Scan(&id, &at, &source, &deviceID, &to.Marketing, &to.MarketingNight); err != nil {
			return err
		}
		u := users[id]
		if u == nil {
			return nil
		}
		if !u.last.Valid || at > u.last.Int64 {
			u.last = sql.NullInt64{Int64: at, Valid: true}
		}
		if source == string(herald.SourceImport) && !deviceID.Valid {
			u.imports = append(u.imports, importedPair{at, to})
		}
		return nil
	}, `SELECT user_id, at, source, device_id, marketing_to, night_to FROM consent_changes
		WHERE app_id = ? AND user_id`+in, args...)
	if err != nil {
		return err
	}
	return c.each(ctx, func(row scanner) error {
		var id string
		var d importDevice
		if err := row.Scan(&id, &d.id, &d.consent.Marketing, &d.consent.MarketingNight); err != nil {
			return err
		}
		if u := users[id]; u != nil {
			u.devices = append(u.devices, d)
		}
		return nil
	}, `SELECT user_id, device_id, marketing, marketing_night FROM devices WHERE app_id = ? AND user_id`+in+`
		ORDER BY created_at, device_id`, args...)
}
