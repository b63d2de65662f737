package sqlstore

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/retention"
)

// StreamStore keeps each app's queue of delivery events (table
// delivery_events, DESIGN section 15) and the lease of its dispatcher
// (delivery_event_streams). The events are written by the transactions
// that record what they tell of (queueEvents, queueMarks); this store
// reads, removes and prunes them.
type StreamStore struct{ *core }

var _ herald.EventStreamStore = (*StreamStore)(nil)

// queueColumns are a delivery event's columns as written.
const queueColumns = `app_id, type, push_id, request_group_id, user_id, device_id, token_suffix, reason, at, queued_at`

// maxQueueRows bounds the rows of one insert of events.
const maxQueueRows = 64

// queueEvents inserts events (each with its app, push, type and time) in
// the caller's transaction: one statement for up to maxQueueRows, the
// rows padded with NULL ones (inserted as none) to a power of two, so
// that inserts of any size are a few statements, each prepared once.
func queueEvents(ctx context.Context, c conn, events []herald.DeliveryEvent, queuedAt time.Time) error {
	for start := 0; start < len(events); start += maxQueueRows {
		part := events[start:min(start+maxQueueRows, len(events))]
		n := 4
		for n < len(part) {
			n *= 2
		}
		args := make([]any, 0, 10*n)
		for _, e := range part {
			args = append(args, e.AppID, string(e.Type), e.PushID, e.RequestGroupID, e.UserID, e.DeviceID, e.TokenSuffix,
				e.Reason, e.At.UnixMilli(), queuedAt.UnixMilli())
		}
		for len(args) < 10*n {
			args = append(args, nil)
		}
		_, err := c.exec(ctx, `INSERT INTO delivery_events (`+queueColumns+`)
			SELECT v.column1, v.column2, v.column3, v.column4, v.column5, v.column6, v.column7, v.column8, v.column9, v.column10
			FROM (VALUES `+strings.TrimSuffix(strings.Repeat(`(?, ?, ?, ?, ?, ?, ?, ?, CAST(? AS BIGINT), CAST(? AS BIGINT)),`, n), ",")+`) AS v
			WHERE v.column1 IS NOT NULL`, args...)
		if err != nil {
			return err
		}
	}
	return nil
}

// streamedMark is a device's report recorded now whose event its app
// takes: its push, device, event type and time.
type streamedMark struct {
	pushID, deviceID string
	typ              herald.WebhookEvent
	at               time.Time
}

// queueMarks inserts the events of reports recorded now in the caller's
// transaction, each with its push's request group and its device's user
// and token as they are now, one statement for up to maxQueueRows.
func queueMarks(ctx context.Context, c conn, marks []streamedMark, queuedAt time.Time) error {
	// A device's received before its opened, as they happened (the
	// reports' rows come by type's name).
	slices.SortStableFunc(marks, func(a, b streamedMark) int {
		return cmp.Or(cmp.Compare(a.pushID, b.pushID), cmp.Compare(a.deviceID, b.deviceID),
			cmp.Compare(markRank(a.typ), markRank(b.typ)))
	})
	for start := 0; start < len(marks); start += maxQueueRows {
		part := marks[start:min(start+maxQueueRows, len(marks))]
		args := make([]any, 0, 5*len(part)+1)
		args = append(args, queuedAt.UnixMilli())
		for i, m := range part {
			args = append(args, m.pushID, m.deviceID, string(m.typ), m.at.UnixMilli(), i)
		}
		// Ordered by the values' place: the ids are given in the order
		// the rows are inserted, which a join does not keep.
		_, err := c.exec(ctx, `INSERT INTO delivery_events (`+queueColumns+`)
			SELECT p.app_id, v.column3, p.id, p.request_group_id, COALESCE(d.user_id, ''), v.column2,
				COALESCE(CASE WHEN length(d.token) <= 8 THEN d.token ELSE substr(d.token, length(d.token) - 7) END, ''),
				'', v.column4, CAST(? AS BIGINT)
			FROM (VALUES `+strings.TrimSuffix(strings.Repeat(`(?, ?, ?, CAST(? AS BIGINT), CAST(? AS BIGINT)),`, len(part)), ",")+`) AS v
			JOIN pushes p ON p.id = v.column1
			LEFT JOIN devices d ON d.app_id = p.app_id AND d.device_id = v.column2
			ORDER BY v.column5`, args...)
		if err != nil {
			return err
		}
	}
	return nil
}

// markRank orders a device's reports of one push: received first.
func markRank(t herald.WebhookEvent) int {
	if t == herald.WebhookReceived {
		return 0
	}
	return 1
}

// StreamApps returns the apps that set their webhookEvents: only those
// can have delivery events queued.
func (s *StreamStore) StreamApps(ctx context.Context) ([]string, error) {
	var out []string
	err := s.reader().each(ctx, func(row scanner) error {
		var id string
		err := row.Scan(&id)
		out = append(out, id)
		return err
	}, `SELECT id FROM apps WHERE webhook_events IS NOT NULL ORDER BY id`)
	return out, err
}

