package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
)

// slotState is where a device's send of a push stands, as an event's
// transaction judges it.
type slotState int

const (
	// slotNone: not sent, and not on its way (no slot, a slot waiting
	// for its turn or for 08:00, a failure, a suppression, a cancelled
	// deferral).
	slotNone slotState = iota
	// slotInflight: the send may have reached FCM (marked in flight, or
	// waiting in a retry chunk to be sent again after a send cut off),
	// and its outcome is not recorded yet.
	slotInflight
	// slotSent: FCM accepted the message for the device.
	slotSent
)

// slotJudgement is a slot's state, and where the slot stands.
type slotJudgement struct {
	state           slotState
	chunk, pos, seq int
}

// judgeSlots judges the device's slots of a push (refs, from the targets
// cache) in the event's transaction: the best of their states. The push's
// row is locked first, then each slot's chunk, in the order the send path
// takes them, so that the chunk's cursor read is the last written and no
// step settles the slot before the transaction ends: a pending event
// written here is seen by the step that settles it (see settlePending).
// A slot that moved to a retry chunk is followed there. A device with no
// slot (a push from before chunk slots) is judged by its delivery rows.
func judgeSlots(ctx context.Context, c conn, pushID, deviceID string, refs []slotRef) (slotJudgement, error) {
	if err := lockPush(ctx, c, pushID); err != nil {
		return slotJudgement{}, err
	}
	if len(refs) == 0 {
		var n int
		err := c.queryRow(ctx, `SELECT COUNT(*) FROM deliveries WHERE push_id = ? AND device_id = ? AND state = ?`,
			pushID, deviceID, herald.DeliverySent).Scan(&n)
		if err != nil || n == 0 {
			return slotJudgement{}, err
		}
		return slotJudgement{state: slotSent}, nil
	}
	var best slotJudgement
	for _, r := range refs {
		j, err := judgeSlot(ctx, c, pushID, deviceID, int(r.chunk), int(r.pos))
		if err != nil {
			return slotJudgement{}, err
		}
		if j.state > best.state {
			best = j
		}
	}
	return best, nil
}

// judgeSlot judges the slot at pos of chunk, following it to the retry
// chunk it moved to.
func judgeSlot(ctx context.Context, c conn, pushID, deviceID string, chunk, pos int) (slotJudgement, error) {
	for {
		var settled, marked int
		var failed bool
		var slots []byte
		err := c.queryRow(ctx, c.locking(`SELECT settled, marked, failed, slots FROM push_chunks WHERE push_id = ? AND chunk = ?`),
			pushID, chunk).Scan(&settled, &marked, &failed, &slots)
		if errors.Is(err, herald.ErrNotFound) {
			return slotJudgement{}, nil
		} else if err != nil {
			return slotJudgement{}, err
		}
		d, ok, err := slotAt(slots, pos)
		if err != nil {
			return slotJudgement{}, err
		}
		if !ok || d.deviceID != deviceID {
			return slotJudgement{}, nil // another device's hash
		}
		j := slotJudgement{chunk: chunk, pos: pos, seq: d.seq}
		// Settled into a retry chunk: the newest (lowest) one holding the
		// slot is where it stands.
		moved := false
		err = c.each(ctx, func(row scanner) error {
			var n int
			var b []byte
			if err := row.Scan(&n, &b); err != nil || moved {
				return err
			}
			i, found, err := slotOfSeq(b, d.seq)
			if found {
				chunk, pos, moved = n, i, true
			}
			return err
		}, `SELECT chunk, slots FROM push_chunks WHERE push_id = ? AND chunk < ? AND chunk < 0 ORDER BY chunk`, pushID, chunk)
		if err != nil {
			return slotJudgement{}, err
		}
		if moved {
			continue // judged where it stands now
		}
		var state herald.DeliveryState
		err = c.queryRow(ctx, `SELECT state FROM deliveries WHERE push_id = ? AND seq = ?`, pushID, d.seq).Scan(&state)
		switch {
		case err == nil:
			if state == herald.DeliverySent {
				j.state = slotSent
			}
		case !errors.Is(err, herald.ErrNotFound):
			return slotJudgement{}, err
		case pos < settled:
			j.state = slotSent
		case failed:
		case pos < marked, d.resent:
			j.state = slotInflight
		}
		return j, nil
	}
}

