package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/bench"
	"github.com/heraldpush/herald/server"
)

// benchSetup is where the bench's server runs: engine, database and nodes.
type benchSetup struct {
	// databaseURL is the PostgreSQL database the run gets a fresh schema
	// of; empty for SQLite.
	databaseURL string
	// nodes is the number of `herald serve` processes; 0 runs the server
	// inside the bench process (inProcess).
	nodes     int
	inProcess bool
	// binary is the herald executable the nodes run.
	binary string
	// projectRate is the servers' FCM project rate a minute; 0 is the
	// cap, as the bench app's own rate is, so that a run measures Herald
	// and not pacing (the urgent mode's default is FCM's quota).
	projectRate int
}

// engine names the store.
func (b benchSetup) engine() string {
	if b.databaseURL != "" {
		return "postgres"
	}
	return "sqlite"
}

// check refuses what cannot run: several nodes on SQLite, a database URL
// that is not postgres://.
func (b benchSetup) check() error {
	if b.databaseURL != "" && !strings.HasPrefix(b.databaseURL, "postgres://") && !strings.HasPrefix(b.databaseURL, "postgresql://") {
		return errors.New("--database-url: must be a postgres:// URL")
	}
	if b.nodes < 0 {
		return errors.New("--nodes: must not be negative")
	}
	if b.projectRate < 0 {
		return errors.New("--project-rate: must not be negative")
	}
	if b.inProcess && b.binary != "" {
		return errors.New("--binary: not with --in-process (no server process runs)")
	}
	if b.nodes > 1 && b.databaseURL == "" {
		return errors.New("--nodes: more than one node needs --database-url (the embedded SQLite store serves one process)")
	}
	return nil
}

// startServer returns the bench's StartServer for this setup.
func (b benchSetup) startServer(logOut io.Writer) func(ctx context.Context, fcmEndpoint string) (bench.Server, error) {
	return func(ctx context.Context, fcmEndpoint string) (bench.Server, error) {
		dbURL, dropSchema := "", func() error { return nil }
		if b.databaseURL != "" {
			u, drop, err := bench.Schema(ctx, b.databaseURL)
			if err != nil {
				return bench.Server{}, err
			}
			fmt.Fprintf(logOut, "bench: PostgreSQL schema %s (dropped at the end)\n", bench.SchemaOf(u))
			dbURL, dropSchema = u, drop
		}
		srv, err := b.startOn(ctx, dbURL, fcmEndpoint, logOut)
		if err != nil {
			return bench.Server{}, errors.Join(err, dropSchema())
		}
		stop := srv.Stop
		srv.Stop = func() error { return errors.Join(stop(), dropSchema()) }
		srv.DatabaseURL = dbURL
		return srv, nil
	}
}

// projectRateText is the servers' FCM project rate (see projectRate).
func (b benchSetup) projectRateText() string {
	if b.projectRate == 0 {
		return strconv.Itoa(herald.MaxSendRatePerMinute)
	}
	return strconv.Itoa(b.projectRate)
}

// startOn starts the server on dbURL (empty: SQLite), as nodes or in
// process.
func (b benchSetup) startOn(ctx context.Context, dbURL, fcmEndpoint string, logOut io.Writer) (bench.Server, error) {
	adminToken := "ha_" + herald.NewSecretKey()[3:]
	masterKey := herald.NewMasterKeyText()
	if b.nodes == 0 {
		return benchServer(ctx, config{DatabaseURL: dbURL, AdminToken: adminToken, MasterKey: masterKey, FCM: server.FCM{Endpoint: fcmEndpoint},
			FCMProjectRate: b.projectRateText()}, logOut)
	}
	env := []string{
		"HERALD_ADMIN_TOKEN=" + adminToken, "HERALD_MASTER_KEY=" + masterKey,
		"HERALD_FCM_ENDPOINT=" + fcmEndpoint, "HERALD_FCM_ALLOW_ANY_TOKEN_URI=true", "HERALD_WEBHOOK_ALLOW_PRIVATE=true",
		"HERALD_LOG_LEVEL=warn", "HERALD_LOG_FORMAT=text",
		// The bench registers and pushes from one address, faster than
		// any limit meant for real clients: the in-process server has
		// none either.
		"HERALD_RATE_LIMIT=0", "HERALD_SDK_RATE_LIMIT=0", "HERALD_SDK_CLIENT_RATE_LIMIT=0", "HERALD_AUTH_FAILURE_RATE_LIMIT=0",
		"HERALD_FCM_PROJECT_RATE=" + b.projectRateText(),
	}
	if dbURL != "" {
		env = append(env, "HERALD_DATABASE_URL="+dbURL)
	}
	fmt.Fprintf(logOut, "bench: starting %d herald serve process(es) (%s)\n", b.nodes, b.binary)
	return bench.StartNodes(ctx, bench.NodesConfig{
		Binary: b.binary, Count: b.nodes, Env: env, AdminToken: adminToken, Engine: b.engine(), Log: logOut,
	})
}

// benchServer starts the service in-process on loopback with cfg's
// database, secrets and FCM endpoint, on a fresh data dir that Stop
// removes, logging warnings and errors to logOut.
func benchServer(ctx context.Context, cfg config, logOut io.Writer) (bench.Server, error) {
	dir, err := os.MkdirTemp("", "herald-bench-")
	if err != nil {
		return bench.Server{}, err
	}
	cfg.Addr, cfg.AdminAddr, cfg.DataDir = "127.0.0.1:0", "127.0.0.1:0", dir
	cfg.FCM.Client.AllowAnyTokenURI, cfg.Webhook.AllowPrivate = true, true
	cfg.LogLevel, cfg.LogFormat = "warn", "text"
	if err := cfg.validate(); err != nil {
		return bench.Server{}, errors.Join(err, os.RemoveAll(dir))
	}
	svc, err := startService(ctx, cfg, io.Discard, logOut)
	if err != nil {
		return bench.Server{}, errors.Join(fmt.Errorf("start service: %w", err), os.RemoveAll(dir))
	}
	engine := "sqlite"
	if cfg.DatabaseURL != "" {
		engine = "postgres"
	}
	return bench.Server{
		PublicURL: svc.PublicURL, AdminURL: svc.AdminURL, AdminToken: svc.AdminToken, Engine: engine,
		Stop: func() error { return errors.Join(svc.shutdown(), os.RemoveAll(dir)) },
	}, nil
}
