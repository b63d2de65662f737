package main

import (
	"context"
	"io"
	"os"
	"testing"
	"time"

	"github.com/heraldpush/herald/fcm"
	"github.com/heraldpush/herald/fcm/emulator"
	"github.com/heraldpush/herald/fcm/fcmtest"
	"github.com/heraldpush/herald/internal/testenv"
	"github.com/heraldpush/herald/postgres/pgtest"
	"github.com/heraldpush/herald/server"
	"github.com/heraldpush/herald/sqlite"
	"github.com/heraldpush/herald/webhook"
)

// env is a running herald serve with an FCM emulator, for the tests of
// the binary; the helpers of testenv.Harness run against it (bind).
type env struct {
	*testenv.Harness
	t        *testing.T
	svc      *service
	emu      *emulator.Emulator
	emuURL   string
	logs     *testenv.Buffer
	dataDir  string
	dbURL    string // the PostgreSQL schema's URL, when on PostgreSQL
	adminTok string
}

// syncBuffer is a buffer safe for a logger's concurrent writes.
type syncBuffer = testenv.Buffer

func newSyncBuffer() *syncBuffer { return &syncBuffer{} }

// start runs the service on port 0 against a fresh emulator.
func start(t *testing.T, tweak ...func(*config)) *env {
	t.Helper()
	return startWith(t, emulator.Options{}, tweak...)
}

// startWith runs the service against an emulator with the given options,
// on the engine the tests run on (see testEngine).
func startWith(t *testing.T, opts emulator.Options, tweak ...func(*config)) *env {
	t.Helper()
	emu, emuURL := fcmtest.StartEmulator(t, opts)
	e := &env{t: t, emu: emu, emuURL: emuURL, logs: newSyncBuffer(), dataDir: t.TempDir(), adminTok: "test-admin-token"}
	if testEngine() == "postgres" {
		e.dbURL = pgtest.NewSchema(t, os.Getenv(pgtest.EnvURL), map[string]string{"pool_max_conns": "8"})
	}
	e.startService(tweak...)
	return e
}

// testEngine is the store the end-to-end tests run on: PostgreSQL, each
// test in a fresh schema, when HERALD_TEST_DATABASE_URL is set; else the
// embedded SQLite store in a temporary data dir.
func testEngine() string {
	if os.Getenv(pgtest.EnvURL) != "" {
		return "postgres"
	}
	return "sqlite"
}

// testMasterKey is the master key of tests on PostgreSQL, which needs one.
const testMasterKey = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="

// config is the configuration of e's service, tweaked.
func (e *env) config(tweak ...func(*config)) config {
	cfg := config{
		Addr: "127.0.0.1:0", AdminAddr: "127.0.0.1:0", DataDir: e.dataDir, AdminToken: e.adminTok,
		FCM: server.FCM{Endpoint: e.emuURL, Client: fcm.ClientOptions{AllowAnyTokenURI: true}}, Webhook: webhook.SenderOptions{AllowPrivate: true},
		LogLevel: "info", LogFormat: "text",
	}
	if e.dbURL != "" {
		cfg.DatabaseURL, cfg.MasterKey = e.dbURL, testMasterKey
	}
	for _, f := range tweak {
		f(&cfg)
	}
	return cfg
}

func (e *env) startService(tweak ...func(*config)) {
	svc, err := startService(context.Background(), e.config(tweak...), io.Discard, e.logs)
	if err != nil {
		e.t.Fatalf("start service: %v", err)
	}
	e.svc = svc
	e.t.Cleanup(func() { svc.shutdown() })
	e.bind()
}

// bind points e's testenv.Harness at the running service.
func (e *env) bind() {
	token := e.svc.AdminToken // the one the service runs with (generated or not)
	if token == "" {
		token = e.adminTok // a service in another process
	}
	te := &testenv.Env{Node: e.svc.Server, Store: e.svc.Store, Engine: testenv.SQLite, AdminToken: token,
		API: testenv.Listener{URL: e.svc.PublicURL}, Admin: testenv.Listener{URL: e.svc.AdminURL},
		Emulator: e.emu, EmulatorURL: e.emuURL, Log: e.logs}
	if e.dbURL != "" {
		te.Engine = testenv.Postgres
	}
	if e.svc.DB != nil {
		te.DB, _ = e.svc.DB.(*sqlite.DB)
	}
	e.Harness = &testenv.Harness{Env: te, T: e.t}
}

// testApp is an app created through the admin API (testenv.App).
type testApp = testenv.App

// pushView is a push's admin record (testenv.PushView).
type pushView = testenv.PushView

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	testenv.WaitFor(t, what, timeout, cond)
}
