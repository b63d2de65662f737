package sim

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/heraldpush/herald/postgres"
	"github.com/heraldpush/herald/postgres/pgtest"
)

const pgJobTable = `CREATE TABLE sim_job (
	id BIGSERIAL PRIMARY KEY,
	kind TEXT NOT NULL,
	args BYTEA NOT NULL,
	state TEXT NOT NULL,
	scheduled_at BIGINT NOT NULL,
	attempt INTEGER NOT NULL DEFAULT 0,
	max_attempts INTEGER NOT NULL,
	attempted_at BIGINT NOT NULL DEFAULT 0,
	node TEXT NOT NULL DEFAULT ''
)`

// openPostgres makes the run's store a schema of its own on the
// PostgreSQL database at base, migrated.
func openPostgres(w *world, base string) *env {
	ctx := context.Background()
	db, err := postgres.Open(ctx, pgtest.NewSchema(w.t, base, map[string]string{"pool_max_conns": "4"}))
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		w.t.Fatal(err)
	}
	if _, err := db.SQL().Exec(pgJobTable); err != nil {
		w.t.Fatal(err)
	}
	db.Now = time.Now
	db.Queue = pgQueue{}
	return &env{w: w, sql: db.SQL(), pg: true, store: db.Store}
}

// pgQueue inserts and cancels jobs in the store's transactions on
// PostgreSQL.
type pgQueue struct{}

func (pgQueue) InsertManyTx(ctx context.Context, tx pgx.Tx, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error) {
	return insertJobs(params, func(kind string, args []byte, state string, at int64, maxAttempts int) (int64, error) {
		var id int64
		err := tx.QueryRow(ctx, `INSERT INTO sim_job (kind, args, state, scheduled_at, max_attempts) VALUES ($1,$2,$3,$4,$5) RETURNING id`,
			kind, args, state, at, maxAttempts).Scan(&id)
		return id, err
	})
}

func (pgQueue) JobCancelTx(ctx context.Context, tx pgx.Tx, id int64) (*rivertype.JobRow, error) {
	_, err := tx.Exec(ctx, `UPDATE sim_job SET state = 'cancelled' WHERE id = $1 AND state IN ('available','scheduled','retryable')`, id)
	return &rivertype.JobRow{ID: id}, err
}
