package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
)

// StartSending records a page of a push's fan-out: each chunk's slots in
// one row, rows only for the deliveries final already, the cursor moved
// to where the page ends. The push counts the fan-out as one of its open
// chunks until its last page, so no chunk completed meanwhile queues the
// finish early.
func (s *PushStore) StartSending(ctx context.Context, pushID string, f sendstore.Fanout) (bool, error) {
	started := false
	err := s.inBulkTx(ctx, func(c conn) error {
		started = false // the transaction may run again
		chunks, final := chunkSlots(f.Deliveries)
		held := 0 // the fan-out's own hold, kept while more pages follow
		if f.More {
			held = 1
		}
		to := f.To.After
		cursor := []any{!f.More, to.Mapped, to.UserID, to.DeviceID, f.To.Seq, f.To.Chunk, s.Now().UnixMilli(), f.LateLocal}
		const moveCursor = `fanout_done = ?, fanout_mapped = ?, fanout_user = ?, fanout_device = ?, fanout_seq = ?, fanout_chunk = ?,
			fanout_at = ?, late_local = late_local + ?`
		var open int
		var appID string
		var err error
		if f.From.Start() {
			// Claim the fan-out first: of several at once, one moves the
			// push out of waiting; the others change nothing.
			err = c.queryRow(ctx, `UPDATE pushes SET status = 'sending', started_at = ?, open_chunks = ?, spread_users = ?, `+moveCursor+`
				WHERE id = ? AND started_at IS NULL AND status IN (`+inList(herald.FanoutStatuses)+`) RETURNING open_chunks, app_id`,
				append(append([]any{s.Now().UnixMilli(), len(chunks) + held, f.SpreadUsers}, cursor...), pushID)...).Scan(&open, &appID)
		} else {
			from := f.From.After
			err = c.queryRow(ctx, `UPDATE pushes SET open_chunks = open_chunks + ?, `+moveCursor+`
				WHERE id = ? AND status = 'sending' AND NOT fanout_done AND fanout_mapped = ? AND fanout_user = ?
				AND fanout_device = ? AND fanout_seq = ? AND fanout_chunk = ? RETURNING open_chunks, app_id`,
				append(append([]any{len(chunks) + held - 1}, cursor...), pushID, from.Mapped, from.UserID, from.DeviceID,
					f.From.Seq, f.From.Chunk)...).Scan(&open, &appID)
		}
		if errors.Is(err, herald.ErrNotFound) {
			_, err := pushStatus(ctx, c, pushID) // ErrNotFound for an unknown push
			return err
		} else if err != nil {
			return err
		}
		if err := insertDeliveries(ctx, c, pushID, s.Now(), final); err != nil {
			return err
		}
		if err := s.insertChunks(ctx, c, pushID, chunks); err != nil {
			return err
		}
		if err := recordUserPushes(ctx, c, appID, pushID, final); err != nil {
			return err
		}
		if err := recordDeferred(ctx, c, pushID, f.Deferred); err != nil {
			return err
		}
		if f.To.Users != f.From.Users {
			if err := recordTargets(ctx, c, pushID, f); err != nil {
				return err
			}
		}
		started = true
		jobs := f.Jobs
		if open == 0 && f.Finish != nil {
			jobs = append(slices.Clip(jobs), f.Finish)
		}
		_, err = c.insertJobs(ctx, jobs)
		return err
	})
	return started, err
}

// FanoutProgress returns where a push's fan-out stands, and whether it has
// ended. The users targeted so far are the push's requested users when
// its kind counts the users its fan-out finds (herald.KindRule).
func (s *PushStore) FanoutProgress(ctx context.Context, pushID string) (sendstore.FanoutCursor, bool, error) {
	var f sendstore.FanoutCursor
	var done bool
	var p herald.Push // its kind and token, for its rule
	var users int
	err := s.reader().queryRow(ctx, `SELECT fanout_done, fanout_mapped, fanout_user, fanout_device, fanout_seq, fanout_chunk,
		kind, token, requested_users FROM pushes WHERE id = ?`, pushID).Scan(
		&done, &f.After.Mapped, &f.After.UserID, &f.After.DeviceID, &f.Seq, &f.Chunk, &p.Kind, &p.Token, &users)
	if p.Rule().CountsUsers {
		f.Users = users
	}
	return f, done, err
}

// chunkSlots splits a fan-out's deliveries into each chunk's slots, in
// order of seq, and the deliveries final already.
func chunkSlots(ds []herald.Delivery) (map[int][]herald.Delivery, []herald.Delivery) {
	chunks := map[int][]herald.Delivery{}
	var final []herald.Delivery
	for _, d := range ds {
		if d.State.Final() {
			final = append(final, d)
		} else {
			chunks[d.Chunk] = append(chunks[d.Chunk], d)
		}
	}
	for _, slots := range chunks {
		slices.SortFunc(slots, bySeq)
	}
	return chunks, final
}

