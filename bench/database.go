package bench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Database is PostgreSQL's own work during a run on it: the WAL it wrote
// and, when it runs on this machine, the CPU time of its processes, over
// the registration and the delivery phase (and the events phase, when the
// run had one).
type Database struct {
	// Scope says what the figures cover.
	Scope    string         `json:"scope"`
	Register DatabasePhase  `json:"register"`
	Deliver  DatabasePhase  `json:"deliver"`
	Events   *DatabasePhase `json:"events,omitempty"`
}

// DatabasePhase is PostgreSQL's work over one phase, in all and per 1,000
// of the phase's units (registrations, deliveries or events).
type DatabasePhase struct {
	// CPUSeconds is nil when PostgreSQL's processes could not be read
	// (it runs on another machine, or /proc is not readable).
	CPUSeconds        *float64 `json:"cpuSeconds"`
	CPUSecondsPer1000 *float64 `json:"cpuSecondsPer1000"`
	WALBytes          int64    `json:"walBytes"`
	WALBytesPer1000   float64  `json:"walBytesPer1000"`
	// RowVersionsPer1000 is the row versions the run's tables gained
	// (inserted, updated, deleted) per 1,000 units; Tables has each
	// table's.
	RowVersionsPer1000 float64     `json:"rowVersionsPer1000"`
	Tables             []TableRows `json:"tables,omitempty"`
	// WALShares is the phase's WAL by relation, largest first, when the
	// role may read the WAL (pg_walinspect, as a superuser or with its
	// functions granted); nil otherwise.
	WALShares []WALShare `json:"walShares,omitempty"`
}

// TableRows is the row versions one table of the run gained over a phase
// (pg_stat_user_tables): Updated counts HOTUpdated, the updates that
// wrote no index entry.
type TableRows struct {
	Table      string `json:"table"`
	Inserted   int64  `json:"inserted"`
	Updated    int64  `json:"updated"`
	HOTUpdated int64  `json:"hotUpdated"`
	Deleted    int64  `json:"deleted"`
}

// WALShare is the WAL of one relation over a phase: a table, an index or
// a table's TOAST ("t (TOAST)") of the run; "(other)" for any other
// relation's (another schema's or database's); for records that name no
// relation (commits), their resource manager.
type WALShare struct {
	Relation string `json:"relation"`
	Records  int64  `json:"records"`
	// Bytes counts FPIBytes, the full-page images among them.
	Bytes    int64 `json:"bytes"`
	FPIBytes int64 `json:"fpiBytes"`
}

// The scopes of the database figures.
const (
	dbScopeLocal  = "every PostgreSQL process on this machine (the postmaster, its background workers and every backend, other clients' included); WAL is the cluster's"
	dbScopeRemote = "WAL only (the cluster's): PostgreSQL's processes are not on this machine, so its CPU is not measured"
)

// dbMeter reads PostgreSQL's WAL position and, when its postmaster is a
// process of this machine, the CPU time of the postmaster and every child
// it has or had (a backend that exited is in the postmaster's reaped
// children's time).
type dbMeter struct {
	conn *pgx.Conn
	// postmaster is its pid, "" when its processes cannot be read.
	postmaster string
}

// dbReading is one reading of a dbMeter.
type dbReading struct {
	wal    int64
	cpu    float64
	tables map[string]TableRows
}

// statsSettle is how long a reading waits for the backends' table
// counters: an idle backend reports them within 10 s.
const statsSettle = 11 * time.Second

// openDBMeter connects to the database at dbURL and finds its postmaster:
// the parent of this connection's backend, when that is a process of this
// machine named postgres.
func openDBMeter(ctx context.Context, dbURL string) (*dbMeter, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return nil, err
	}
	conn, err := pgx.ConnectConfig(ctx, cfg.ConnConfig)
	if err != nil {
		return nil, fmt.Errorf("bench: database meter: %w", err)
	}
	m := &dbMeter{conn: conn}
	var backend int
	if err := conn.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&backend); err != nil {
		conn.Close(ctx)
		return nil, fmt.Errorf("bench: database meter: %w", err)
	}
	if st, err := readStat(strconv.Itoa(backend)); err == nil && st.comm == "postgres" {
		if pm, err := readStat(st.ppid); err == nil && pm.comm == "postgres" {
			m.postmaster = st.ppid
		}
	}
	return m, nil
}

