package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/delivery"
	"github.com/heraldpush/herald/fcm"
	"github.com/heraldpush/herald/handler"
	"github.com/heraldpush/herald/metrics"
	"github.com/heraldpush/herald/sqlstore"
	"github.com/heraldpush/herald/web"
	"github.com/heraldpush/herald/webhook"
)

// service is a running `herald serve`.
type service struct {
	cfg        config
	log        *slog.Logger
	store      *sqlstore.Store // on db
	db         database        // the engine, SQLite or PostgreSQL
	lock       *os.File
	outage     *outage // logs store outages once (nil for migrate)
	migrated   int     // migrations applied when the store was opened
	queue      sqlstore.QueueRunner
	stopBeat   func() // ends the node heartbeat (PostgreSQL)
	stopWatch  func() // ends the schedule watch (PostgreSQL)
	servers    []*http.Server
	PublicURL  string
	AdminURL   string
	AdminToken string
	logOut     io.Writer
	errc       chan error
	stopOnce   sync.Once
	stopErr    error
}

func runServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := loadConfig(args, getenv, stdout)
	if err != nil {
		return err
	}
	tuneGC(getenv)
	if cfg.Demo {
		stopEmulator, err := startDemoEmulator(&cfg)
		if err != nil {
			return err
		}
		defer stopEmulator()
	}
	svc, err := startService(ctx, cfg, stdout, stderr)
	if err != nil {
		return err
	}
	cfg.announce(stdout, fmt.Sprintf("herald: public API on %s, admin on %s", svc.PublicURL, svc.AdminURL),
		"listening", "public", svc.PublicURL, "admin", svc.AdminURL)
	if cfg.Demo {
		if err := setUpDemo(ctx, svc, stdout); err != nil {
			return errors.Join(fmt.Errorf("demo: %w", err), svc.shutdown())
		}
	}
	var cause error
	select {
	case <-ctx.Done():
		cause = context.Cause(ctx) // "terminated signal received" on SIGTERM
	case err = <-svc.errc:
		cause = err
	}
	return errors.Join(err, svc.stop(cause))
}

func runMigrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := loadConfigFor("migrate", args, getenv, stdout)
	if err != nil {
		return err
	}
	s := &service{cfg: cfg, log: cfg.logger(stderr)}
	if cfg.DatabaseURL == "" {
		if err := prepareDataDir(cfg.DataDir, s.log); err != nil {
			return err
		}
	}
	err = s.openStore(ctx)
	var newer string
	if err == nil {
		newer = s.newerSchema(ctx)
	}
	err = errors.Join(err, s.closeStore())
	if s.lock != nil {
		err = errors.Join(err, s.lock.Close())
	}
	if err != nil {
		return err
	}
	if newer != "" {
		fmt.Fprintln(stdout, "herald: nothing applied: "+newer)
		return nil
	}
	if s.migrated == 0 {
		fmt.Fprintln(stdout, "herald: nothing to apply: the database schema is current")
		return nil
	}
	plural := "s"
	if s.migrated == 1 {
		plural = ""
	}
	fmt.Fprintf(stdout, "herald: %d migration%s applied\n", s.migrated, plural)
	return nil
}

