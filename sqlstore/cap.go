package sqlstore

import (
	"context"
	"slices"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/retention"
	"github.com/heraldpush/herald/sendstore"
)

// The ledger of frequency caps (herald.MarketingCap): marketing_receipts
// holds a row per (user, push) of a capped marketing push a device of the
// user was sent. A claim is made in the transaction of the step that
// marks the user's send in flight (claimReceipts), with the user's row
// taken first, so that two claims for one user (two pushes, two nodes)
// are made one after the other and the second counts the first.

// claimReceiptSQL inserts a user's receipt of a push unless the user
// already holds as many receipts as the cap allows since either window's
// start; its count of rows says whether it did.
const claimReceiptSQL = `INSERT INTO marketing_receipts (app_id, user_id, push_id, at)
	SELECT CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS BIGINT)
	WHERE (SELECT COUNT(*) FROM marketing_receipts WHERE app_id = ? AND user_id = ? AND at >= ?) < ?
	AND (SELECT COUNT(*) FROM marketing_receipts WHERE app_id = ? AND user_id = ? AND at >= ?) < ?
	ON CONFLICT DO NOTHING`

// reclaimReceiptSQL moves a user's receipt of a push, claimed on an
// earlier day of the app, to now, unless the user's receipts of other
// pushes since either window's start are as many as the cap allows: a
// push reaches a user's other device on a later day (a deferred part, a
// later zone) counts in the day it is sent then, as a push first sent
// then would; its count of rows says whether it did.
const reclaimReceiptSQL = `UPDATE marketing_receipts SET at = CAST(? AS BIGINT)
	WHERE app_id = ? AND user_id = ? AND push_id = ?
	AND (SELECT COUNT(*) FROM marketing_receipts o WHERE o.app_id = ? AND o.user_id = ? AND o.push_id <> ? AND o.at >= ?) < ?
	AND (SELECT COUNT(*) FROM marketing_receipts o WHERE o.app_id = ? AND o.user_id = ? AND o.push_id <> ? AND o.at >= ?) < ?`

// claimReceipts claims a receipt of the push for each of the step's
// targets' users that holds none yet, and returns the users refused (at
// the cap). The users' rows are taken in order of id (lockUsers) before
// the ledger is read, so that claims for one user wait for each other.
func claimReceipts(ctx context.Context, c conn, appID, pushID string, st sendstore.ChunkStep) (map[string]bool, error) {
	var users []string
	for _, t := range st.Targets {
		if t.CapUser != "" {
			users = append(users, t.CapUser)
		}
	}
	if st.Cap == nil || len(users) == 0 {
		return nil, nil
	}
	if _, err := lockUsers(ctx, c, appID, users); err != nil {
		return nil, err
	}
	users = distinct(users)
	held, err := heldReceipts(ctx, c, appID, pushID, users)
	if err != nil {
		return nil, err
	}
	cl := st.Cap
	var claim, reclaim []string
	var args, reargs [][]any
	for _, u := range users {
		at, ok := held[u]
		switch {
		case !ok:
			claim = append(claim, u)
			args = append(args, []any{appID, u, pushID, cl.At.UnixMilli(), appID, u, cl.DayStart.UnixMilli(), cl.PerDay,
				appID, u, cl.WeekStart.UnixMilli(), cl.PerWeek})
		case at < cl.DayStart.UnixMilli():
			reclaim = append(reclaim, u)
			reargs = append(reargs, []any{cl.At.UnixMilli(), appID, u, pushID, appID, u, pushID, cl.DayStart.UnixMilli(), cl.PerDay,
				appID, u, pushID, cl.WeekStart.UnixMilli(), cl.PerWeek})
		}
	}
	refused := map[string]bool{}
	for _, q := range []struct {
		sql   string
		users []string
		args  [][]any
	}{{claimReceiptSQL, claim, args}, {reclaimReceiptSQL, reclaim, reargs}} {
		ns, err := c.execMany(ctx, q.sql, q.args)
		if err != nil {
			return nil, err
		}
		for i, n := range ns {
			if n == 0 {
				refused[q.users[i]] = true
			}
		}
	}
	return refused, nil
}