// scope says what the meter's figures cover.
func (m *dbMeter) scope() string {
	if m.postmaster == "" {
		return dbScopeRemote
	}
	return dbScopeLocal
}

// read takes a reading: the WAL position and PostgreSQL's CPU seconds, and
// then the row versions of the run's tables.
func (m *dbMeter) read(ctx context.Context) (dbReading, error) {
	var r dbReading
	ctx, cancel := context.WithTimeout(ctx, statsSettle+10*time.Second)
	defer cancel()
	if err := m.conn.QueryRow(ctx, `SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint`).Scan(&r.wal); err != nil {
		return r, fmt.Errorf("bench: database meter: WAL position: %w", err)
	}
	if err := m.readCPU(&r); err != nil {
		return r, err
	}
	var err error
	r.tables, err = m.tableRows(ctx)
	return r, err
}

// readCPU reads the CPU seconds of the postmaster with its reaped children
// and of each living child into r.
func (m *dbMeter) readCPU(r *dbReading) error {
	if m.postmaster == "" {
		return nil
	}
	pm, err := readStat(m.postmaster)
	if err != nil {
		return fmt.Errorf("bench: database meter: postmaster: %w", err)
	}
	r.cpu = pm.cpu + pm.childrenCPU
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		st, err := readStat(e.Name())
		if err == nil && st.ppid == m.postmaster {
			r.cpu += st.cpu // a child that exits meanwhile is missed once: its time is then the postmaster's
		}
	}
	return nil
}

// tableRows reads the row versions of the run's tables (those of the
// connection's search_path) after the backends' counters settle.
func (m *dbMeter) tableRows(ctx context.Context) (map[string]TableRows, error) {
	select {
	case <-time.After(statsSettle):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	rows, err := m.conn.Query(ctx, `SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del
		FROM pg_stat_user_tables WHERE schemaname = current_schema()`)
	if err != nil {
		return nil, fmt.Errorf("bench: database meter: table rows: %w", err)
	}
	tables := map[string]TableRows{}
	for rows.Next() {
		var t TableRows
		if err := rows.Scan(&t.Table, &t.Inserted, &t.Updated, &t.HOTUpdated, &t.Deleted); err != nil {
			return nil, fmt.Errorf("bench: database meter: table rows: %w", err)
		}
		tables[t.Table] = t
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("bench: database meter: table rows: %w", err)
	}
	return tables, nil
}

// vacuum vacuums the tables of the run's schema (the connection's
// search_path).
func (m *dbMeter) vacuum(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	var tables string
	if err := m.conn.QueryRow(ctx, `SELECT coalesce(string_agg(quote_ident(tablename), ', '), '') FROM pg_tables
		WHERE schemaname = current_schema()`).Scan(&tables); err != nil {
		return fmt.Errorf("bench: database meter: vacuum: %w", err)
	}
	if tables == "" {
		return nil
	}
	if _, err := m.conn.Exec(ctx, `VACUUM `+tables); err != nil {
		return fmt.Errorf("bench: database meter: vacuum: %w", err)
	}
	return nil
}

// walSharesSQL sums the WAL between two positions by the relation each
// record's first block names (pg_walinspect, in the schema %s: the run's
// search_path is its own).
const walSharesSQL = `WITH rec AS (
	SELECT resource_manager, regexp_match(block_ref, 'rel (\d+)/(\d+)/(\d+)') AS m, count(*) AS n,
		sum(record_length) AS bytes, sum(fpi_length) AS fpi
	FROM %s.pg_get_wal_records_info($1::text::pg_lsn, $2::text::pg_lsn) GROUP BY 1, 2
), named AS (
	SELECT rec.*, CASE WHEN m IS NULL THEN resource_manager
		ELSE coalesce((SELECT CASE WHEN c.relnamespace = current_schema()::regnamespace THEN c.relname
			WHEN t.relnamespace = current_schema()::regnamespace THEN t.relname || ' (TOAST)' END
			FROM pg_class c LEFT JOIN pg_class t ON t.reltoastrelid IN (c.oid, (SELECT indrelid FROM pg_index WHERE indexrelid = c.oid))
			WHERE m[2]::oid = (SELECT oid FROM pg_database WHERE datname = current_database())
			AND c.oid = pg_filenode_relation(m[1]::oid, m[3]::oid)), '(other)') END AS relation
	FROM rec
)
SELECT relation, sum(n)::bigint, sum(bytes)::bigint, sum(fpi)::bigint FROM named GROUP BY relation ORDER BY 3 DESC`

// walShares returns the WAL from one position to another by relation; nil
// when the role cannot read the WAL.
func (m *dbMeter) walShares(ctx context.Context, from, to int64) []WALShare {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var schema string
	if err := m.conn.QueryRow(ctx, `SELECT quote_ident(extnamespace::regnamespace::text) FROM pg_extension
		WHERE extname = 'pg_walinspect'`).Scan(&schema); err != nil {
		return nil // not installed
	}
	rows, err := m.conn.Query(ctx, fmt.Sprintf(walSharesSQL, schema), formatLSN(from), formatLSN(to))
	if err != nil {
		return nil
	}
	shares, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (WALShare, error) {
		var s WALShare
		err := row.Scan(&s.Relation, &s.Records, &s.Bytes, &s.FPIBytes)
		return s, err
	})
	if err != nil {
		return nil // no pg_walinspect, or no right to it: the shares are left out
	}
	return shares
}

