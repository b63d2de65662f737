package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/heraldpush/herald"
)

// storedPush is a push as a step reads it: the push, its job, and what
// the step's guarded write compares (the version).
type storedPush struct {
	herald.Push
	jobID    sql.NullInt64
	heldFrom sql.NullString
	open     int
	// The version: every step that changes the push changes one of them.
	edits       string
	scheduledAt sql.NullInt64
	startedAt   sql.NullInt64
}

// loadPush reads a push for a step inside a transaction.
func loadPush(ctx context.Context, c conn, id string) (storedPush, error) {
	var sp storedPush
	var err error
	sp.Push, err = scanPush(c.queryRow(ctx, `SELECT `+pushColumns+`, job_id, held_from, open_chunks, edits, scheduled_at, started_at
		FROM pushes WHERE id = ?`, id), &sp.jobID, &sp.heldFrom, &sp.open, &sp.edits, &sp.scheduledAt, &sp.startedAt)
	return sp, err
}

// facts reads what the step needs besides the push: its ledger for a
// cancel, its deferred chunks for the cancel of a deferring sending push.
func (sp storedPush) facts(ctx context.Context, c conn, st herald.PushStep) (herald.PushFacts, error) {
	f := herald.PushFacts{OpenChunks: sp.open}
	if sp.heldFrom.Valid {
		f.HeldFrom = herald.PushStatus(sp.heldFrom.String)
	}
	if st.Kind != herald.StepCancel {
		return f, nil
	}
	var err error
	if f.Ledger, err = usageOf(ctx, c, sp.ID); err != nil {
		return f, err
	}
	if sp.Status == herald.StatusSending && sp.NightPolicy == herald.NightDefer {
		f.Deferred, err = deferredParts(ctx, c, sp.ID)
	}
	return f, err
}

// StepPush applies one step to a push (herald.Push.Apply) and persists
// the push and the step's effects in one transaction. The push's write is
// guarded on the push as it was read (status, send time, start, edits,
// charge and open chunks): of steps racing each other, or the fan-out,
// one wins and the others run again on what it left, where Apply judges
// them anew.
func (s *PushStore) StepPush(ctx context.Context, pushID string, st herald.PushStep) (herald.Push, herald.PushEffects, error) {
	var next herald.Push
	var e herald.PushEffects
	err := s.inTxRetry(ctx, false, func(c conn) error {
		sp, err := loadPush(ctx, c, pushID)
		if err != nil {
			return err
		}
		f, err := sp.facts(ctx, c, st)
		if err != nil {
			return err
		}
		if next, e, err = sp.Apply(st, f); err != nil {
			return err
		}
		if err := persistPush(ctx, c, sp, next, len(e.Suppress)); err != nil {
			return err
		}
		return persistEffects(ctx, c, sp, s.Now(), e)
	})
	if err != nil {
		return herald.Push{}, herald.PushEffects{}, err
	}
	return next, e, nil
}

// persistPush writes the push's row after a step, guarded on its version;
// closed chunks leave the open count.
func persistPush(ctx context.Context, c conn, sp storedPush, p herald.Push, closed int) error {
	edits, err := json.Marshal(p.Edits)
	if err != nil {
		return err
	}
	var heldFrom any // the status a release gives back
	switch {
	case p.Status == herald.StatusHeld && sp.Status == herald.StatusHeld:
		heldFrom = sp.heldFrom
	case p.Status == herald.StatusHeld:
		heldFrom = sp.Status
	}
	return guard(c.exec(ctx, `UPDATE pushes SET status = ?, held_from = ?, failure_reason = ?, title = ?, content = ?, link_url = ?,
		image_url = ?, badge = ?, marketing = ?, ad_footer = ?, localized = ?, scheduled_at = ?, started_at = ?, finished_at = ?, edits = ?,
		server_actions_half = ?, open_chunks = ?, approvals = ?
		WHERE id = ? AND status = ? AND edits = ? AND scheduled_at IS NOT DISTINCT FROM ? AND started_at IS NOT DISTINCT FROM ?
		AND server_actions_half = ? AND open_chunks = ?`,
		p.Status, heldFrom, p.FailureReason, p.Content.Title, p.Content.Content, p.Content.LinkURL, p.Content.ImageURL, p.Badge,
		p.Marketing, p.AdFooter, localizedColumn(p.Localized), ms(p.ScheduledAt), ms(p.StartedAt), ms(p.FinishedAt), string(edits), p.ServerActionsHalf,
		sp.open-closed, approvalsColumn(p.Approvals), sp.ID, sp.Status, sp.edits, sp.scheduledAt, sp.startedAt, sp.ServerActionsHalf, sp.open))
}

