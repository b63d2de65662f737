package sqlstore

import (
	"context"
	"strings"

	"github.com/heraldpush/herald"
)

// DevicesByID returns those of the devices that still exist.
func (s *Store) DevicesByID(ctx context.Context, appID string, deviceIDs []string) (map[string]herald.Device, error) {
	out := make(map[string]herald.Device, len(deviceIDs))
	err := s.devicesWhere(ctx, `device_id`, appID, deviceIDs, func(d herald.Device) { out[d.ID] = d })
	return out, err
}

// DevicesOfUsers returns the devices mapped to each of the users.
func (s *Store) DevicesOfUsers(ctx context.Context, appID string, userIDs []string) (map[string][]herald.Device, error) {
	out := make(map[string][]herald.Device, len(userIDs))
	err := s.devicesWhere(ctx, `user_id`, appID, userIDs, func(d herald.Device) { out[*d.UserID] = append(out[*d.UserID], d) })
	return out, err
}

// DevicesOfTopic returns the devices subscribed to a topic.
func (s *Store) DevicesOfTopic(ctx context.Context, appID, topic string) ([]herald.Device, error) {
	return s.deviceList(ctx, `SELECT `+prefixed("d.", deviceColumns)+` FROM devices d JOIN device_topics t
		ON t.app_id = d.app_id AND t.device_id = d.device_id WHERE d.app_id = ? AND t.topic = ? ORDER BY d.created_at, d.device_id`, appID, topic)
}

// AllDevices returns every device of the app.
func (s *Store) AllDevices(ctx context.Context, appID string) ([]herald.Device, error) {
	return s.deviceList(ctx, `SELECT `+deviceColumns+` FROM devices WHERE app_id = ? ORDER BY created_at, device_id`, appID)
}

func (s *Store) deviceList(ctx context.Context, query string, args ...any) ([]herald.Device, error) {
	var out []herald.Device
	err := s.reader().each(ctx, func(row scanner) error {
		d, err := scanDevice(row)
		out = append(out, d)
		return err
	}, query, args...)
	return out, err
}

// prefixed qualifies each column of a list with a table alias.
func prefixed(alias, columns string) string {
	parts := strings.Split(columns, ",")
	for i, c := range parts {
		parts[i] = alias + strings.TrimSpace(c)
	}
	return strings.Join(parts, ", ")
}

// devicesWhere calls found for each device of the app whose column holds one
// of values, in batches that keep under SQLite's variable limit.
func (s *Store) devicesWhere(ctx context.Context, column, appID string, values []string, found func(herald.Device)) error {
	const batch = 500
	for start := 0; start < len(values); start += batch {
		part := values[start:min(start+batch, len(values))]
		args := make([]any, 0, len(part)+1)
		args = append(args, appID)
		for _, v := range part {
			args = append(args, v)
		}
		err := s.reader().each(ctx, func(row scanner) error {
			d, err := scanDevice(row)
			if err == nil {
				found(d)
			}
			return err
		}, `SELECT `+deviceColumns+` FROM devices WHERE app_id = ? AND `+column+` IN (`+placeholders(len(part))+`)
			ORDER BY created_at, device_id`, args...)
		if err != nil {
			return err
		}
	}
	return nil
}