// formatLSN writes a WAL position as PostgreSQL writes a pg_lsn.
func formatLSN(lsn int64) string { return fmt.Sprintf("%X/%X", uint64(lsn)>>32, uint32(lsn)) }

// phase is the work between two readings, for units of the phase.
func (m *dbMeter) phase(ctx context.Context, from, to dbReading, units int) DatabasePhase {
	p := DatabasePhase{WALBytes: to.wal - from.wal, WALShares: m.walShares(ctx, from.wal, to.wal)}
	var versions int64
	for name, t := range to.tables {
		was := from.tables[name]
		t.Inserted, t.Updated, t.HOTUpdated, t.Deleted = t.Inserted-was.Inserted, t.Updated-was.Updated,
			t.HOTUpdated-was.HOTUpdated, t.Deleted-was.Deleted
		if t.Inserted+t.Updated+t.Deleted > 0 {
			p.Tables = append(p.Tables, t)
			versions += t.Inserted + t.Updated + t.Deleted
		}
	}
	slices.SortFunc(p.Tables, func(a, b TableRows) int { return strings.Compare(a.Table, b.Table) })
	if units > 0 {
		p.WALBytesPer1000 = float64(p.WALBytes) * 1000 / float64(units)
		p.RowVersionsPer1000 = float64(versions) * 1000 / float64(units)
	}
	if m.postmaster != "" {
		cpu := to.cpu - from.cpu
		p.CPUSeconds = &cpu
		if units > 0 {
			per := cpu * 1000 / float64(units)
			p.CPUSecondsPer1000 = &per
		}
	}
	return p
}

func (m *dbMeter) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	m.conn.Close(ctx)
}

// procStat is what the database meter needs of /proc/<pid>/stat.
type procStat struct {
	comm, ppid string
	// cpu is utime + stime, childrenCPU cutime + cstime (of the children
	// it waited for), in seconds.
	cpu, childrenCPU float64
}

// readStat reads /proc/<pid>/stat.
func readStat(pid string) (procStat, error) {
	raw, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return procStat{}, err
	}
	return parseStat(pid, string(raw))
}

// parseStat parses a /proc/<pid>/stat line.
func parseStat(pid, raw string) (procStat, error) {
	open, end := strings.IndexByte(raw, '('), strings.LastIndexByte(raw, ')')
	if open < 0 || end < open {
		return procStat{}, fmt.Errorf("/proc/%s/stat: no command name", pid)
	}
	// Fields from 3 (state) on; utime, stime, cutime, cstime are 14–17.
	fields := strings.Fields(raw[end+1:])
	if len(fields) < 15 {
		return procStat{}, fmt.Errorf("/proc/%s/stat: %d fields", pid, len(fields))
	}
	var ticks [4]int64
	for i := range ticks {
		n, err := strconv.ParseInt(fields[11+i], 10, 64)
		if err != nil {
			return procStat{}, fmt.Errorf("/proc/%s/stat: %w", pid, err)
		}
		ticks[i] = n
	}
	return procStat{
		comm: raw[open+1 : end], ppid: fields[1],
		cpu:         float64(ticks[0]+ticks[1]) / clockTicks,
		childrenCPU: float64(ticks[2]+ticks[3]) / clockTicks,
	}, nil
}
