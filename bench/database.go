package bench

import (
	"context"
	"fmt"
	"os"
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
	wal int64
	cpu float64
}

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

// read takes a reading: the WAL position, and the CPU seconds of the
// postmaster with its reaped children and of each living child.
func (m *dbMeter) read(ctx context.Context) (dbReading, error) {
	var r dbReading
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := m.conn.QueryRow(ctx, `SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint`).Scan(&r.wal); err != nil {
		return r, fmt.Errorf("bench: database meter: WAL position: %w", err)
	}
	if m.postmaster == "" {
		return r, nil
	}
	pm, err := readStat(m.postmaster)
	if err != nil {
		return r, fmt.Errorf("bench: database meter: postmaster: %w", err)
	}
	r.cpu = pm.cpu + pm.childrenCPU
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return r, err
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
	return r, nil
}

// phase is the work between two readings, for units of the phase.
func (m *dbMeter) phase(from, to dbReading, units int) DatabasePhase {
	p := DatabasePhase{WALBytes: to.wal - from.wal}
	if units > 0 {
		p.WALBytesPer1000 = float64(p.WALBytes) * 1000 / float64(units)
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
