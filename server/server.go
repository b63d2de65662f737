// Package server assembles one Herald node and runs it: New opens the
// store on the configured engine (SQLite or PostgreSQL) and migrates it,
// resolves the secrets, builds the metrics, the delivery service and the
// retention worker and their River queue (on an injected clock in tests),
// the schedule watch and the node heartbeat when the database is shared,
// the dispatcher of the apps' delivery events (package stream),
// and the two listeners' handlers (package handler), and serves them on
// the listeners it is given. Stop takes it down in order: HTTP, workers,
// database.
//
// `herald serve` (cmd/herald) calls New after parsing its flags and
// locking its data dir, and every test that needs a whole Herald calls it
// too (internal/testenv, cmd/herald's end-to-end tests), so tests run the
// wiring the binary runs. Config nests each package's own settings
// (fcm.ClientOptions, webhook.SenderOptions, api.Limits, admin.Options)
// and passes them through untouched; what only tests change (one clock
// for the node and River, an idle queue, store wrappers that inject
// faults) is in Overrides, which `herald serve` leaves zero. The store's
// outages are logged once each (outage.go) instead of once per failing
// call.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
	"github.com/heraldpush/herald/admin"
	"github.com/heraldpush/herald/api"
	"github.com/heraldpush/herald/delivery"
	"github.com/heraldpush/herald/fcm"
	"github.com/heraldpush/herald/handler"
	"github.com/heraldpush/herald/metrics"
	"github.com/heraldpush/herald/retention"
	"github.com/heraldpush/herald/sqlstore"
	"github.com/heraldpush/herald/stream"
	"github.com/heraldpush/herald/web"
	"github.com/heraldpush/herald/webhook"
)

// Config is what New needs to assemble a node: what the operator sets
// (HERALD_* variables and flags, read by cmd/herald), each part in the
// type of the package it configures, handed on untouched.
type Config struct {
	// Database is where the store is.
	Database Database
	// Secrets returns the master key, checked against the store (see
	// herald.VerifyMasterKey), and the admin token. It is called once the
	// store is open and migrated, before anything runs: `herald serve`
	// reads or generates them in its data dir there.
	Secrets func(ctx context.Context, s *Server) (*herald.MasterKey, string, error)
	// Logger is the node's log; RiverLogger River's (warnings and up).
	// Both hold back the lines a store outage repeats (see outage).
	Logger, RiverLogger *slog.Logger
	// Version and Commit label the metrics.
	Version, Commit string
	// FCM is how the node reaches FCM.
	FCM FCM
	// Webhook is how webhooks are sent; its AllowPrivate also relaxes the
	// admin API's check of webhook URLs (HERALD_WEBHOOK_ALLOW_PRIVATE).
	Webhook webhook.SenderOptions
	// API is the public API's rate limits (zero for none).
	API api.Limits
	// Admin is the admin listener's settings; an empty AdminURL is
	// "http://" and the admin listener's address.
	Admin admin.Options
	// RetentionDays is how long a finished push's body and rows are kept
	// (HERALD_RETENTION_DAYS; herald.DefaultRetentionDays when zero).
	RetentionDays int
}

// Database is where a node's store is: PostgreSQL at URL when it is set
// (HERALD_DATABASE_URL), else the embedded SQLite store at SQLitePath (its
// directory locked by the caller).
type Database struct {
	URL, SQLitePath string
}

// FCM is how a node reaches FCM.
type FCM struct {
	// Endpoint is FCM's base URL (HERALD_FCM_ENDPOINT).
	Endpoint string
	// Client configures the FCM client (HERALD_FCM_ALLOW_ANY_TOKEN_URI,
	// HERALD_FCM_TRANSPORT); its AllowAnyTokenURI also relaxes the admin
	// API's check of uploaded service accounts. Its clock is the node's
	// and its Timeout Overrides.FCMTimeout.
	Client fcm.ClientOptions
	// ProjectRate is the sends a minute of all apps of one FCM project
	// (HERALD_FCM_PROJECT_RATE; herald.DefaultFCMProjectRate when zero).
	ProjectRate int
}

// Overrides are what tests change in a node, apart from the production
// Config: `herald serve` passes none. The zero value is production's.
type Overrides struct {
	// Clock is the node's clock, River's included (time.Now when nil): a
	// scheduled or deferred job falls due when it reads the job's time.
	Clock func() time.Time
	// FanoutPage and SendSlice tune delivery (see delivery.Config; its
	// defaults when zero).
	FanoutPage int
	SendSlice  time.Duration
	// FCMTimeout bounds each FCM request and token exchange (the fcm
	// package's 10 s when zero).
	FCMTimeout time.Duration
	// DeliveryStore wraps the store delivery works on (its jobs and the
	// schedule watch), to inject faults; HandlerStore the one both
	// listeners' handlers use.
	DeliveryStore func(delivery.Store) delivery.Store
	HandlerStore  func(handler.Store) handler.Store
	// IdleQueue leaves River working no queue of Herald's: jobs are
	// inserted and stay where they are (a scheduled push stays scheduled),
	// for tests of what the handlers show of them.
	IdleQueue bool
}