// ClaimStream takes the app's stream for holder (see
// herald.EventStreamStore): one upsert, whose guard decides.
func (s *StreamStore) ClaimStream(ctx context.Context, appID, holder string, now, until time.Time) (herald.EventStream, bool, error) {
	var st herald.EventStream
	claimed := false
	err := s.inTx(ctx, func(c conn) error {
		var retry int64
		err := c.queryRow(ctx, `INSERT INTO delivery_event_streams (app_id, holder, held_until) VALUES (?, ?, ?)
			ON CONFLICT (app_id) DO UPDATE SET holder = excluded.holder, held_until = excluded.held_until
			WHERE delivery_event_streams.holder = excluded.holder OR delivery_event_streams.held_until <= ?
			RETURNING failures, retry_at`, appID, holder, until.UnixMilli(), now.UnixMilli()).Scan(&st.Failures, &retry)
		switch {
		case errors.Is(err, herald.ErrNotFound):
			return nil
		case err != nil:
			return err
		}
		claimed, st.RetryAt = true, time.UnixMilli(retry).UTC()
		return nil
	})
	return st, claimed, err
}

// QueueHead reads the oldest event's time queued, and only when it is
// not due yet, whether a full batch waits: the key of the
// MaxEventsPerMessage-th event, read from the index alone.
func (s *StreamStore) QueueHead(ctx context.Context, appID string, now time.Time) (bool, error) {
	var oldest int64
	err := s.reader().queryRow(ctx, `SELECT queued_at FROM delivery_events WHERE app_id = ? ORDER BY id LIMIT 1`, appID).Scan(&oldest)
	switch {
	case errors.Is(err, herald.ErrNotFound):
		return false, nil
	case err != nil:
		return false, err
	case herald.EventsDue(time.UnixMilli(oldest), false, now):
		return true, nil
	}
	var id int64
	err = s.reader().queryRow(ctx, `SELECT id FROM delivery_events WHERE app_id = ? ORDER BY id LIMIT 1 OFFSET ?`,
		appID, herald.MaxEventsPerMessage-1).Scan(&id)
	if errors.Is(err, herald.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// QueuedEvents returns the app's first limit events, in id order.
func (s *StreamStore) QueuedEvents(ctx context.Context, appID string, limit int) ([]herald.DeliveryEvent, error) {
	var out []herald.DeliveryEvent
	err := s.reader().each(ctx, func(row scanner) error {
		var e herald.DeliveryEvent
		var at, queued int64
		err := row.Scan(&e.ID, &e.AppID, &e.Type, &e.PushID, &e.RequestGroupID, &e.UserID, &e.DeviceID, &e.TokenSuffix,
			&e.Reason, &at, &queued)
		e.At, e.QueuedAt = time.UnixMilli(at).UTC(), time.UnixMilli(queued).UTC()
		out = append(out, e)
		return err
	}, `SELECT id, `+queueColumns+` FROM delivery_events WHERE app_id = ? ORDER BY id LIMIT ?`, appID, limit)
	return out, err
}

// SentEvents removes the events sent, by id (an event committed late
// with an id among theirs was not sent, and stays), and clears the
// stream's failures, while holder holds it.
func (s *StreamStore) SentEvents(ctx context.Context, appID, holder string, ids []int64) error {
	return s.inTx(ctx, func(c conn) error {
		n, err := c.exec(ctx, `UPDATE delivery_event_streams SET failures = 0, retry_at = 0 WHERE app_id = ? AND holder = ?`,
			appID, holder)
		if err != nil || n == 0 {
			return err // no longer held: the next holder sends them again
		}
		for start := 0; start < len(ids); start += lookupBatch {
			part := ids[start:min(start+lookupBatch, len(ids))]
			args := make([]any, 0, len(part)+1)
			args = append(args, appID)
			for _, id := range part {
				args = append(args, id)
			}
			if _, err := c.exec(ctx, `DELETE FROM delivery_events WHERE app_id = ? AND id IN (`+
				strings.TrimSuffix(strings.Repeat("?,", len(part)), ",")+`)`, args...); err != nil {
				return err
			}
		}
		return nil
	})
}

// StreamFailed counts a failed message of the app's stream and sets when
// the next may be tried, while holder holds it.
func (s *StreamStore) StreamFailed(ctx context.Context, appID, holder string, retryAt time.Time) error {
	return s.inTx(ctx, func(c conn) error {
		_, err := c.exec(ctx, `UPDATE delivery_event_streams SET failures = failures + 1, retry_at = ?
			WHERE app_id = ? AND holder = ?`, retryAt.UnixMilli(), appID, holder)
		return err
	})
}

// PruneDeliveryEvents deletes up to limit delivery events queued before
// before (herald.EventsKeptFor ago), oldest first: ids grow with the time
// they were queued, so the oldest are the lowest ids, and a step reads
// no further than its limit.
func (s *RetentionStore) PruneDeliveryEvents(ctx context.Context, before time.Time, limit int) (retention.Step, error) {
	limit = max(limit, 1)
	var n int64
	held, err := s.retentionTx(ctx, func(c conn) error {
		var err error
		n, err = c.exec(ctx, `DELETE FROM delivery_events WHERE id IN (
			SELECT id FROM (SELECT id, queued_at FROM delivery_events ORDER BY id LIMIT ?) AS first WHERE queued_at < ?)`,
			limit, before.UnixMilli())
		return err
	})
	return retention.Step{Deleted: retention.Deleted{retention.RetainedDeliveryEvents: n}, More: n == int64(limit), Held: held}, err
}