// persistEffects makes a step's writes besides the push's row: the
// deferred chunks it suppressed (after the push's row, the order every
// path that writes both keeps), its rows (recorded at now), ledger
// entries and jobs.
func persistEffects(ctx context.Context, c conn, sp storedPush, now time.Time, e herald.PushEffects) error {
	for _, chunk := range e.Suppress {
		if err := guard(c.exec(ctx, `UPDATE push_chunks SET settled = size, marked = size, done = TRUE
			WHERE push_id = ? AND chunk = ? AND settled = 0 AND marked = 0 AND done = FALSE`, sp.ID, chunk)); err != nil {
			return err
		}
	}
	if err := insertDeliveries(ctx, c, sp.ID, now, e.Rows); err != nil {
		return err
	}
	if err := insertUsage(ctx, c, e.Usage); err != nil {
		return err
	}
	switch {
	case e.ReplaceJob != nil:
		if err := replaceJob(ctx, c, sp.ID, sp.jobID, e.ReplaceJob); err != nil {
			return err
		}
	case e.CancelJob && sp.jobID.Valid:
		if err := c.cancelJob(ctx, sp.jobID.Int64); err != nil {
			return err
		}
	}
	_, err := c.insertJobs(ctx, e.Jobs)
	return err
}

// replaceJob cancels a push's job (when it has one) and inserts job in its
// place.
func replaceJob(ctx context.Context, c conn, pushID string, old sql.NullInt64, job herald.Job) error {
	if old.Valid {
		if err := c.cancelJob(ctx, old.Int64); err != nil {
			return err
		}
	}
	ids, err := c.insertJobs(ctx, []herald.Job{job})
	if err != nil {
		return err
	}
	_, err = c.exec(ctx, `UPDATE pushes SET job_id = ? WHERE id = ?`, ids[0], pushID)
	return err
}

// usageOf returns a push's ledger entries.
func usageOf(ctx context.Context, c conn, pushID string) ([]herald.UsageEntry, error) {
	var out []herald.UsageEntry
	err := c.each(ctx, func(row scanner) error {
		var e herald.UsageEntry
		var at int64
		if err := row.Scan(&e.AppID, &e.PushID, &e.Day, &e.Half, &at); err != nil {
			return err
		}
		e.At = time.UnixMilli(at).UTC()
		out = append(out, e)
		return nil
	}, `SELECT app_id, push_id, day, half_units, created_at FROM usage WHERE push_id = ? ORDER BY id`, pushID)
	return out, err
}

// deferredParts reads a push's deferred chunks that are not done, each
// with its slots still to send.
func deferredParts(ctx context.Context, c conn, pushID string) ([]herald.DeferredPart, error) {
	var stored []storedChunk
	var out []herald.DeferredPart
	err := c.each(ctx, func(row scanner) error {
		var ch storedChunk
		var d herald.DeferredPart
		var until int64
		err := row.Scan(&ch.chunk, &ch.size, &ch.settled, &ch.marked, &ch.failed, &ch.slots, &until, &d.RefundHalf)
		d.Chunk, d.Until, d.Begun = ch.chunk, time.UnixMilli(until).UTC(), ch.settled > 0 || ch.marked > 0
		stored, out = append(stored, ch), append(out, d)
		return err
	}, `SELECT `+chunkColumns+`, deferred_until, refund_half FROM push_chunks
		WHERE push_id = ? AND deferred_until IS NOT NULL AND zone_part = FALSE AND done = FALSE ORDER BY chunk`, pushID)
	if err != nil {
		return nil, err
	}
	for i, ch := range stored {
		if out[i].Slots, err = ch.decode(); err != nil {
			return nil, err
		}
	}
	return out, nil
}
