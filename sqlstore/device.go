package sqlstore

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/audience"
	"github.com/heraldpush/herald/sendstore"
)

// DevicesByID returns those of the devices that still exist.
func (s *UserStore) DevicesByID(ctx context.Context, appID string, deviceIDs []string) (map[string]herald.Device, error) {
	out := make(map[string]herald.Device, len(deviceIDs))
	err := s.devicesWhere(ctx, DevicesByIDLookup, appID, deviceIDs, func(d herald.Device) { out[d.ID] = d })
	return out, err
}

// DevicesOfUsers returns the devices mapped to each of the users, each
// user's by creation and id. They are ordered here rather than by the
// query: most users have one device, and a sort of the whole read cost
// SQLite a fifth of it.
func (s *UserStore) DevicesOfUsers(ctx context.Context, appID string, userIDs []string) (map[string][]herald.Device, error) {
	out := make(map[string][]herald.Device, len(userIDs))
	err := s.devicesWhere(ctx, DevicesOfUsersLookup, appID, userIDs, func(d herald.Device) { out[*d.UserID] = append(out[*d.UserID], d) })
	for _, ds := range out {
		if len(ds) > 1 {
			slices.SortFunc(ds, func(a, b herald.Device) int {
				return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
			})
		}
	}
	return out, err
}

// DeviceByToken returns the app's device that holds the token now (the
// unique index devices_token finds it). ErrNotFound when none does.
func (s *UserStore) DeviceByToken(ctx context.Context, appID, token string) (herald.Device, error) {
	return scanDevice(s.reader().queryRow(ctx, `SELECT `+deviceColumns+` FROM devices WHERE app_id = ? AND token = ?`, appID, token))
}

// DevicePage returns at most limit of the app's devices after the cursor
// that the selection selects (sendstore.Selection): the unmapped ones by
// id, then the mapped ones by user and id (each order an index's), each
// part one statement that reads its devices as they come.
//
// The mapped part's cursor is written user_id >= U AND (user_id > U OR
// device_id > D), not as the row comparison (user_id, device_id) > (U, D):
// PostgreSQL, probing the devices of a tag's user from user_tags, read
// the index from the row comparison's start rather than at the user (19
// ms a probe at 1,000,000 devices). Its tag look-ups are bounded by U too
// (filterFromSQL).
func (s *UserStore) DevicePage(ctx context.Context, appID string, sel sendstore.Selection, after sendstore.DeviceCursor, limit int) ([]herald.Device, sendstore.DeviceCursor, error) {
	var out []herald.Device
	scan := func(row scanner) error {
		d, err := scanDevice(row)
		out = append(out, d)
		return err
	}
	if !after.Mapped {
		query, args, err := DevicePageQuery(appID, sel, after, limit)
		if err == nil {
			err = s.reader().each(ctx, scan, query, args...)
		}
		if err != nil {
			return nil, after, err
		}
		if len(out) == limit {
			return out, sendstore.DeviceCursor{DeviceID: out[len(out)-1].ID}, nil
		}
		after = sendstore.DeviceCursor{Mapped: true}
	}
	query, args, err := DevicePageQuery(appID, sel, after, limit-len(out))
	if err == nil {
		err = s.reader().each(ctx, scan, query, args...)
	}
	if err != nil {
		return nil, after, err
	}
	if n := len(out); n > 0 && out[n-1].UserID != nil {
		after = sendstore.DeviceCursor{Mapped: true, UserID: *out[n-1].UserID, DeviceID: out[n-1].ID}
	}
	return out, after, nil
}

// DevicePageQuery is the statement of DevicePage's part that after is in:
// at most limit unmapped devices after it by id, or mapped ones after it
// by user and id. Exported for the engines' tests of its plan.
func DevicePageQuery(appID string, sel sendstore.Selection, after sendstore.DeviceCursor, limit int) (string, []any, error) {
	if !after.Mapped {
		where, args, err := selectionSQL(sel, nil)
		if err != nil {
			return "", nil, err
		}
		return `SELECT ` + prefixed("d.", deviceColumns) + ` FROM devices d
			WHERE d.app_id = ? AND d.user_id IS NULL` + where + ` AND d.device_id > ? ORDER BY d.device_id LIMIT ?`,
			append(append([]any{appID}, args...), after.DeviceID, limit), nil
	}
	if sel.Filter != nil && sel.Topic == "" {
		td, ok, err := tagDrivenSQL(*sel.Filter, sel.Now, &after.UserID)
		if err != nil {
			return "", nil, err
		}
		if ok && td.single {
			// From the tag's value: its index reads the tag's users in order
			// of ID, each joined to its devices (CROSS JOIN: SQLite reads
			// user_tags first, as asked), so a page reads only the users
			// that have the value, not every device of the app.
			args := append(append([]any{appID}, td.tagArgs...), after.UserID, after.UserID, after.DeviceID)
			return `SELECT ` + prefixed("d.", deviceColumns) + ` FROM user_tags t CROSS JOIN devices d
				WHERE t.app_id = ? AND ` + td.tag + ` AND t.user_id >= ? AND d.app_id = t.app_id AND d.user_id = t.user_id
				AND (d.user_id > ? OR d.device_id > ?) AND ` + td.rest + `
				ORDER BY t.user_id, d.device_id LIMIT ?`, append(append(args, td.restArgs...), limit), nil
		}
	}
	where, args, err := selectionSQL(sel, &after.UserID)
	if err != nil {
		return "", nil, err
	}
	return `SELECT ` + prefixed("d.", deviceColumns) + ` FROM devices d
		WHERE d.app_id = ? AND d.user_id IS NOT NULL` + where + ` AND d.user_id >= ? AND (d.user_id > ? OR d.device_id > ?)
		ORDER BY d.user_id, d.device_id LIMIT ?`,
		append(append([]any{appID}, args...), after.UserID, after.UserID, after.DeviceID, limit), nil
}