// startService binds both listeners, then opens the store, starts the
// workers and serves the listeners.
func startService(ctx context.Context, cfg config, stdout, logOut io.Writer) (_ *service, err error) {
	// The listeners are bound before anything is written: a start refused
	// for a busy port must not have generated the admin token (printed
	// "shown once" to a start that never ran), created the database or
	// started the job queue only to cancel it.
	publicLn, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, listenError("public", cfg.Addr, "--addr / HERALD_ADDR", err)
	}
	adminLn, err := net.Listen("tcp", cfg.AdminAddr)
	if err != nil {
		return nil, errors.Join(listenError("admin", cfg.AdminAddr, "--admin-addr / HERALD_ADMIN_ADDR", err), publicLn.Close())
	}
	defer func() {
		if err != nil { // closed by the servers' shutdown once they serve them
			publicLn.Close()
			adminLn.Close()
		}
	}()
	s := &service{cfg: cfg, logOut: logOut, errc: make(chan error, 2)}
	base := cfg.logger(logOut)
	s.outage = newOutage(base, s.probeStore)
	s.log = slog.New(s.outage.quiet(base.Handler(), false))
	if cfg.DatabaseURL == "" {
		if err := prepareDataDir(cfg.DataDir, s.log); err != nil {
			return nil, err
		}
	}
	if err := s.openStore(ctx); err != nil {
		return nil, s.fail(err)
	}
	s.store.Now = cfg.clock()
	s.store.OnUnavailable = s.outage.suspect
	s.log.Info("store open", "engine", s.db.Describe())
	if newer := s.newerSchema(ctx); newer != "" {
		s.log.Warn(newer)
	}
	masterKey, err := s.secrets(ctx, stdout)
	if err != nil {
		return nil, s.fail(err)
	}
	v, commit, _ := buildInfo()
	m := metrics.New(s.db.JobsDB(), v, commit)
	projectRate, _ := cfg.fcmProjectRate() // validated by loadConfig
	var store delivery.Store = s.store
	if cfg.deliveryStore != nil {
		store = cfg.deliveryStore(store)
	}
	pushes := delivery.New(delivery.Config{
		Observe:        m.Send,
		Store:          store,
		Sender:         fcm.NewClient(cfg.FCMEndpoint, fcm.ClientOptions{AllowAnyTokenURI: cfg.FCMAllowAnyTokenURI}),
		Webhooks:       webhook.NewSender(webhook.SenderOptions{AllowPrivate: cfg.WebhookAllowPrivate}),
		MasterKey:      masterKey,
		Logger:         s.log,
		Now:            s.store.Now,
		FanoutPage:     cfg.fanoutPage,
		SendSlice:      cfg.sendSlice,
		FCMProjectRate: projectRate,
	})
	if err := s.startQueue(ctx, pushes); err != nil {
		return nil, s.fail(err)
	}
	if s.db.Shared() { // nodes sharing the database share each app's send rate
		s.stopBeat = pushes.StartHeartbeat(s.store, herald.NewID("node_", time.Now()))
		// every node fires scheduled pushes at their time, so one that dies
		// holding their River jobs delays none of them
		s.stopWatch = pushes.StartScheduleWatch(store)
	}
	public, adminHandler := handler.New(handler.Deps{
		Store: s.store, Delivery: pushes, MasterKey: masterKey, AdminToken: s.AdminToken, Logger: s.log, Metrics: m,
		Ready: func(r *http.Request) web.Readiness { return s.ready(r.Context()) }, Now: s.store.Now,
		RateLimit: cfg.RateLimit, SDKRateLimit: cfg.SDKRateLimit, SDKClientRateLimit: cfg.SDKClientRateLimit,
		AuthFailureRateLimit: cfg.AuthFailureRateLimit, FCMAllowAnyTokenURI: cfg.FCMAllowAnyTokenURI,
		WebhookAllowPrivate: cfg.WebhookAllowPrivate, TrustProxy: cfg.TrustProxy,
	})
	s.PublicURL = s.serve(publicLn, public)
	s.AdminURL = s.serve(adminLn, adminHandler)
	return s, nil
}

// secrets returns the master key (checked against the store) and sets the
// admin token, each configured or kept in the data dir (generated there on
// first start; a generated admin token is printed once).
func (s *service) secrets(ctx context.Context, stdout io.Writer) (*herald.MasterKey, error) {
	masterKey, err := s.masterKey(ctx)
	if err != nil {
		return nil, err
	}
	token, created, err := s.cfg.secretOrFile(s.cfg.AdminToken, "admin-token", func() string { return "ha_" + herald.NewSecretKey()[3:] })
	if err != nil {
		return nil, err
	}
	if created {
		file := filepath.Join(s.cfg.DataDir, "admin-token")
		s.cfg.announce(stdout, fmt.Sprintf("herald: generated admin token (saved in %s, shown once): %s", file, token),
			"generated admin token (shown once)", "file", file, "token", token)
	}
	source := s.cfg.source("admin-token", "HERALD_ADMIN_TOKEN")
	if s.cfg.AdminToken == "" {
		source = filepath.Join(s.cfg.DataDir, "admin-token")
	}
	if err := checkAdminToken(token, source); err != nil {
		return nil, err
	}
	s.AdminToken = token
	return masterKey, nil
}

// secretOrFile returns the configured value, or the one kept in the data
// dir (generated there on first start).
func (c config) secretOrFile(configured, file string, gen func() string) (string, bool, error) {
	if configured != "" {
		return configured, false, nil
	}
	return c.secretFile(file, gen)
}

// serve serves h on ln (bound by startService; port 0 works) with
// timeouts, and returns its URL.
func (s *service) serve(ln net.Listener, h http.Handler) string {
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

// listenError names the listener that could not bind and the setting
// that moves it: "public listener 127.0.0.1:8080 (--addr / HERALD_ADDR):
// address already in use".
func listenError(name, addr, setting string, err error) error {
	if se, ok := errors.AsType[*os.SyscallError](err); ok {
		err = se.Err
	}
	return fmt.Errorf("%s listener %s (%s): %w", name, addr, setting, err)
}

func (s *service) fail(err error) error {
	return errors.Join(err, s.stop(fmt.Errorf("start failed: %w", err)))
}

// shutdown stops the service at its caller's request (tests, bench); see
// stop.
func (s *service) shutdown() error { return s.stop(nil) }

// stop shuts the service down once, logging a line when it begins (with
// its cause, when there is one) and one when everything has stopped.
func (s *service) stop(cause error) error {
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
func (s *service) stopAll() error {
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
	if s.stopBeat != nil {
		s.stopBeat()
	}
	if s.outage != nil {
		s.outage.close()
	}
	errs = append(errs, s.closeStore())
	if s.lock != nil {
		errs = append(errs, s.lock.Close())
	}
	return errors.Join(errs...)
}
