package sqlstore

import "context"

// SubscribeTopic adds the topic to every device of the users.
func (s *UserStore) SubscribeTopic(ctx context.Context, appID, topic string, userIDs []string) (int, error) {
	return s.forEachUser(ctx, userIDs, `INSERT INTO device_topics (app_id, device_id, topic)
		SELECT app_id, device_id, CAST(? AS TEXT) FROM devices WHERE app_id = ? AND user_id = ? ON CONFLICT DO NOTHING`,
		func(user string) []any { return []any{topic, appID, user} })
}

// UnsubscribeTopic removes the topic from every device of the users.
func (s *UserStore) UnsubscribeTopic(ctx context.Context, appID, topic string, userIDs []string) (int, error) {
	return s.forEachUser(ctx, userIDs, `DELETE FROM device_topics WHERE app_id = ? AND topic = ? AND device_id IN
		(SELECT device_id FROM devices WHERE app_id = ? AND user_id = ?)`,
		func(user string) []any { return []any{appID, topic, appID, user} })
}

// forEachUser runs one statement per user in one transaction and sums the
// rows it touched.
func (s *UserStore) forEachUser(ctx context.Context, userIDs []string, query string, args func(user string) []any) (int, error) {
	total := 0
	err := s.inTx(ctx, func(c conn) error {
		list := make([][]any, len(userIDs))
		for i, u := range userIDs {
			list[i] = args(u)
		}
		ns, err := c.execMany(ctx, query, list)
		total = 0
		for _, n := range ns {
			total += int(n)
		}
		return err
	})
	return total, err
}
