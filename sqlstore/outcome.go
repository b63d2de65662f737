package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"time"

	"github.com/heraldpush/herald"
)

// A push's recipients export (DESIGN 15) walks the push's deliveries by
// seq, the order the fan-out planned them, a window of seqs at a time:
// each window's delivery rows (by the primary key) and the slots of the
// chunks that hold any of its seqs, judged by withSlots as every other
// reader of deliveries judges them. Which chunks hold which seqs is read
// first, one pass over the chunks that keeps each chunk's lowest and
// highest seq (a few bytes a chunk of hundreds of tokens); no window
// holds more than outcomeWindow deliveries and the chunks it touches.
// Each query is its own, so the walk holds no connection or snapshot
// while its caller writes: a push still sending is exported as each
// window finds it.

// outcomeWindow is how many seqs a page of the export covers.
const outcomeWindow = 4096

// spanPage is how many chunks one query of chunkSpans reads.
const spanPage = 16

// devicelessPage is how many users one query of eachDeviceless reads.
const devicelessPage = 1000

// chunkSpan is the lowest and highest seq of a chunk's slots.
type chunkSpan struct{ chunk, lo, hi int }

// EachDeviceOutcome calls fn with a push's recipients export a page at a
// time (herald.ExportStore): every delivery, by seq, once (a delivery
// row, else the newest retry chunk's slot, else the fan-out's), then the
// users the push found no device of (unreachable, with no row of
// user_pushes for the push).
func (s *PushStore) EachDeviceOutcome(ctx context.Context, pushID string, fn func([]herald.DeviceOutcome) error) error {
	var appID string
	if err := s.reader().queryRow(ctx, `SELECT app_id FROM pushes WHERE id = ?`, pushID).Scan(&appID); err != nil {
		if errors.Is(err, herald.ErrNotFound) {
			return nil
		}
		return err
	}
	spans, end, err := s.chunkSpans(ctx, pushID)
	if err != nil {
		return err
	}
	var last sql.NullInt64
	if err := s.reader().queryRow(ctx, `SELECT MAX(seq) FROM deliveries WHERE push_id = ?`, pushID).Scan(&last); err != nil {
		return err
	}
	if last.Valid {
		end = max(end, int(last.Int64)+1)
	}
	for lo := 0; lo < end; lo += outcomeWindow {
		page, err := s.outcomePage(ctx, pushID, spans, lo, lo+outcomeWindow)
		if err != nil {
			return err
		}
		if len(page) > 0 {
			if err := fn(page); err != nil {
				return err
			}
		}
	}
	return s.eachDeviceless(ctx, appID, pushID, fn)
}

// chunkSpans returns the span of each of the push's chunks with slots,
// and one past the highest seq they hold.
func (s *PushStore) chunkSpans(ctx context.Context, pushID string) ([]chunkSpan, int, error) {
	var spans []chunkSpan
	end := 0
	after := math.MinInt32
	for {
		n := 0
		err := s.reader().each(ctx, func(row scanner) error {
			var chunk int
			var slots []byte
			if err := row.Scan(&chunk, &slots); err != nil {
				return err
			}
			n++
			after = chunk
			sp := chunkSpan{chunk: chunk, lo: math.MaxInt, hi: -1}
			err := eachSlot(slots, func(_ int, r *rawSlot) bool {
				sp.lo, sp.hi = min(sp.lo, int(r.seq)), max(sp.hi, int(r.seq))
				return true
			})
			if sp.hi >= 0 {
				spans = append(spans, sp)
				end = max(end, sp.hi+1)
			}
			return err
		}, `SELECT chunk, slots FROM push_chunks WHERE push_id = ? AND chunk > ? ORDER BY chunk LIMIT ?`, pushID, after, spanPage)
		if err != nil || n < spanPage {
			return spans, end, err
		}
	}
}

