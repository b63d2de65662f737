package sqlstore

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/heraldpush/herald"
)

// RecordEvents records a device's marks (see herald.EventStore). A mark
// counts only for a push sent to the device: one of its slots settled
// sent (FCM accepted the message), or a delivery row recorded sent. The
// targets cache shows most such devices without a read; the others are
// judged in the transaction (see judgeSlots). A mark for a slot still in
// flight is kept pending and counts once its send is recorded sent (see
// settlePending): it is answered recorded now, since the app never
// reports again. The marks are written in one transaction that may share
// its commit with other requests' (TxOptions.Batched, see Group), bounded
// by the batch leader's deadline; it returns once that committed.
func (s *Store) RecordEvents(ctx context.Context, appID, deviceID string, marks []herald.EventMark) ([]bool, error) {
	recorded := make([]bool, len(marks))
	type known struct {
		v    verdict
		refs []slotRef
	}
	seen := map[string]known{}
	var rows []eventRow
	for i, m := range marks {
		k, ok := seen[m.PushID]
		if !ok {
			v, refs, err := s.sentState(ctx, appID, m.PushID, deviceID)
			if err != nil {
				return nil, err
			}
			k = known{v, refs}
			seen[m.PushID] = k
		}
		if k.v != notPlanned {
			rows = append(rows, eventRow{pushID: m.PushID, typ: m.Type, at: m.At, mark: i, sent: k.v == sentTo, refs: k.refs})
		}
	}
	if len(rows) == 0 {
		return recorded, nil
	}
	// The first of equal rows (the earliest asked) is written; the others
	// are repeats. Rows go in key order, so that two transactions take
	// their locks in the same order.
	slices.SortStableFunc(rows, func(a, b eventRow) int {
		return cmp.Or(cmp.Compare(a.pushID, b.pushID), cmp.Compare(a.typ, b.typ))
	})
	rows = slices.CompactFunc(rows, func(a, b eventRow) bool { return a.pushID == b.pushID && a.typ == b.typ })
	err := s.inBatchedTxRetry(ctx, rows[0].pushID, false, func(c conn) error {
		clear(recorded)
		return s.writeEvents(ctx, c, deviceID, rows, recorded)
	})
	if err != nil {
		return nil, err
	}
	return recorded, nil
}

// eventRow is a mark to write, and its place in its request's marks:
// sent when the cache showed the push sent to the device, else the
// device's slots to judge.
type eventRow struct {
	pushID string
	typ    herald.EventType
	at     time.Time
	mark   int
	sent   bool
	refs   []slotRef
}

// writeEvents writes a device's rows (by push and type, each once): those
// of pushes sent to it as events, raising the pushes' counts by those that
// were new, those of sends in flight as pending events; it sets recorded
// for each written.
func (s *Store) writeEvents(ctx context.Context, c conn, deviceID string, rows []eventRow, recorded []bool) error {
	var events, pending [][]any
	var written []eventRow
	var waiting []eventRow
	judged := map[string]slotJudgement{}
	for _, r := range rows {
		if !r.sent {
			j, ok := judged[r.pushID]
			if !ok {
				var err error
				if j, err = judgeSlots(ctx, c, r.pushID, deviceID, r.refs); err != nil {
					return err
				}
				judged[r.pushID] = j
			}
			switch j.state {
			case slotInflight:
				pending = append(pending, []any{r.pushID, deviceID, r.typ, r.at.UnixMilli(), j.chunk, j.pos, j.seq,
					r.pushID, deviceID, r.typ})
				waiting = append(waiting, r)
				continue
			case slotSent:
			default:
				continue
			}
		}
		// A mark pending for the device is counted by its promotion, not
		// again here.
		events = append(events, []any{r.pushID, deviceID, r.typ, r.at.UnixMilli(), r.pushID, r.pushID, deviceID, r.typ})
		written = append(written, r)
	}
	n, err := c.execMany(ctx, `INSERT INTO push_events (push_id, device_id, type, at)
		SELECT ?, ?, ?, CAST(? AS BIGINT) WHERE EXISTS (SELECT 1 FROM pushes WHERE id = ?)
		AND NOT EXISTS (SELECT 1 FROM push_pending_events WHERE push_id = ? AND device_id = ? AND type = ?)
		ON CONFLICT (push_id, device_id, type) DO NOTHING`, events)
	if err != nil {
		return err
	}
	if err := raiseEventCounts(ctx, c, written, n); err != nil {
		return err
	}
	for i, r := range written {
		recorded[r.mark] = n[i] > 0
	}
	n, err = c.execMany(ctx, `INSERT INTO push_pending_events (push_id, device_id, type, at, chunk, pos, seq)
		SELECT ?, ?, ?, CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT), CAST(? AS BIGINT)
		WHERE NOT EXISTS (SELECT 1 FROM push_events WHERE push_id = ? AND device_id = ? AND type = ?)
		ON CONFLICT (push_id, device_id, type) DO NOTHING`, pending)
	if err != nil {
		return err
	}
	var flags [][]any // the chunks now holding pending events
	for i, r := range waiting {
		recorded[r.mark] = n[i] > 0
		if n[i] > 0 {
			flags = append(flags, []any{pending[i][0], pending[i][4]})
		}
	}
	return flagPending(ctx, c, flags)
}

// raiseEventCounts adds the new rows (written, which is by push, n[i] the
// rows written[i] inserted) to their pushes' counts, one update per push.
func raiseEventCounts(ctx context.Context, c conn, written []eventRow, n []int64) error {
	var args [][]any
	for i, r := range written {
		if n[i] == 0 {
			continue
		}
		if len(args) == 0 || args[len(args)-1][2] != r.pushID {
			args = append(args, []any{0, 0, r.pushID})
		}
		last := args[len(args)-1]
		if r.typ == herald.EventOpened {
			last[1] = last[1].(int) + 1
		} else {
			last[0] = last[0].(int) + 1
		}
	}
	_, err := c.execMany(ctx, `UPDATE pushes SET events_received = events_received + ?, events_opened = events_opened + ?
		WHERE id = ?`, args)
	return err
}

// fillEventCounts sets the counts devices reported for a push.
func fillEventCounts(ctx context.Context, c conn, p *herald.Push) error {
	return c.queryRow(ctx, `SELECT events_received, events_opened FROM pushes WHERE id = ?`, p.ID).
		Scan(&p.Counts.Received, &p.Counts.Opened)
}