// Server is a running node.
type Server struct {
	// DB is the open engine and Store the store on it.
	DB    Engine
	Store *sqlstore.Store
	// Migrated counts the migrations New applied.
	Migrated int
	// Delivery is the delivery service its workers and handlers share.
	Delivery *delivery.Service
	// Retention is the daily retention worker (River runs its ticks).
	Retention *retention.Worker
	// MasterKey and AdminToken are the secrets Config.Secrets returned.
	MasterKey  *herald.MasterKey
	AdminToken string
	// PublicURL and AdminURL are the listeners' URLs.
	PublicURL, AdminURL string

	cfg     Config
	over    Overrides
	metrics *metrics.Metrics
	log     *slog.Logger
	outage  *outage
	queue   sqlstore.QueueRunner
	// node is this process's name among the nodes on a shared database:
	// its heartbeat's and its River client's ID, so that a node that
	// finds it dead knows the jobs it was running.
	node      string
	stopBeat  func() // ends the node heartbeat (shared database)
	stopWatch func() // ends the schedule watch (shared database)
	// stopStream ends the dispatcher of the apps' delivery events.
	stopStream func()
	servers    []*http.Server
	errc       chan error
	stopOnce   sync.Once
	stopErr    error
}

// New assembles a node and serves it on publicLn and adminLn (closed by
// Stop, or when New fails). On failure everything it started is stopped
// again, with the "shutting down" and "stopped" lines logged.
func New(ctx context.Context, cfg Config, publicLn, adminLn net.Listener, o Overrides) (_ *Server, err error) {
	defer func() {
		if err != nil { // closed by the servers' shutdown once they serve them
			publicLn.Close()
			adminLn.Close()
		}
	}()
	s := &Server{cfg: cfg, over: o, errc: make(chan error, 2)}
	s.outage = newOutage(cfg.Logger, s.probeStore)
	s.log = slog.New(s.outage.quiet(cfg.Logger.Handler(), false))
	if err := s.start(ctx, publicLn, adminLn); err != nil {
		return nil, errors.Join(err, s.Stop(fmt.Errorf("start failed: %w", err)))
	}
	return s, nil
}

// Log is the node's logger, holding back the lines an outage repeats.
func (s *Server) Log() *slog.Logger { return s.log }

// start opens the store, then starts the workers and serves the listeners.
func (s *Server) start(ctx context.Context, publicLn, adminLn net.Listener) error {
	cfg, o := s.cfg, s.over
	db, store, migrated, err := Open(ctx, cfg.Database.URL, cfg.Database.SQLitePath)
	s.DB, s.Store, s.Migrated = db, store, migrated
	if err != nil {
		return err
	}
	s.Store.Now = o.Clock
	if s.Store.Now == nil {
		s.Store.Now = time.Now
	}
	s.Store.OnUnavailable = s.outage.suspect
	s.log.Info("store open", "engine", s.DB.Describe())
	if newer := NewerSchema(ctx, s.DB); newer != "" {
		s.log.Warn(newer)
	}
	if s.MasterKey, s.AdminToken, err = cfg.Secrets(ctx, s); err != nil {
		return err
	}
	m := metrics.New(s.DB.JobsDB(), cfg.Version, cfg.Commit)
	projectRate := cfg.FCM.ProjectRate
	if projectRate == 0 {
		projectRate = herald.DefaultFCMProjectRate
	}
	fcmOptions := cfg.FCM.Client
	fcmOptions.Timeout = o.FCMTimeout
	var ds delivery.Store = s.Store
	if o.DeliveryStore != nil {
		ds = o.DeliveryStore(ds)
	}
	s.Delivery = delivery.New(delivery.Config{
		Observe:        m.Send,
		Store:          ds,
		Sender:         fcm.NewClient(cfg.FCM.Endpoint, fcmOptions),
		Webhooks:       webhook.NewSender(cfg.Webhook),
		MasterKey:      s.MasterKey,
		Logger:         s.log,
		Now:            s.Store.Now,
		FanoutPage:     o.FanoutPage,
		SendSlice:      o.SendSlice,
		FCMProjectRate: projectRate,
	})
	s.Retention = retention.New(retention.Config{
		Store: s.Store.RetentionStore, Days: cfg.RetentionDays, Now: s.Store.Now, Logger: s.log, Deleted: m.Deleted, Step: m.RetentionStep,
		Reclaim: reclaimer(s.DB), AccessRecords: accessRecordsStep(s.Store.AuditStore, s.MasterKey.AccessKey(), s.Store.Now, s.log), Writes: writesOf(s.DB),
	})
	s.node = herald.NewID("node_", time.Now())
	if err := s.startQueue(ctx); err != nil {
		return err
	}
	if s.DB.Shared() { // nodes sharing the database share each app's send rate
		s.stopBeat = s.Delivery.StartHeartbeat(s.Store.NodeStore, s.node)
		// every node fires scheduled pushes at their time, so one that dies
		// holding their River jobs delays none of them
		s.stopWatch = s.Delivery.StartScheduleWatch(ds)
	}
	s.stopStream = stream.New(stream.Config{
		Store: s.Store.StreamStore, Apps: s.Store.AppStore, Webhooks: webhook.NewSender(cfg.Webhook),
		MasterKey: s.MasterKey, Holder: s.node, Now: s.Store.Now, Logger: s.log,
	}).Start()
	s.metrics = m
	if s.cfg.Admin.AdminURL == "" {
		s.cfg.Admin.AdminURL = "http://" + adminLn.Addr().String()
	}
	public, adminHandler := s.Handlers(s.cfg, s.AdminToken)
	s.PublicURL = s.serve(publicLn, public)
	s.AdminURL = s.serve(adminLn, adminHandler)
	return nil
}

