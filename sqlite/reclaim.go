package sqlite

import (
	"context"
	"fmt"

	"github.com/heraldpush/herald/sqlstore"
)

// Reclaim gives up to pages of the file's free pages back to the file
// system (SQLite's incremental vacuum), in one transaction on the
// writer's bulk lane, and returns how many free pages are left. A store
// made before incremental vacuum (auto_vacuum off until a VACUUM, see
// docs/operations.md) reclaims nothing and reports none left.
func (db *DB) Reclaim(ctx context.Context, pages int) (left int64, err error) {
	err = db.writer.Run(ctx, sqlstore.TxOptions{Bulk: true}, func(tx sqlstore.Tx) error {
		left = 0
		var mode int
		if err := tx.QueryRow(ctx, `PRAGMA auto_vacuum`).Scan(&mode); err != nil || mode != 2 {
			return err
		}
		if _, err := tx.Exec(ctx, fmt.Sprintf(`PRAGMA incremental_vacuum(%d)`, max(pages, 1))); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `PRAGMA freelist_count`).Scan(&left)
	})
	return left, engine{db}.Translate(err)
}
