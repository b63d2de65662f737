package sim

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/heraldpush/herald/delivery"
	"github.com/heraldpush/herald/sqlite"
	"github.com/heraldpush/herald/sqlstore"
)

// env is the store of a run and the queue that plays River's part: the
// store inserts its jobs through queue (in its own transactions, so a
// job exists exactly when the write that made it committed), into a
// table of the simulation's beside the store's; the scheduler fetches,
// completes, retries and rescues them as River's producer, completer and
// rescuer would, on the bubble's clock.
type env struct {
	w     *world
	sql   *sql.DB // the store's database, for the job table and the checks
	pg    bool    // numbered placeholders
	store *sqlstore.Store
}

// rebind numbers a query's placeholders on PostgreSQL.
func (e *env) rebind(q string) string {
	if !e.pg {
		return q
	}
	n := 0
	return placeholder.ReplaceAllStringFunc(q, func(string) string { n++; return "$" + strconv.Itoa(n) })
}

var placeholder = regexp.MustCompile(`\?`)

func (e *env) queryRow(q string, args ...any) *sql.Row { return e.sql.QueryRow(e.rebind(q), args...) }
func (e *env) query(q string, args ...any) (*sql.Rows, error) {
	return e.sql.Query(e.rebind(q), args...)
}
func (e *env) exec(q string, args ...any) (sql.Result, error) {
	return e.sql.Exec(e.rebind(q), args...)
}

const jobTable = `CREATE TABLE sim_job (
	id INTEGER PRIMARY KEY AUTOINCREMENT,
	kind TEXT NOT NULL,
	args BLOB NOT NULL,
	state TEXT NOT NULL,
	scheduled_at INTEGER NOT NULL,
	attempt INTEGER NOT NULL DEFAULT 0,
	max_attempts INTEGER NOT NULL,
	attempted_at INTEGER NOT NULL DEFAULT 0,
	node TEXT NOT NULL DEFAULT ''
)`

// template is a migrated store with the job table, made once per process
// and copied for each run (migrating takes longer than most runs).
var template struct {
	once sync.Once
	data []byte
	err  error
}

func openEnv(w *world) *env {
	template.once.Do(func() {
		dir, err := os.MkdirTemp("", "herald-sim-")
		if err != nil {
			template.err = err
			return
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "herald.db")
		db, err := sqlite.Open(context.Background(), path)
		if err == nil {
			err = db.Migrate(context.Background())
		}
		if err == nil {
			_, err = db.Writer.Exec(jobTable)
		}
		if err == nil {
			err = db.Close()
		}
		if err == nil {
			template.data, err = os.ReadFile(path)
		}
		template.err = err
	})
	if template.err != nil {
		w.t.Fatal(template.err)
	}
	path := filepath.Join(w.t.TempDir(), "herald.db")
	if err := os.WriteFile(path, template.data, 0o600); err != nil {
		w.t.Fatal(err)
	}
	db, err := sqlite.Open(context.Background(), path)
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { db.Close() })
	db.Now = time.Now
	db.Queue = queue{}
	return &env{w: w, sql: db.Writer, store: db.Store}
}

// queue inserts and cancels jobs in the store's transactions on SQLite.
type queue struct{}

func (queue) InsertManyTx(ctx context.Context, tx *sql.Tx, params []river.InsertManyParams) ([]*rivertype.JobInsertResult, error) {
	return insertJobs(params, func(kind string, args []byte, state string, at int64, maxAttempts int) (int64, error) {
		var id int64
		err := tx.QueryRowContext(ctx, `INSERT INTO sim_job (kind, args, state, scheduled_at, max_attempts) VALUES (?,?,?,?,?) RETURNING id`,
			kind, args, state, at, maxAttempts).Scan(&id)
		return id, err
	})
}

func (queue) JobCancelTx(ctx context.Context, tx *sql.Tx, id int64) (*rivertype.JobRow, error) {
	_, err := tx.ExecContext(ctx, `UPDATE sim_job SET state = 'cancelled' WHERE id = ? AND state IN ('available','scheduled','retryable')`, id)
	return &rivertype.JobRow{ID: id}, err
}

// insertJobs makes each job's row, as River's insert would: scheduled
// when due later, with River's default attempts unless its options say.
func insertJobs(params []river.InsertManyParams, insert func(kind string, args []byte, state string, at int64, maxAttempts int) (int64, error)) ([]*rivertype.JobInsertResult, error) {
	out := make([]*rivertype.JobInsertResult, len(params))
	now := time.Now()
	for i, p := range params {
		opts := river.InsertOpts{}
		if p.InsertOpts != nil {
			opts = *p.InsertOpts
		} else if o, ok := p.Args.(river.JobArgsWithInsertOpts); ok {
			opts = o.InsertOpts()
		}
		args, err := json.Marshal(p.Args)
		if err != nil {
			return nil, err
		}
		state, at := "available", now
		if !opts.ScheduledAt.IsZero() && opts.ScheduledAt.After(now) {
			state, at = "scheduled", opts.ScheduledAt
		}
		maxAttempts := opts.MaxAttempts
		if maxAttempts == 0 {
			maxAttempts = river.MaxAttemptsDefault
		}
		id, err := insert(p.Args.Kind(), args, state, at.UnixMilli(), maxAttempts)
		if err != nil {
			return nil, err
		}
		out[i] = &rivertype.JobInsertResult{Job: &rivertype.JobRow{ID: id, Kind: p.Args.Kind(), EncodedArgs: args}}
	}
	return out, nil
}