// Handlers builds the node's two listeners' handlers (handler.New) on its
// store, delivery, metrics and clock, with cfg's API limits, admin
// settings and FCM and webhook checks and adminToken as the admin API's
// token. New serves the pair built from its own Config; a test that needs
// what a second node on the same database would serve (other limits,
// another admin token) serves another pair.
func (s *Server) Handlers(cfg Config, adminToken string) (public, adminHandler http.Handler) {
	var hs handler.Store = s.Store
	if s.over.HandlerStore != nil {
		hs = s.over.HandlerStore(hs)
	}
	return handler.New(handler.Deps{
		Store: hs, Delivery: s.Delivery, MasterKey: s.MasterKey, AdminToken: adminToken, Logger: s.log, Metrics: s.metrics,
		Ready: func(r *http.Request) web.Readiness { return s.ready(r.Context()) }, Now: s.Store.Now,
		API: cfg.API, Admin: cfg.Admin, FCM: cfg.FCM.Client, Webhook: cfg.Webhook,
	})
}

// neverRescue is River's RescueStuckJobsAfter under a given clock: a
// century.
const neverRescue = 100 * 365 * 24 * time.Hour

// startQueue starts River on the store's database (see the engines'
// StartQueue), configured for the delivery service's workers.
func (s *Server) startQueue(ctx context.Context) error {
	logger := slog.New(s.outage.quiet(s.cfg.RiverLogger.Handler(), true))
	q, err := s.DB.StartQueue(ctx, func(poll time.Duration) *river.Config {
		rc := s.Delivery.RiverConfig(poll, logger)
		rc.ID = s.node
		s.Retention.Register(rc)
		if s.over.Clock != nil {
			rc.Test.Time = riverClock(s.over.Clock)
			// River's job cleaner judges a finished job's age by the wall
			// clock (time.Now), though the job was finished at the given
			// clock's time: a test clock days behind the wall clock would
			// see its cancelled and completed jobs deleted at random, as
			// soon as the cleaner's first pass. Under a given clock nothing
			// is deleted.
			rc.CancelledJobRetentionPeriod, rc.CompletedJobRetentionPeriod, rc.DiscardedJobRetentionPeriod = -1, -1, -1
			// River's rescuer, too, judges a running job's age by the wall
			// clock, against the attempt time River wrote from the given
			// clock: under a clock behind the wall clock every running job
			// looked stuck at each of its passes and was run again beside
			// its worker. Under a given clock River rescues nothing; a dead
			// node's jobs are released by the live nodes' heartbeat
			// (delivery.StartHeartbeat), on its own real clock.
			rc.RescueStuckJobsAfter = neverRescue
		}
		if s.over.IdleQueue {
			// River must work some queue to start: one no job is put in.
			rc.Queues = map[string]river.QueueConfig{"herald_idle": {MaxWorkers: 1}}
		}
		return rc
	}, s.log)
	if q != nil {
		s.queue = q
	}
	return err
}