// selectionSQL is the selection's condition on devices d, each part
// starting with AND (none: ""), and its arguments; userFrom as
// filterFromSQL's, for devices whose user the caller bounds.
func selectionSQL(sel sendstore.Selection, userFrom *string) (string, []any, error) {
	var where string
	var args []any
	if sel.Topic != "" {
		where = ` AND EXISTS (SELECT 1 FROM device_topics dt WHERE dt.app_id = d.app_id AND dt.device_id = d.device_id AND dt.topic = ?)`
		args = append(args, sel.Topic)
	}
	if sel.Filter != nil {
		cond, fargs, err := filterFromSQL(*sel.Filter, sel.Now, userFrom)
		if err != nil {
			return "", nil, err
		}
		where += ` AND ` + cond
		args = append(args, fargs...)
	}
	return where, args, nil
}

// CountSelected counts the users a fan-out of the selection finds now
// (sendstore.Store): a segment's as CountAudience counts them, a topic's
// or the app's as CountTargets does.
func (s *UserStore) CountSelected(ctx context.Context, appID string, sel sendstore.Selection) (int, error) {
	if sel.Filter != nil {
		c, err := s.CountAudience(ctx, appID, *sel.Filter, sel.Now)
		return c.Users, err
	}
	users, unmapped, err := s.CountTargets(ctx, appID, sel.Topic)
	return users + unmapped, err
}

// CountAudience counts the app's devices whose (user, device) pair the
// filter holds for at now, and the users they make: each mapped user
// once, and each unmapped device as one, as an all-users push counts
// them. Exact, in one statement. A filter that is, or is an and of, a tag
// leaf of eq or in is counted from that tag's rows by its value
// (tagDrivenSQL), joined to their users' devices: no unmapped device
// holds it, so its users are the distinct mapped ones.
func (s *UserStore) CountAudience(ctx context.Context, appID string, f audience.Filter, now time.Time) (audience.Count, error) {
	query, args, tagDriven, err := AudienceCountQuery(appID, f, now)
	if err != nil {
		return audience.Count{}, err
	}
	var devices, users, mapped int64
	if err := s.reader().queryRow(ctx, query, args...).Scan(&devices, &users, &mapped); err != nil {
		return audience.Count{}, err
	}
	if tagDriven { // only mapped devices hold a tag leaf
		return audience.Count{Users: int(users), Devices: int(devices)}, nil
	}
	return audience.Count{Users: int(users + devices - mapped), Devices: int(devices)}, nil
}

// AudienceCountQuery is CountAudience's statement: the count of devices,
// of distinct users and of mapped devices, and whether it reads the
// filter's tag leaf from user_tags by its value (tagDrivenSQL). Exported
// for the engines' tests of its plan.
func AudienceCountQuery(appID string, f audience.Filter, now time.Time) (query string, args []any, tagDriven bool, err error) {
	td, ok, err := tagDrivenSQL(f, now, nil)
	if err != nil {
		return "", nil, false, err
	}
	if ok {
		tag, rest, args := td.tag, td.rest, append(td.tagArgs, td.restArgs...)
		// CROSS JOIN: SQLite then reads user_tags first, as asked (without
		// statistics it read every device and probed its tag); PostgreSQL
		// orders it as any join.
		return `SELECT COUNT(*), COUNT(DISTINCT d.user_id), COUNT(d.user_id) FROM user_tags t CROSS JOIN devices d
			WHERE t.app_id = ? AND ` + tag + ` AND d.app_id = t.app_id AND d.user_id = t.user_id AND ` + rest,
			append([]any{appID}, args...), true, nil
	}
	cond, args, err := filterSQL(f, now)
	if err != nil {
		return "", nil, false, err
	}
	return `SELECT COUNT(*), COUNT(DISTINCT d.user_id), COUNT(d.user_id) FROM devices d
		WHERE d.app_id = ? AND ` + cond, append([]any{appID}, args...), false, nil
}

// prefixed qualifies each column of a list with a table alias.
func prefixed(alias, columns string) string {
	parts := strings.Split(columns, ",")
	for i, c := range parts {
		parts[i] = alias + strings.TrimSpace(c)
	}
	return strings.Join(parts, ", ")
}

// devicesWhere calls found for each device of the app that l finds for
// values.
func (s *UserStore) devicesWhere(ctx context.Context, l Lookup, appID string, values []string, found func(herald.Device)) error {
	return s.reader().lookup(ctx, l, appID, values, func(row scanner) error {
		d, err := scanDevice(row)
		if err == nil {
			found(d)
		}
		return err
	})
}