func (e *env) must(err error) {
	if err != nil {
		e.w.t.Fatal(err)
	}
}

// due counts the jobs a node may fetch now.
func (e *env) due(now time.Time) int {
	var n int
	e.must(e.queryRow(`SELECT COUNT(*) FROM sim_job WHERE state IN ('available','scheduled','retryable') AND scheduled_at <= ?`,
		now.UnixMilli()).Scan(&n))
	return n
}

// nextDue is when the next job falls due or the rescuer next frees one.
func (e *env) nextDue(now time.Time) time.Time {
	var at, rescue sql.NullInt64
	e.must(e.queryRow(`SELECT MIN(scheduled_at) FROM sim_job WHERE state IN ('available','scheduled','retryable')`).Scan(&at))
	e.must(e.queryRow(`SELECT MIN(attempted_at) FROM sim_job WHERE state = 'running'`).Scan(&rescue))
	next := int64(math.MaxInt64)
	if at.Valid {
		next = at.Int64
	}
	if rescue.Valid {
		next = min(next, rescue.Int64+delivery.RescueAfter.Milliseconds())
	}
	if next == math.MaxInt64 {
		return e.w.endAt
	}
	return time.UnixMilli(next)
}

// claim takes one of the due jobs, chosen from the seed (nodes fetching
// at once take them in any order), for n.
func (e *env) claim(n *node, now time.Time) *rivertype.JobRow {
	rows, err := e.query(`SELECT id, kind, args, attempt, max_attempts FROM sim_job
		WHERE state IN ('available','scheduled','retryable') AND scheduled_at <= ? ORDER BY id`, now.UnixMilli())
	e.must(err)
	var due []*rivertype.JobRow
	for rows.Next() {
		r := &rivertype.JobRow{}
		e.must(rows.Scan(&r.ID, &r.Kind, &r.EncodedArgs, &r.Attempt, &r.MaxAttempts))
		due = append(due, r)
	}
	e.must(rows.Err())
	rows.Close()
	if len(due) == 0 {
		return nil
	}
	r := due[e.w.rng.IntN(len(due))]
	r.Attempt++
	r.State = rivertype.JobStateRunning
	r.AttemptedAt = &now
	_, err = e.exec(`UPDATE sim_job SET state = 'running', attempt = ?, attempted_at = ?, node = ? WHERE id = ?`,
		r.Attempt, now.UnixMilli(), n.name, r.ID)
	e.must(err)
	return r
}

// complete records the end of a job's run as River's completer does: done,
// snoozed (no attempt counted), cancelled, or retried at the worker's
// NextRetry (River's default backoff, attempt⁴ seconds, without one) until
// its attempts run out. A run the rescuer took the job from records
// nothing.
func (e *env) complete(row *rivertype.JobRow, unit delivery.JobUnit, err error) {
	now := time.Now()
	state, at, attempt := "completed", now, row.Attempt
	var snooze *river.JobSnoozeError
	var cancel *river.JobCancelError
	switch {
	case err == nil:
	case errors.As(err, &snooze):
		state, at, attempt = "scheduled", now.Add(snooze.Duration), row.Attempt-1
	case errors.As(err, &cancel):
		state = "cancelled"
	case row.Attempt >= row.MaxAttempts:
		state = "discarded"
	default:
		state, at = "retryable", unit.NextRetry()
		if at.IsZero() {
			at = now.Add(time.Duration(math.Pow(float64(row.Attempt), 4)) * time.Second)
		}
	}
	if state == "discarded" || state == "retryable" {
		e.w.obs.jobErrors++
	}
	_, dberr := e.exec(`UPDATE sim_job SET state = ?, scheduled_at = ?, attempt = ? WHERE id = ? AND state = 'running' AND attempt = ?`,
		state, at.UnixMilli(), attempt, row.ID, row.Attempt)
	e.must(dberr)
}

// rescue makes jobs running for longer than RescueAfter retryable, as
// River's rescuer does (whether or not their node lives).
func (e *env) rescue(now time.Time) {
	_, err := e.exec(`UPDATE sim_job SET state = CASE WHEN attempt >= max_attempts THEN 'discarded' ELSE 'retryable' END,
		scheduled_at = ? WHERE state = 'running' AND attempted_at + ? <= ?`,
		now.UnixMilli(), delivery.RescueAfter.Milliseconds(), now.UnixMilli())
	e.must(err)
}

// insert queues a job due at at, outside any transaction of the store.
func (e *env) insert(args river.JobArgs, at time.Time) {
	raw, err := json.Marshal(args)
	e.must(err)
	_, err = e.exec(`INSERT INTO sim_job (kind, args, state, scheduled_at, max_attempts) VALUES (?,?,'scheduled',?,?)`,
		args.Kind(), raw, at.UnixMilli(), river.MaxAttemptsDefault)
	e.must(err)
}