// slotFacts are what an event's judgement reads of a slot.
type slotFacts struct {
	seq      int
	deviceID string
	resent   bool
}

// slotAt reads the slot at pos of a chunk's slots without decoding those
// before it; ok is false when there are fewer.
func slotAt(b []byte, pos int) (slotFacts, bool, error) {
	var d slotFacts
	found := false
	err := eachSlot(b, func(i int, s *rawSlot) bool {
		if i == pos {
			d, found = slotFacts{seq: int(s.seq), deviceID: string(s.device), resent: s.flags&slotResent != 0}, true
		}
		return i < pos
	})
	return d, found, err
}

// slotOfSeq returns the position of the slot seq in a chunk's slots.
func slotOfSeq(b []byte, seq int) (int, bool, error) {
	pos := -1
	err := eachSlot(b, func(i int, s *rawSlot) bool {
		if s.seq == uint64(seq) {
			pos = i
		}
		return pos < 0
	})
	return pos, pos >= 0, err
}

// flagPending marks chunks (each args: push id, chunk) as holding pending
// events, which their steps then settle (see settlePending).
func flagPending(ctx context.Context, c conn, chunks [][]any) error {
	_, err := c.execMany(ctx, `UPDATE push_chunks SET pending_events = TRUE WHERE push_id = ? AND chunk = ?`, chunks)
	return err
}

// pendingEvent is a row of push_pending_events as a step reads it.
type pendingEvent struct {
	deviceID string
	typ      herald.EventType
	pos, seq int
}

// settlePending judges the pending events of the slots a chunk step
// settles (see AdvanceChunk; rows are the step's rows as written, retry
// the number of the retry chunk it made, 0 for none): a slot settled sent
// makes its events ready (promoted to counted events by promotePending,
// after the step's commit, on the push's row), one settled otherwise
// drops them, one moved to a retry chunk moves them with it. It reports
// whether any became ready. The step holds the chunk's row, so no event's
// transaction judges these slots meanwhile (see judgeSlots).
func settlePending(ctx context.Context, c conn, pushID string, st sendstore.ChunkStep, rows []herald.Delivery, retry int) (bool, error) {
	var pend []pendingEvent
	left := 0 // pending events of the chunk this step does not settle
	err := c.each(ctx, func(row scanner) error {
		var e pendingEvent
		err := row.Scan(&e.deviceID, &e.typ, &e.pos, &e.seq)
		if e.pos >= st.Old.Settled && e.pos < st.New.Settled {
			pend = append(pend, e)
		} else {
			left++
		}
		return err
	}, `SELECT device_id, type, pos, seq FROM push_pending_events WHERE push_id = ? AND chunk = ? AND ready = FALSE`, pushID, st.Chunk)
	if err == nil && left == 0 {
		_, err = c.exec(ctx, `UPDATE push_chunks SET pending_events = FALSE WHERE push_id = ? AND chunk = ?`, pushID, st.Chunk)
	}
	if err != nil || len(pend) == 0 {
		return false, err
	}
	outcome := map[int]herald.DeliveryState{}
	for _, d := range rows {
		outcome[d.Seq] = d.State
	}
	moved := map[int]int{}
	if retry != 0 && st.Retry != nil {
		for i, d := range st.Retry.Slots {
			moved[d.Seq] = i
		}
	}
	var ready, drop, move [][]any
	for _, e := range pend {
		key := []any{pushID, e.deviceID, e.typ}
		state, isRow := outcome[e.seq]
		i, isMoved := moved[e.seq]
		switch {
		case isRow && state == herald.DeliverySent, !isRow && !isMoved:
			ready = append(ready, key)
		case isMoved:
			move = append(move, append([]any{retry, i}, key...))
		default:
			drop = append(drop, key)
		}
	}
	const where = ` WHERE push_id = ? AND device_id = ? AND type = ?`
	if _, err := c.execMany(ctx, `UPDATE push_pending_events SET ready = TRUE`+where, ready); err != nil {
		return false, err
	}
	if _, err := c.execMany(ctx, `DELETE FROM push_pending_events`+where, drop); err != nil {
		return false, err
	}
	if _, err := c.execMany(ctx, `UPDATE push_pending_events SET chunk = ?, pos = ?`+where, move); err != nil {
		return false, err
	}
	if len(move) > 0 {
		err = flagPending(ctx, c, [][]any{{pushID, retry}})
	}
	return len(ready) > 0, err
}

