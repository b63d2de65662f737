package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/audience"
)

// CreateSegment stores a new segment (see audience.Store). The app's row
// is locked first, so that of segments created at once the count that
// bounds them sees every one before it.
func (s *UserStore) CreateSegment(ctx context.Context, sg audience.Segment) error {
	filter, err := json.Marshal(sg.Filter)
	if err != nil {
		return err
	}
	err = s.inTx(ctx, func(c conn) error {
		if err := c.lockRow(ctx, `apps`, `id = ?`, sg.AppID); err != nil {
			return err // herald.ErrNotFound: no such app
		}
		var n int
		if err := c.queryRow(ctx, `SELECT count(*) FROM segments WHERE app_id = ?`, sg.AppID).Scan(&n); err != nil {
			return err
		}
		if n >= audience.MaxSegments {
			return audience.ErrTooManySegments
		}
		_, err := c.exec(ctx, `INSERT INTO segments (id, app_id, name, filter, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
			sg.ID, sg.AppID, sg.Name, string(filter), sg.CreatedAt.UnixMilli(), sg.UpdatedAt.UnixMilli())
		return err
	})
	if errors.Is(err, ErrUnique) {
		return audience.ErrSegmentName
	}
	return err
}

// guardFound turns a write that changed no row into herald.ErrNotFound.
func guardFound(n int64, err error) error {
	if err == nil && n == 0 {
		return herald.ErrNotFound
	}
	return err
}

const segmentColumns = `id, app_id, name, filter, created_at, updated_at`

func scanSegment(row scanner) (audience.Segment, error) {
	var sg audience.Segment
	var filter string
	var created, updated int64
	if err := row.Scan(&sg.ID, &sg.AppID, &sg.Name, &filter, &created, &updated); err != nil {
		return sg, err
	}
	sg.CreatedAt, sg.UpdatedAt = time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
	return sg, json.Unmarshal([]byte(filter), &sg.Filter)
}

// Segments lists an app's segments by name.
func (s *UserStore) Segments(ctx context.Context, appID string) ([]audience.Segment, error) {
	out := []audience.Segment{}
	err := s.reader().each(ctx, func(row scanner) error {
		sg, err := scanSegment(row)
		out = append(out, sg)
		return err
	}, `SELECT `+segmentColumns+` FROM segments WHERE app_id = ? ORDER BY name`, appID)
	return out, err
}

// Segment returns one of an app's segments.
func (s *UserStore) Segment(ctx context.Context, appID, segmentID string) (audience.Segment, error) {
	return scanSegment(s.reader().queryRow(ctx, `SELECT `+segmentColumns+` FROM segments WHERE app_id = ? AND id = ?`, appID, segmentID))
}

// UpdateSegment replaces a segment's name and filter.
func (s *UserStore) UpdateSegment(ctx context.Context, sg audience.Segment) error {
	filter, err := json.Marshal(sg.Filter)
	if err != nil {
		return err
	}
	err = s.inTx(ctx, func(c conn) error {
		return guardFound(c.exec(ctx, `UPDATE segments SET name = ?, filter = ?, updated_at = ? WHERE app_id = ? AND id = ?`,
			sg.Name, string(filter), sg.UpdatedAt.UnixMilli(), sg.AppID, sg.ID))
	})
	if errors.Is(err, ErrUnique) {
		return audience.ErrSegmentName
	}
	return err
}

// DeleteSegment deletes a segment.
func (s *UserStore) DeleteSegment(ctx context.Context, appID, segmentID string) error {
	return s.inTx(ctx, func(c conn) error {
		return guardFound(c.exec(ctx, `DELETE FROM segments WHERE app_id = ? AND id = ?`, appID, segmentID))
	})
}