func bySeq(a, b herald.Delivery) int { return cmp.Compare(a.Seq, b.Seq) }

// insertDeliveries writes deliveries as rows, each once: a final outcome
// that is not a first send, recorded at (a sent one's sentAt).
func insertDeliveries(ctx context.Context, c conn, pushID string, at time.Time, ds []herald.Delivery) error {
	args := make([][]any, len(ds))
	for i, d := range ds {
		args[i] = []any{pushID, d.Seq, d.RecipientIdx, d.UserID, d.DeviceID, d.Token, d.Platform, d.AppSourceVersion,
			d.TokenUpdatedAt.UnixMilli(), d.Chunk, d.State, d.Reason, d.Error, d.Attempts, d.Resent, d.OldForBadge, d.OldForImage,
			at.UnixMilli()}
	}
	_, err := c.execMany(ctx, `INSERT INTO deliveries (push_id, seq, recipient_idx, user_id, device_id, token, platform,
		app_source_version, token_updated_at, chunk, state, reason, error, attempts, resent, old_for_badge, old_for_image, at)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, args)
	return err
}

// insertChunks records chunks of a push, each its slots (by number) and
// its users: the users column, a JSON array of the distinct users its
// slots hold, and what the engine finds a user's chunks by besides
// (UserChunksWriter). A chunk of unmapped devices alone has no users.
func (s *PushStore) insertChunks(ctx context.Context, c conn, pushID string, chunks map[int][]herald.Delivery) error {
	rows := make([][]any, 0, len(chunks))
	var found [][]any
	for chunk, slots := range chunks {
		var column any
		if users := distinctUsers(slots); len(users) > 0 {
			b, _ := json.Marshal(users) // a []string always marshals
			column = string(b)
			if s.chunkUsers != nil {
				found = append(found, s.chunkUsers.ChunkUsersArgs(pushID, chunk, users))
			}
		}
		rows = append(rows, []any{pushID, chunk, len(slots), encodeSlots(slots), column})
	}
	if _, err := c.execMany(ctx, `INSERT INTO push_chunks (push_id, chunk, size, slots, users) VALUES (?, ?, ?, ?, ?)`, rows); err != nil {
		return err
	}
	if len(found) == 0 {
		return nil
	}
	_, err := c.execMany(ctx, s.chunkUsers.ChunkUsersInsert(), found)
	return err
}

// distinctUsers returns the users of slots, each once, in slot order.
func distinctUsers(slots []herald.Delivery) []string {
	seen := make(map[string]bool, len(slots))
	users := make([]string, 0, len(slots))
	for _, d := range slots {
		if d.UserID != "" && !seen[d.UserID] {
			seen[d.UserID] = true
			users = append(users, d.UserID)
		}
	}
	return users
}

// recordUserPushes notes, for a user's export, the chunks that hold the
// users' deliveries of the push that are rows already (final at the
// fan-out): a row per user and chunk. The users of a chunk's slots are
// its users column.
func recordUserPushes(ctx context.Context, c conn, appID, pushID string, ds []herald.Delivery) error {
	type key struct {
		user  string
		chunk int
	}
	seen := make(map[key]bool, len(ds))
	var rows [][]any
	for _, d := range ds {
		k := key{d.UserID, d.Chunk}
		if d.UserID == "" || seen[k] {
			continue
		}
		seen[k] = true
		rows = append(rows, []any{appID, d.UserID, pushID, d.Chunk})
	}
	return insertRows(ctx, c, `INSERT INTO user_pushes (app_id, user_id, push_id, chunk) VALUES `, ` ON CONFLICT DO NOTHING`, rows)
}

// rowsPerInsert is how many rows insertRows writes a statement.
const rowsPerInsert = 100

// insertRows runs insert (ending in VALUES) with rows, rowsPerInsert rows
// a statement, then tail: a row costs a statement's round trip no more.
// Every row has as many values.
func insertRows(ctx context.Context, c conn, insert, tail string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	one := "(" + placeholders(len(rows[0])) + ")"
	for start := 0; start < len(rows); start += rowsPerInsert {
		batch := rows[start:min(start+rowsPerInsert, len(rows))]
		args := make([]any, 0, len(batch)*len(rows[0]))
		for _, r := range batch {
			args = append(args, r...)
		}
		if _, err := c.exec(ctx, insert+strings.TrimSuffix(strings.Repeat(one+",", len(batch)), ",")+tail, args...); err != nil {
			return err
		}
	}
	return nil
}

// recordTargets counts the users a page of a topic or all-users push
// targets with the push, and writes the charge for this page's new ones
// as given (f.Charge).
func recordTargets(ctx context.Context, c conn, pushID string, f sendstore.Fanout) error {
	if _, err := c.exec(ctx, `UPDATE pushes SET requested_users = ?, server_actions_half = server_actions_half + ?
		WHERE id = ?`, f.To.Users, f.Charge.Half, pushID); err != nil {
		return err
	}
	return insertUsage(ctx, c, f.Charge.Ledger)
}

const deliveryColumns = `seq, recipient_idx, user_id, device_id, token, platform, app_source_version, token_updated_at, chunk,
	state, reason, error, attempts, resent, old_for_badge, old_for_image, at`

// rows returns the delivery rows where holds, by seq. The order is made
// here, not by ORDER BY, which SQLite would serve by walking the primary
// key instead of the index that where names.
func (s *PushStore) rows(ctx context.Context, where string, args ...any) ([]herald.Delivery, error) {
	var out []herald.Delivery
	err := s.reader().each(ctx, func(row scanner) error {
		d, err := scanDelivery(row)
		out = append(out, d)
		return err
	}, `SELECT `+deliveryColumns+` FROM deliveries WHERE `+where, args...)
	slices.SortFunc(out, bySeq)
	return out, err
}

func scanDelivery(row scanner) (herald.Delivery, error) {
	var d herald.Delivery
	var updated int64
	var at sql.NullInt64
	err := row.Scan(&d.Seq, &d.RecipientIdx, &d.UserID, &d.DeviceID, &d.Token, &d.Platform, &d.AppSourceVersion,
		&updated, &d.Chunk, &d.State, &d.Reason, &d.Error, &d.Attempts, &d.Resent, &d.OldForBadge, &d.OldForImage, &at)
	d.TokenUpdatedAt = time.UnixMilli(updated).UTC()
	if at.Valid && d.State == herald.DeliverySent {
		d.SentAt = time.UnixMilli(at.Int64).UTC()
	}
	return d, err
}

// CompleteChunk marks a chunk finished and reports whether the push is
// left to finish. Each chunk is completed once (guarded on done being
// false), and the push's count of open chunks is decremented with
// RETURNING, so exactly one completion sees zero, however many run at
// once. The push's row is written before its chunk's, the order every
// path that writes both keeps (see lockPush); a completion that finds its
// chunk done already undoes its decrement by rolling back, and reports
// the push left to finish when nothing of it is open and it has not
// finished: a run after a crash between the last completion and the
// finish finishes it then.
func (s *PushStore) CompleteChunk(ctx context.Context, pushID string, chunk int) (bool, error) {
	var open int
	err := s.inBulkTx(ctx, func(c conn) error {
		if err := c.queryRow(ctx, `UPDATE pushes SET open_chunks = open_chunks - 1 WHERE id = ? RETURNING open_chunks`,
			pushID).Scan(&open); err != nil {
			return err
		}
		n, err := c.exec(ctx, `UPDATE push_chunks SET done = TRUE WHERE push_id = ? AND chunk = ? AND done = FALSE`, pushID, chunk)
		if err == nil && n == 0 {
			return errChunkDone
		}
		return err
	})
	if errors.Is(err, errChunkDone) {
		// Completed before a crash, or the push failed (its finish job
		// is on its way).
		var left bool
		err = s.reader().queryRow(ctx, `SELECT open_chunks = 0 AND finished_at IS NULL FROM pushes WHERE id = ?`, pushID).Scan(&left)
		return left, err
	}
	return err == nil && open == 0, err
}

// errChunkDone rolls back a completion of a chunk completed already.
var errChunkDone = errors.New("sqlstore: chunk completed already")

// FailPush ends a push that cannot be sent (herald.StepFail): its chunks
// are closed and finish queued. A push no longer sending is left as it
// is.
func (s *PushStore) FailPush(ctx context.Context, pushID, reason string, finish herald.Job) error {
	return s.inBulkTx(ctx, func(c conn) error {
		status, err := pushStatus(ctx, c, pushID)
		if err != nil {
			return err
		}
		next, e, err := herald.Push{ID: pushID, Status: status}.Apply(herald.PushStep{Kind: herald.StepFail, Reason: reason, Job: finish}, herald.PushFacts{})
		if errors.Is(err, herald.ErrBadStep) {
			return nil
		} else if err != nil {
			return err
		}
		n, err := c.exec(ctx, `UPDATE pushes SET status = ?, failure_reason = ?, open_chunks = 0 WHERE id = ? AND status = ?`,
			next.Status, next.FailureReason, pushID, status)
		if err != nil || n == 0 {
			return err
		}
		if err := streamFailed(ctx, c, pushID, next.FailureReason, s.Now()); err != nil {
			return err
		}
		if _, err := c.exec(ctx, `UPDATE push_chunks SET done = TRUE, failed = TRUE WHERE push_id = ?`, pushID); err != nil {
			return err
		}
		_, err = c.insertJobs(ctx, e.Jobs)
		return err
	})
}

// streamFailed queues a push.failed event, with the push's failure
// reason, for each slot of the push that its failure leaves unsettled (in
// flight or not yet sent: from the cursor of each chunk still open), when
// its app takes push.failed. It runs in FailPush's transaction before the
// chunks are closed, so the slots it reads are those the failure ends:
// each slot is settled exactly once, by a send window or by this.
func streamFailed(ctx context.Context, c conn, pushID, reason string, now time.Time) error {
	var app herald.App
	var appID string
	var group, events sql.NullString
	if err := c.queryRow(ctx, `SELECT p.app_id, p.request_group_id, a.webhook_url, a.webhook_events FROM pushes p
		JOIN apps a ON a.id = p.app_id WHERE p.id = ?`, pushID).Scan(&appID, &group, &app.WebhookURL, &events); err != nil {
		return err
	}
	if events.Valid {
		if err := json.Unmarshal([]byte(events.String), &app.WebhookEvents); err != nil {
			return err
		}
	}
	if !app.Takes(herald.WebhookFailed) {
		return nil
	}
	var failed []herald.DeliveryEvent
	err := c.each(ctx, func(row scanner) error {
		k, err := scanChunk(row)
		if err != nil {
			return err
		}
		slots, err := k.decode()
		if err != nil {
			return err
		}
		for _, d := range slots[k.settled:] {
			failed = append(failed, herald.DeliveryEvent{AppID: appID, Type: herald.WebhookFailed, PushID: pushID,
				RequestGroupID: group.String, UserID: d.UserID, DeviceID: d.DeviceID, TokenSuffix: herald.TokenSuffix(d.Token),
				Reason: reason, At: now})
		}
		return nil
	}, `SELECT `+chunkColumns+` FROM push_chunks WHERE push_id = ? AND done = FALSE ORDER BY chunk`, pushID)
	if err != nil {
		return err
	}
	return queueEvents(ctx, c, failed, now)
}

// FinishPush records the unreachable users and the push's end. The end is
// a guarded write (finished_at still unset), made first, so of several
// finishes at once exactly one records anything and queues the webhooks.
func (s *PushStore) FinishPush(ctx context.Context, pushID string, unreachable []herald.Unreachable, follow []herald.Job) (bool, error) {
	finished := false
	err := s.inBulkTx(ctx, func(c conn) error {
		finished = false // the transaction may run again
		p, err := scanPush(c.queryRow(ctx, `SELECT `+pushColumns+` FROM pushes WHERE id = ?`, pushID))
		if err != nil {
			return err
		}
		// Held: its release queues the finish again; finished already, or
		// in no status a finish ends: nothing to do.
		next, _, err := p.Apply(herald.PushStep{Kind: herald.StepFinish, At: s.Now()}, herald.PushFacts{})
		switch {
		case errors.Is(err, herald.ErrPushHeld), errors.Is(err, herald.ErrPushFinished), errors.Is(err, herald.ErrBadStep):
			return nil
		case err != nil:
			return err
		}
		n, err := c.exec(ctx, `UPDATE pushes SET status = ?, finished_at = ?, started_at = ?
			WHERE id = ? AND status = ? AND finished_at IS NULL`, next.Status, ms(next.FinishedAt), ms(next.StartedAt), pushID, p.Status)
		if err != nil || n == 0 {
			return err // on no row: finished already (or its status moved: the next finish judges it)
		}
		args := make([][]any, len(unreachable))
		for i, u := range unreachable {
			args[i] = []any{pushID, u.UserID, u.Reason}
		}
		if _, err := c.execMany(ctx, `INSERT INTO unreachable (push_id, user_id, reason) VALUES (?,?,?) ON CONFLICT DO NOTHING`, args); err != nil {
			return err
		}
		// Every send is recorded by now: events pending on one recorded
		// sent count, the others never will.
		if err := promoteReady(ctx, c, pushID, true, s.Now()); err != nil {
			return err
		}
		finished = true
		_, err = c.insertJobs(ctx, follow)
		return err
	})
	return finished, err
}