// promotePending counts a push's ready pending events, in a transaction of
// its own: the push's row first, as an event's transaction takes it.
func (s *PushStore) promotePending(ctx context.Context, pushID string) error {
	return s.inBulkTx(ctx, func(c conn) error { return promoteReady(ctx, c, pushID, false, s.Now()) })
}

// promoteReady moves a push's ready pending events to its events and
// raises its counts by those that were new; with all, it then drops the
// others (the push has ended: their sends will never be recorded sent).
// The delivery events of those its app takes are queued at now.
// The caller's transaction has locked the push's row, or this locks it.
func promoteReady(ctx context.Context, c conn, pushID string, all bool, now time.Time) error {
	if err := lockPush(ctx, c, pushID); err != nil {
		return err
	}
	var rows []eventRow
	var args [][]any
	err := c.each(ctx, func(row scanner) error {
		var r eventRow
		var device string
		var at int64
		err := row.Scan(&device, &r.typ, &at)
		r.pushID = pushID
		rows = append(rows, r)
		args = append(args, []any{pushID, device, r.typ, at})
		return err
	}, `SELECT device_id, type, at FROM push_pending_events WHERE push_id = ? AND ready = TRUE ORDER BY device_id, type`, pushID)
	if err != nil {
		return err
	}
	n, err := c.execMany(ctx, `INSERT INTO push_events (push_id, device_id, type, at) VALUES (?, ?, ?, ?)
		ON CONFLICT (push_id, device_id, type) DO NOTHING`, args)
	if err != nil {
		return err
	}
	if err := raiseEventCounts(ctx, c, rows, n); err != nil {
		return err
	}
	if err := streamPromoted(ctx, c, pushID, args, n, now); err != nil {
		return err
	}
	query := `DELETE FROM push_pending_events WHERE push_id = ? AND ready = TRUE`
	if all {
		query = `DELETE FROM push_pending_events WHERE push_id = ?`
	}
	_, err = c.exec(ctx, query, pushID)
	return err
}

// streamPromoted queues the delivery events of the pending events
// promoted now (args as promoteReady inserted them, n[i] the rows each
// inserted) that the push's app takes. The app is read only when one was
// promoted: a report in flight is rare.
func streamPromoted(ctx context.Context, c conn, pushID string, args [][]any, n []int64, now time.Time) error {
	if !slices.ContainsFunc(n, func(v int64) bool { return v > 0 }) {
		return nil
	}
	var app herald.App
	var events sql.NullString
	if err := c.queryRow(ctx, `SELECT a.webhook_url, a.webhook_events FROM pushes p JOIN apps a ON a.id = p.app_id
		WHERE p.id = ?`, pushID).Scan(&app.WebhookURL, &events); err != nil {
		return err
	}
	if events.Valid {
		if err := json.Unmarshal([]byte(events.String), &app.WebhookEvents); err != nil {
			return err
		}
	}
	var streamed []streamedMark
	for i, a := range args {
		t := a[2].(herald.EventType).Webhook()
		if n[i] > 0 && app.Takes(t) {
			streamed = append(streamed, streamedMark{pushID, a[1].(string), t, time.UnixMilli(a[3].(int64)).UTC()})
		}
	}
	return queueMarks(ctx, c, streamed, now)
}
