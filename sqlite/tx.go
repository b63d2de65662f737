package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// errConflict is returned inside a transaction when a guarded write found
// its row changed by another writer since it was read: the transaction is
// run again from the start, on the new state.
var errConflict = errors.New("sqlite: row changed concurrently")

// txAttempts bounds how often a transaction that lost a race is run again.
const txAttempts = 8

// inTxRetry runs fn in a write transaction like inTx, and runs it again
// when a guarded write lost a race (errConflict) or, with retryUnique, when
// an insert met a unique violation that a concurrent writer caused (the
// next run sees that writer's row and takes the other path).
func (db *DB) inTxRetry(ctx context.Context, retryUnique bool, fn func(tx *sql.Tx) error) error {
	for attempt := 1; ; attempt++ {
		err := db.inTx(ctx, fn)
		retry := errors.Is(err, errConflict) || retryUnique && err != nil && isUniqueViolation(err)
		switch {
		case !retry:
			return err
		case attempt == txAttempts:
			return fmt.Errorf("sqlite: gave up after %d attempts: %w", attempt, err)
		case ctx.Err() != nil:
			return ctx.Err()
		}
	}
}

// guard turns a guarded write's result into errConflict when it changed no
// row.
func guard(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return errors.Join(errConflict, err)
	}
	return nil
}

// inList renders states (constants of the domain, never user input) as the
// body of an SQL IN list.
func inList[S ~string](states []S) string {
	quoted := make([]string, len(states))
	for i, s := range states {
		quoted[i] = "'" + strings.ReplaceAll(string(s), "'", "''") + "'"
	}
	return strings.Join(quoted, ", ")
}
