package sqlstore

import (
	"cmp"
	"context"
	"slices"
	"strings"
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
// by the batch leader's deadline; it returns once that committed. A
// report whose pushes the cache shows sent is written with the others of
// its batch (eventsJoint).
func (s *PushStore) RecordEvents(ctx context.Context, appID, deviceID string, marks []herald.EventMark) ([]bool, error) {
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
			rows = append(rows, eventRow{pushID: m.PushID, typ: m.Type, at: m.At, mark: i, sent: k.v == sentTo, refs: k.refs,
				stream: m.Stream})
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
	opts := TxOptions{Batched: true, Key: rows[0].pushID}
	if !slices.ContainsFunc(rows, func(r eventRow) bool { return !r.sent }) {
		// The common case: every push shown sent. The reports of a batch
		// are written together (eventsJoint).
		opts.Joint, opts.Item = s.events, &eventItem{appID: appID, deviceID: deviceID, rows: rows, recorded: recorded}
	}
	err := s.inTxRetryWith(ctx, opts, false, func(c conn) error {
		clear(recorded)
		if err := s.writeEvents(ctx, c, deviceID, rows, recorded); err != nil {
			return err
		}
		_, err := c.execMany(ctx, seenSQL, [][]any{s.seenArgs(appID, deviceID)})
		return err
	})
	if err != nil {
		return nil, err
	}
	return recorded, nil
}

// eventItem is a device's report as eventsJoint takes it: rows (by push
// and type, each once) all of pushes the targets cache showed sent to the
// device, and the report's answer, set by whichever writes it.
type eventItem struct {
	appID    string
	deviceID string
	rows     []eventRow
	recorded []bool
}

// eventsJoint is RecordEvents's joint (see Joint) for reports whose pushes
// the cache showed sent: the reports of a batch written as one, with the
// rules of one written alone (writeEvents): their rows inserted in one
// statement (a few for a large batch) that skips repeats, marks pending
// for the device and pushes gone, and returns those it wrote; then each
// push's counts raised once, in push order. Of the batch's reports, one
// about a push and device an earlier one is about too is left to run
// alone after the others, so that the first asked is the one recorded.
type eventsJoint struct{ s *PushStore }

// eventKey is a row of push_events.
type eventKey struct{ pushID, deviceID, typ string }

// maxEventRows bounds the rows of one of the joint's inserts (four
// variables each).
const maxEventRows = 256

// Join writes the reports among items that are about no push and device
// an earlier one is about.
func (j *eventsJoint) Join(ctx context.Context, tx Tx, items []any) ([]bool, error) {
	c := conn{q: tx, tx: tx, tr: j.s.translate, lw: j.s.lw, forUpdate: j.s.forUpdate}
	ran := make([]bool, len(items))
	taken := map[eventKey]bool{}
	var its []*eventItem
	var args []any
	for i, x := range items {
		it := x.(*eventItem)
		if slices.ContainsFunc(it.rows, func(r eventRow) bool { return taken[eventKey{r.pushID, it.deviceID, ""}] }) {
			continue
		}
		for _, r := range it.rows {
			taken[eventKey{r.pushID, it.deviceID, ""}] = true
			args = append(args, r.pushID, it.deviceID, string(r.typ), r.at.UnixMilli())
		}
		ran[i] = true
		its = append(its, it)
	}
	written := map[eventKey]bool{}
	for start := 0; start < len(args); start += 4 * maxEventRows {
		part := args[start:min(start+4*maxEventRows, len(args))]
		query, padded := insertEventsSQL(part)
		err := c.each(ctx, func(row scanner) error {
			var k eventKey
			err := row.Scan(&k.pushID, &k.deviceID, &k.typ)
			written[k] = true
			return err
		}, query, padded...)
		if err != nil {
			return nil, err
		}
	}
	counts := map[string]*[2]int{} // received, opened by push
	var streamed []streamedMark
	for _, it := range its {
		clear(it.recorded)
		for _, r := range it.rows {
			if !written[eventKey{r.pushID, it.deviceID, string(r.typ)}] {
				continue
			}
			it.recorded[r.mark] = true
			if r.stream {
				streamed = append(streamed, streamedMark{r.pushID, it.deviceID, r.typ.Webhook(), r.at})
			}
			n := counts[r.pushID]
			if n == nil {
				n = new([2]int)
				counts[r.pushID] = n
			}
			if r.typ == herald.EventOpened {
				n[1]++
			} else {
				n[0]++
			}
		}
	}
	pushes := make([]string, 0, len(counts))
	for id := range counts {
		pushes = append(pushes, id)
	}
	slices.Sort(pushes)
	var raise [][]any
	for _, id := range pushes {
		raise = append(raise, []any{counts[id][0], counts[id][1], id})
	}
	if _, err := c.execMany(ctx, raiseEventCountsSQL, raise); err != nil {
		return nil, err
	}
	if err := queueMarks(ctx, c, streamed, j.s.Now()); err != nil {
		return nil, err
	}
	// The devices after the pushes, in key order, as every writer of
	// both takes them.
	seen := make([][]any, len(its))
	for i, it := range its {
		seen[i] = j.s.seenArgs(it.appID, it.deviceID)
	}
	slices.SortFunc(seen, func(a, b []any) int {
		return cmp.Or(cmp.Compare(a[1].(string), b[1].(string)), cmp.Compare(a[2].(string), b[2].(string)))
	})
	if _, err := c.execMany(ctx, seenSQL, seen); err != nil {
		return nil, err
	}
	return ran, nil
}

// seenSQL records that a device reported an event: its last_seen_at
// (DESIGN 13's lastSeenDays) moved to now when it is older than
// seenEvery, so that a device's reports write its row at most that often.
const seenSQL = `UPDATE devices SET last_seen_at = ? WHERE app_id = ? AND device_id = ? AND last_seen_at < ?`

// seenEvery is how stale a device's last_seen_at may be before a report
// moves it: a filter counts days since.
const seenEvery = time.Hour

// seenArgs are seenSQL's arguments for the app's device now.
func (s *PushStore) seenArgs(appID, deviceID string) []any {
	now := s.Now()
	return []any{now.UnixMilli(), appID, deviceID, now.Add(-seenEvery).UnixMilli()}
}

// insertEventsSQL returns the joint's insert of rows (args, four a row:
// push, device, type, at) and its arguments: the rows padded with NULL
// ones (which match no push) to a power of two, so that inserts of any
// number of rows are a few statements, each prepared once.
func insertEventsSQL(args []any) (string, []any) {
	n := 8
	for 4*n < len(args) {
		n *= 2
	}
	padded := append(make([]any, 0, 4*n), args...)
	for len(padded) < 4*n {
		padded = append(padded, nil)
	}
	return `INSERT INTO push_events (push_id, device_id, type, at)
		SELECT v.column1, v.column2, v.column3, v.column4 FROM (VALUES ` +
		strings.TrimSuffix(strings.Repeat(`(?, ?, ?, CAST(? AS BIGINT)),`, n), ",") + `) AS v
		WHERE EXISTS (SELECT 1 FROM pushes WHERE id = v.column1)
		AND NOT EXISTS (SELECT 1 FROM push_pending_events e WHERE e.push_id = v.column1 AND e.device_id = v.column2 AND e.type = v.column3)
		ON CONFLICT (push_id, device_id, type) DO NOTHING
		RETURNING push_id, device_id, type`, padded
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
	stream bool // queue its delivery event once recorded
}

// writeEvents writes a device's rows (by push and type, each once): those
// of pushes sent to it as events, raising the pushes' counts by those that
// were new, those of sends in flight as pending events; it sets recorded
// for each written.
func (s *PushStore) writeEvents(ctx context.Context, c conn, deviceID string, rows []eventRow, recorded []bool) error {
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
	var streamed []streamedMark
	for i, r := range written {
		recorded[r.mark] = n[i] > 0
		if n[i] > 0 && r.stream {
			streamed = append(streamed, streamedMark{r.pushID, deviceID, r.typ.Webhook(), r.at})
		}
	}
	if err := queueMarks(ctx, c, streamed, s.Now()); err != nil {
		return err
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
	_, err := c.execMany(ctx, raiseEventCountsSQL, args)
	return err
}

// raiseEventCountsSQL adds to a push's counts (received, opened, push id).
const raiseEventCountsSQL = `UPDATE pushes SET events_received = events_received + ?, events_opened = events_opened + ?
	WHERE id = ?`

// fillEventCounts sets the counts devices reported for a push.
func fillEventCounts(ctx context.Context, c conn, p *herald.Push) error {
	return c.queryRow(ctx, `SELECT events_received, events_opened FROM pushes WHERE id = ?`, p.ID).
		Scan(&p.Counts.Received, &p.Counts.Opened)
}
