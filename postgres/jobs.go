package postgres

import (
	"context"
	"time"

	"github.com/heraldpush/herald/sqlstore"
)

// releasedError is the attempt error a released job carries, in the
// shape River writes its own (rivertype.AttemptError), as its rescuer
// does for the jobs it rescues.
const releasedError = `the node running it stopped beating: released to the live nodes`

// ReleaseJobs makes the running jobs that one of clients (River client
// IDs: the nodes, see server.New) fetched last available at at, with an
// attempt error saying why (sqlstore.JobReleaser). A job out of attempts
// is left to River's rescuer, which discards it. The live nodes' River
// clients fetch them at their next look (pollInterval at most).
func (engine) ReleaseJobs(ctx context.Context, tx sqlstore.Tx, clients []string, at time.Time) (int64, error) {
	return tx.Exec(ctx, `UPDATE river_job SET state = 'available', scheduled_at = ?,
		errors = array_append(errors, jsonb_build_object('at', CAST(? AS timestamptz), 'attempt', attempt, 'error', CAST(? AS text), 'trace', ''))
		WHERE state = 'running' AND attempted_by[cardinality(attempted_by)] = ANY(?) AND attempt < max_attempts`,
		at, at, releasedError, clients)
}
