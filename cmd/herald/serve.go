package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/server"
	"github.com/heraldpush/herald/sqlite"
)

// service is a running `herald serve`: the node (package server) on the
// data dir it holds locked (SQLite).
type service struct {
	*server.Server
	cfg      config
	lock     *os.File
	stopOnce sync.Once
	stopErr  error
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
	case err = <-svc.Err():
		cause = err
	}
	return errors.Join(err, svc.stop(cause))
}

func runMigrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := loadConfigFor("migrate", args, getenv, stdout)
	if err != nil {
		return err
	}
	log := cfg.logger(stderr)
	var lock *os.File
	if cfg.DatabaseURL == "" {
		if lock, err = lockDataDir(cfg.DataDir, log); err != nil {
			return err
		}
	}
	db, _, migrated, err := server.Open(ctx, cfg.DatabaseURL, cfg.sqlitePath())
	var newer string
	if err == nil {
		newer = server.NewerSchema(ctx, db)
	}
	if db != nil {
		err = errors.Join(err, db.Close())
	}
	if lock != nil {
		err = errors.Join(err, lock.Close())
	}
	if err != nil {
		return err
	}
	if newer != "" {
		fmt.Fprintln(stdout, "herald: nothing applied: "+newer)
		return nil
	}
	if migrated == 0 {
		fmt.Fprintln(stdout, "herald: nothing to apply: the database schema is current")
		return nil
	}
	plural := "s"
	if migrated == 1 {
		plural = ""
	}
	fmt.Fprintf(stdout, "herald: %d migration%s applied\n", migrated, plural)
	return nil
}

// startService binds both listeners, locks the data dir (SQLite), then
// starts the node (server.New) on them.
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
	s := &service{cfg: cfg}
	log := cfg.logger(logOut)
	if cfg.DatabaseURL == "" {
		if s.lock, err = lockDataDir(cfg.DataDir, log); err != nil {
			return nil, errors.Join(err, publicLn.Close(), adminLn.Close())
		}
	}
	v, commit, _ := buildInfo()
	node := cfg.node()
	node.Secrets = func(ctx context.Context, srv *server.Server) (*herald.MasterKey, string, error) {
		return s.secrets(ctx, srv, stdout)
	}
	node.Logger, node.RiverLogger, node.Version, node.Commit = log, cfg.loggerAt(logOut, slog.LevelWarn), v, commit
	s.Server, err = server.New(ctx, node, publicLn, adminLn, cfg.overrides)
	if err != nil {
		if s.lock != nil {
			err = errors.Join(err, s.lock.Close())
		}
		return nil, err
	}
	return s, nil
}

// lockDataDir prepares the data dir and takes its lock (sqlite.LockDir).
func lockDataDir(dir string, log *slog.Logger) (*os.File, error) {
	if err := prepareDataDir(dir, log); err != nil {
		return nil, err
	}
	lock, err := sqlite.LockDir(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, errors.Join(err, lock.Close())
	}
	return lock, nil
}

// secrets returns the master key (checked against the store) and the
// admin token, each configured or kept in the data dir (generated there on
// first start; of a generated admin token only its file is printed).
func (s *service) secrets(ctx context.Context, srv *server.Server, stdout io.Writer) (*herald.MasterKey, string, error) {
	masterKey, err := s.masterKey(ctx, srv)
	if err != nil {
		return nil, "", err
	}
	token, created, err := s.cfg.secretOrFile(s.cfg.AdminToken, "admin-token", func() string { return "ha_" + herald.NewSecretKey()[3:] })
	if err != nil {
		return nil, "", err
	}
	if created { // only where it is: a token on stdout ends up in logs and scrollback
		file := filepath.Join(s.cfg.DataDir, "admin-token")
		s.cfg.announce(stdout, fmt.Sprintf("herald: generated an admin token into %s (mode 0600); read it there: cat %s", file, file),
			"generated admin token", "file", file)
	}
	source := s.cfg.source("admin-token", "HERALD_ADMIN_TOKEN")
	if s.cfg.AdminToken == "" {
		source = filepath.Join(s.cfg.DataDir, "admin-token")
	}
	if err := checkAdminToken(token, source); err != nil {
		return nil, "", err
	}
	return masterKey, token, nil
}

// secretOrFile returns the configured value, or the one kept in the data
// dir (generated there on first start).
func (c config) secretOrFile(configured, file string, gen func() string) (string, bool, error) {
	if configured != "" {
		return configured, false, nil
	}
	return c.secretFile(file, gen)
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

// shutdown stops the service at its caller's request (tests, bench); see
// stop.
func (s *service) shutdown() error { return s.stop(nil) }

// stop stops the node (server.Server.Stop), then releases the data dir.
func (s *service) stop(cause error) error {
	s.stopOnce.Do(func() {
		s.stopErr = s.Server.Stop(cause)
		if s.lock != nil {
			s.stopErr = errors.Join(s.stopErr, s.lock.Close())
		}
	})
	return s.stopErr
}