// heldReceipts returns the users holding a receipt of the push, with its
// time (Unix milliseconds).
func heldReceipts(ctx context.Context, c conn, appID, pushID string, users []string) (map[string]int64, error) {
	held := map[string]int64{}
	for start := 0; start < len(users); start += lookupBatch {
		list, args := paddedIn(pushID, users[start:min(start+lookupBatch, len(users))])
		err := c.each(ctx, func(row scanner) error {
			var u string
			var at int64
			err := row.Scan(&u, &at)
			held[u] = at
			return err
		}, `SELECT user_id, at FROM marketing_receipts WHERE app_id = ? AND push_id = ? AND user_id IN `+list, append([]any{appID}, args...)...)
		if err != nil {
			return nil, err
		}
	}
	return held, nil
}

// CappedUsers returns those of the users at the cap under claim with
// receipts of other pushes and none of this one (see sendstore.Store).
func (s *PushStore) CappedUsers(ctx context.Context, appID, pushID string, userIDs []string, claim herald.CapClaim) (map[string]bool, error) {
	type tally struct {
		day, week int
		own       bool
	}
	since := min(claim.DayStart.UnixMilli(), claim.WeekStart.UnixMilli())
	users := distinct(userIDs)
	tallies := map[string]*tally{}
	for start := 0; start < len(users); start += lookupBatch {
		list, args := paddedIn(appID, users[start:min(start+lookupBatch, len(users))])
		err := s.reader().each(ctx, func(row scanner) error {
			var u, p string
			var at int64
			if err := row.Scan(&u, &p, &at); err != nil {
				return err
			}
			t := tallies[u]
			if t == nil {
				t = &tally{}
				tallies[u] = t
			}
			switch {
			case p == pushID && at >= claim.DayStart.UnixMilli():
				t.own = true
				return nil
			case p == pushID:
				return nil // claimed on an earlier day: moved to today only if today has room (reclaimReceiptSQL)
			case at >= claim.DayStart.UnixMilli():
				t.day++
			}
			if at >= claim.WeekStart.UnixMilli() {
				t.week++
			}
			return nil
		}, `SELECT user_id, push_id, at FROM marketing_receipts WHERE app_id = ? AND user_id IN `+list+` AND at >= ?`,
			append(args, since)...)
		if err != nil {
			return nil, err
		}
	}
	capped := map[string]bool{}
	for u, t := range tallies {
		if !t.own && claim.Refuses(t.day, t.week) {
			capped[u] = true
		}
	}
	return capped, nil
}

// ReceiptUsers returns the users holding a receipt of the push.
func (s *PushStore) ReceiptUsers(ctx context.Context, pushID string) ([]string, error) {
	return s.userIDs(ctx, `SELECT user_id FROM marketing_receipts WHERE push_id = ? ORDER BY user_id`, pushID)
}

// ReleaseReceipts deletes the push's receipts of the users.
func (s *PushStore) ReleaseReceipts(ctx context.Context, pushID string, userIDs []string) error {
	users := slices.Clone(userIDs)
	slices.Sort(users)
	return s.inBulkTx(ctx, func(c conn) error {
		for start := 0; start < len(users); start += lookupBatch {
			list, args := paddedIn(pushID, users[start:min(start+lookupBatch, len(users))])
			if _, err := c.exec(ctx, `DELETE FROM marketing_receipts WHERE push_id = ? AND user_id IN `+list, args...); err != nil {
				return err
			}
		}
		return nil
	})
}

// PruneReceipts deletes up to limit receipts made before before (see
// retention.Store).
func (s *RetentionStore) PruneReceipts(ctx context.Context, before time.Time, limit int) (retention.Step, error) {
	limit = max(limit, 1)
	var n int64
	held, err := s.retentionTx(ctx, func(c conn) error {
		var err error
		n, err = c.exec(ctx, `DELETE FROM marketing_receipts WHERE (app_id, user_id, push_id) IN
			(SELECT app_id, user_id, push_id FROM marketing_receipts WHERE at < ? LIMIT ?)`, before.UnixMilli(), limit)
		return err
	})
	return retention.Step{Deleted: retention.Deleted{retention.RetainedReceipts: n}, More: n == int64(limit), Held: held}, err
}