// reclaimer is the engine's way to give deleted space back to the file
// system in steps (SQLite's incremental vacuum); nil when it has none.
func reclaimer(db Engine) func(ctx context.Context, pages int) (int64, error) {
	if r, ok := db.(interface {
		Reclaim(ctx context.Context, pages int) (int64, error)
	}); ok {
		return r.Reclaim
	}
	return nil
}

// writesOf is the engine's count of write transactions for retention's
// pacing (the embedded store's writer); nil on an engine without one.
func writesOf(db Engine) func() uint64 {
	if w, ok := db.(interface{ Writes() uint64 }); ok {
		return w.Writes
	}
	return nil
}

// ready reports whether the store can serve (reachable, migrated,
// writable) and names its engine, for /readyz.
func (s *Server) ready(ctx context.Context) web.Readiness {
	state := web.Readiness{Database: s.DB.Name(), Err: s.DB.Ready(ctx)}
	s.outage.observe(state.Err, nil)
	return state
}

// probeStore probes the open engine's readiness afresh, for the outage
// watcher (nil before one is open).
func (s *Server) probeStore(ctx context.Context) error {
	if s.DB == nil {
		return nil
	}
	return s.DB.Recheck(ctx)
}

// Outage reports whether a store outage is in progress and how many log
// lines it has held back so far.
func (s *Server) Outage() (down bool, held int) {
	s.outage.mu.Lock()
	defer s.outage.mu.Unlock()
	return s.outage.down, s.outage.held
}

// Err delivers the error a listener's server stopped with, if one does.
func (s *Server) Err() <-chan error { return s.errc }

// serve serves h on ln (port 0 works) with timeouts, and returns its URL.
func (s *Server) serve(ln net.Listener, h http.Handler) string {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	s.servers = append(s.servers, srv)
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			s.errc <- err
		}
	}()
	return "http://" + ln.Addr().String()
}

// Stop shuts the node down once, logging a line when it begins (with its
// cause, when there is one) and one when everything has stopped.
func (s *Server) Stop(cause error) error {
	s.stopOnce.Do(func() {
		if cause != nil {
			s.log.Info("shutting down", "reason", cause.Error())
		} else {
			s.log.Info("shutting down")
		}
		began := time.Now()
		s.stopErr = s.stopAll()
		took := time.Since(began).Round(time.Millisecond)
		if s.stopErr != nil {
			s.log.Error("stopped, with errors", "err", s.stopErr, "took", took)
			return
		}
		s.log.Info("stopped", "took", took)
	})
	return s.stopErr
}

// stopAll stops in order: HTTP (finishing in-flight requests), workers,
// database.
func (s *Server) stopAll() error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var errs []error
	for _, srv := range s.servers {
		errs = append(errs, srv.Shutdown(ctx))
	}
	if s.queue != nil {
		// Running jobs finish (a chunk takes about a second); past the
		// deadline they are cancelled and picked up again at next start.
		stopCtx, stopCancel := context.WithTimeout(ctx, 10*time.Second)
		if err := s.queue.Stop(stopCtx); err != nil {
			errs = append(errs, s.queue.StopAndCancel(ctx))
		}
		stopCancel()
	}
	if s.stopWatch != nil {
		s.stopWatch()
	}
	if s.stopStream != nil {
		s.stopStream()
	}
	if s.stopBeat != nil {
		s.stopBeat()
	}
	s.outage.close()
	if s.DB != nil {
		errs = append(errs, s.DB.Close())
	}
	return errors.Join(errs...)
}

// accessRecordsStep is retention's step over the access records: it
// appends the records of ended attempt windows, prunes the chain's start
// (the first kept record's prevHash kept as its anchor) and, once the
// day's pruning is done, logs the chain's signed head, for an operator to
// keep outside the database (docs/access-records.md).
func accessRecordsStep(st access.Store, key access.Key, now func() time.Time, log *slog.Logger) retention.Pruner {
	return func(ctx context.Context, before time.Time, limit int) (retention.Step, error) {
		began := time.Now()
		if _, err := st.RecordPending(ctx, key, now()); err != nil {
			return retention.Step{}, err
		}
		n, err := st.PruneAccessRecords(ctx, before, limit)
		if err == nil && n < limit {
			if h, err := st.AccessHead(ctx); err == nil {
				log.InfoContext(ctx, "access records head", "seq", h.Seq, "hash", h.Hash, "hmac", h.HMAC, "at", h.At)
			} else if !errors.Is(err, herald.ErrNotFound) {
				log.ErrorContext(ctx, "access records head", "err", err)
			}
		}
		return retention.Step{Deleted: retention.Deleted{retention.RetainedAccessRecord: int64(n)}, More: n == limit,
			Held: time.Since(began)}, err
	}
}
