package sqlite

import (
	"context"
	"database/sql"
)

// SubscribeTopic adds the topic to every device of the users.
func (db *DB) SubscribeTopic(ctx context.Context, appID, topic string, userIDs []string) (int, error) {
	return db.forEachUser(ctx, userIDs, `INSERT INTO device_topics (app_id, device_id, topic)
		SELECT app_id, device_id, ? FROM devices WHERE app_id = ? AND user_id = ? ON CONFLICT DO NOTHING`,
		func(user string) []any { return []any{topic, appID, user} })
}

// UnsubscribeTopic removes the topic from every device of the users.
func (db *DB) UnsubscribeTopic(ctx context.Context, appID, topic string, userIDs []string) (int, error) {
	return db.forEachUser(ctx, userIDs, `DELETE FROM device_topics WHERE app_id = ? AND topic = ? AND device_id IN
		(SELECT device_id FROM devices WHERE app_id = ? AND user_id = ?)`,
		func(user string) []any { return []any{appID, topic, appID, user} })
}

// forEachUser runs one statement per user in one transaction and sums the
// rows it touched.
func (db *DB) forEachUser(ctx context.Context, userIDs []string, query string, args func(user string) []any) (int, error) {
	total := 0
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		stmt, err := tx.PrepareContext(ctx, query)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, u := range userIDs {
			res, err := stmt.ExecContext(ctx, args(u)...)
			if err != nil {
				return err
			}
			n, _ := res.RowsAffected()
			total += int(n)
		}
		return nil
	})
	return total, err
}