// outcomePage returns the export's lines of the deliveries with seqs from
// lo up to hi, by seq.
func (s *PushStore) outcomePage(ctx context.Context, pushID string, spans []chunkSpan, lo, hi int) ([]herald.DeviceOutcome, error) {
	ds, err := s.rows(ctx, `push_id = ? AND seq >= ? AND seq < ?`, pushID, lo, hi)
	if err != nil {
		return nil, err
	}
	var chunks []any
	for _, sp := range spans {
		if sp.lo < hi && sp.hi >= lo {
			chunks = append(chunks, sp.chunk)
		}
	}
	if len(chunks) > 0 {
		ds, err = s.withSlots(ctx, pushID, `push_id = ? AND chunk IN (`+placeholders(len(chunks))+`)`, chunks, ds,
			func(d herald.Delivery) bool { return lo <= d.Seq && d.Seq < hi })
		if err != nil {
			return nil, err
		}
	}
	events, err := s.deviceEvents(ctx, pushID, ds)
	if err != nil {
		return nil, err
	}
	out := make([]herald.DeviceOutcome, len(ds))
	for i, d := range ds {
		out[i] = herald.DeviceOutcome{UserID: d.UserID, DeviceID: d.DeviceID, TokenSuffix: herald.TokenSuffix(d.Token), Outcome: d.Outcome()}
		if !d.SentAt.IsZero() {
			out[i].SentAt = &d.SentAt
		}
		if ev := events[d.DeviceID]; ev != nil {
			out[i].ReceivedAt, out[i].OpenedAt = ev.received, ev.opened
		}
	}
	return out, nil
}

// reported is what a device reported of a push.
type reported struct{ received, opened *time.Time }

// deviceEvents returns the events the devices of ds reported of the push,
// by device.
func (s *PushStore) deviceEvents(ctx context.Context, pushID string, ds []herald.Delivery) (map[string]*reported, error) {
	out := map[string]*reported{}
	devices := make([]string, 0, len(ds))
	for _, d := range ds {
		if _, ok := out[d.DeviceID]; !ok {
			out[d.DeviceID] = nil
			devices = append(devices, d.DeviceID)
		}
	}
	err := eachIn(ctx, s.reader(), `SELECT device_id, type, at FROM push_events WHERE push_id = ? AND device_id IN `, pushID, devices,
		func(row scanner) error {
			var device, typ string
			var ms int64
			if err := row.Scan(&device, &typ, &ms); err != nil {
				return err
			}
			r := out[device]
			if r == nil {
				r = &reported{}
				out[device] = r
			}
			at := time.UnixMilli(ms).UTC()
			if typ == string(herald.EventOpened) {
				r.opened = &at
			} else {
				r.received = &at
			}
			return nil
		})
	return out, err
}

// eachDeviceless calls fn with the push's unreachable users that have no
// delivery (no row of user_pushes, nor a chunk holding the user where the
// engine keeps chunks' users apart): those it found no device of, by user.
func (s *PushStore) eachDeviceless(ctx context.Context, appID, pushID string, fn func([]herald.DeviceOutcome) error) error {
	inChunk := ""
	if s.chunkUsers != nil {
		inChunk = ` AND NOT EXISTS (SELECT 1 FROM push_chunks c WHERE c.push_id = u.push_id AND ` + s.chunkUsers.ChunkHolds("c", "u.user_id") + `)`
	}
	after := ""
	for {
		var page []herald.DeviceOutcome
		err := s.reader().each(ctx, func(row scanner) error {
			var u string
			err := row.Scan(&u)
			page = append(page, herald.DeviceOutcome{UserID: u, Outcome: herald.OutcomeUnreachable})
			after = u
			return err
		}, `SELECT u.user_id FROM unreachable u WHERE u.push_id = ? AND u.user_id > ? AND NOT EXISTS (
			SELECT 1 FROM user_pushes up WHERE up.app_id = ? AND up.user_id = u.user_id AND up.push_id = u.push_id)`+inChunk+`
			ORDER BY u.user_id LIMIT ?`, pushID, after, appID, devicelessPage)
		if err != nil {
			return err
		}
		if len(page) > 0 {
			if err := fn(page); err != nil {
				return err
			}
		}
		if len(page) < devicelessPage {
			return nil
		}
	}
}
