package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/riverqueue/river/rivermigrate"
)

// The states of the migrations a readiness probe reports (/readyz).
const (
	// MigrationsCurrent: every migration of this version is applied.
	MigrationsCurrent = "current"
	// MigrationsPending: some are not applied yet.
	MigrationsPending = "pending"
	// MigrationsUnknown: the probe could not tell (the database did not
	// answer, or the check failed).
	MigrationsUnknown = "unknown"
)

// ErrMigrationsPending is what an engine's migration check returns, wrapped,
// when a migration of this version is not applied.
var ErrMigrationsPending = errors.New("migrations pending")

// MigrationState is the state a failed migration check leaves: pending
// when it found migrations to apply, unknown when it could not tell.
func MigrationState(err error) string {
	if errors.Is(err, ErrMigrationsPending) {
		return MigrationsPending
	}
	return MigrationsUnknown
}

// Unready is why a store cannot take traffic: a short reason safe to
// answer to anyone (web.Health does), the state of the migrations when
// the probe stopped, and the cause, for the log.
type Unready struct {
	reason     string
	migrations string
	err        error
}

// NewUnready returns an *Unready with reason, without paths or driver
// text, the migration state the probe knew (MigrationsCurrent and the
// others), and its cause.
func NewUnready(reason, migrations string, err error) *Unready {
	return &Unready{reason: reason, migrations: migrations, err: err}
}

// Reason is the short reason, without paths or driver text.
func (e *Unready) Reason() string { return e.reason }

// Migrations is the state of the migrations when the probe stopped.
func (e *Unready) Migrations() string { return e.migrations }

func (e *Unready) Error() string { return e.reason + ": " + e.err.Error() }

func (e *Unready) Unwrap() error { return e.err }

// probeEvery bounds how often readiness probes the database: answers
// within it reuse the last probe, so /readyz cannot hammer the store.
const probeEvery = time.Second

// Readiness caches an engine's readiness probe for a second; concurrent
// callers share one probe.
type Readiness struct {
	mu  sync.Mutex
	at  time.Time
	err error
}

// Check returns the last answer of probe, probing again when it is older
// than a second.
func (r *Readiness) Check(ctx context.Context, probe func(context.Context) error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	// The wall clock, not a store's Now: tests freeze that, and this
	// bounds work rather than deciding anything about data.
	if now := time.Now(); r.at.IsZero() || now.Sub(r.at) >= probeEvery {
		// A client hanging up must not cache "not ready" for everyone.
		r.err = probe(context.WithoutCancel(ctx))
		r.at = time.Now()
	}
	return r.err
}

// Recheck is Check without the cache: it probes again unless a probe
// ended after the call began (concurrent callers share it). An outage
// watcher asks it, where a probe a second old may miss an outage that
// has just begun.
func (r *Readiness) Recheck(ctx context.Context, probe func(context.Context) error) error {
	asked := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.at.After(asked) {
		r.err = probe(context.WithoutCancel(ctx))
		r.at = time.Now()
	}
	return r.err
}

// CheckMigrations returns ErrMigrationsPending (wrapped, for River's)
// unless neither goose's provider p nor River's migrator m has a migration
// to apply: the one check both engines make.
func CheckMigrations[TTx any](ctx context.Context, p *goose.Provider, m *rivermigrate.Migrator[TTx]) error {
	pending, err := p.HasPending(ctx)
	if err != nil {
		return err
	}
	if pending {
		return ErrMigrationsPending
	}
	res, err := m.Validate(ctx, nil)
	if err != nil {
		return err
	}
	if !res.OK {
		return fmt.Errorf("river: %w: %v", ErrMigrationsPending, res.Messages)
	}
	return nil
}

// SchemaVersion is the version of Herald's schema in the database and the
// newest migration this binary holds.
type SchemaVersion struct{ Database, Binary int64 }

// Newer reports whether a newer binary migrated the database: this one
// may not work with the schema it finds (a rolling upgrade's old nodes).
func (v SchemaVersion) Newer() bool { return v.Database > v.Binary }

// SchemaVersionOf reads goose's provider p for the two versions.
func SchemaVersionOf(ctx context.Context, p *goose.Provider) (SchemaVersion, error) {
	db, err := p.GetDBVersion(ctx)
	if err != nil {
		return SchemaVersion{}, err
	}
	sources := p.ListSources()
	v := SchemaVersion{Database: db}
	if len(sources) > 0 {
		v.Binary = sources[len(sources)-1].Version
	}
	return v, nil
}
