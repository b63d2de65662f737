// Package testenv starts a whole Herald node (server.New, as `herald
// serve` builds it) for a test: both listeners over real HTTP on loopback,
// its store on a real database (SQLite in the test's temporary directory
// by default, or a fresh PostgreSQL schema, see Options.Engine), the
// delivery service and River running against an FCM emulator, on clocks the
// test may inject. It gives the small helpers every handler test needs:
// apps created through the admin API, raw requests, and checks of the
// spec's error body.
package testenv

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/fcm/emulator"
	"github.com/heraldpush/herald/fcm/fcmtest"
	"github.com/heraldpush/herald/postgres/pgtest"
	"github.com/heraldpush/herald/server"
	"github.com/heraldpush/herald/sqlite"
	"github.com/heraldpush/herald/sqlite/sqlitetest"
	"github.com/heraldpush/herald/sqlstore"
)

// AdminToken is the bearer token of every test environment's admin API.
const AdminToken = "ha_testAdminToken0123456789abcdefghijklmnopqrst"

// Engine names the database an environment's store runs on.
type Engine string

// The engines.
const (
	SQLite   Engine = "sqlite" // the default
	Postgres Engine = "postgres"
)

// TestEngine is the engine of tests that run on either: PostgreSQL, each
// test in a fresh schema, when HERALD_TEST_DATABASE_URL is set; else
// SQLite.
func TestEngine() Engine {
	if os.Getenv(pgtest.EnvURL) != "" {
		return Postgres
	}
	return SQLite
}

// Options changes how New builds the environment.
type Options struct {
	// Engine is the store's database (SQLite when empty).
	Engine Engine
	// DatabaseURL, when set, runs the store on PostgreSQL at this URL
	// instead of in a fresh schema; SQLiteDir runs the embedded store in
	// this directory instead of the test's temporary one.
	DatabaseURL, SQLiteDir string
	// Emulator configures the FCM emulator the node sends through.
	Emulator emulator.Options
	// EmulatorOf, when set, is a node whose FCM emulator this one sends
	// through instead of a fresh one (a second node on the same database:
	// the apps' credentials name that emulator's token endpoint).
	EmulatorOf *Env
	// QuietLog drops log lines below warnings (benchmarks), so the log
	// buffer does not grow with every request.
	QuietLog bool
	// MasterKey is the node's master key (a fresh one when nil): a second
	// node on the same database (DatabaseURL) needs the first one's.
	MasterKey *herald.MasterKey
	// AdminListener is the admin listener (a fresh loopback port when
	// nil), for a test that needs its address in Config beforehand.
	AdminListener net.Listener
	// Config is the node's configuration as an operator sets it
	// (server.Config: its webhook and FCM options, API limits, admin
	// settings); New fills in its database, secrets, logs and FCM
	// endpoint (the emulator's). Set Config.FCM.Client.AllowAnyTokenURI
	// to upload the emulator's service accounts (see Env.PutCredentials).
	Config server.Config
	// Overrides are what the test changes in the node (server.Overrides:
	// its clock, delivery's tuning, stores wrapped to inject faults).
	Overrides server.Overrides
}

// Env is one running Herald: both listeners, its database and the FCM
// emulator it sends through.
type Env struct {
	// Node is the running Herald.
	Node *server.Server
	// Store is its store; DB its SQLite engine (nil on PostgreSQL).
	Store  *sqlstore.Store
	DB     *sqlite.DB
	DBPath string
	// Engine is the store's database; DatabaseURL its PostgreSQL URL
	// ("" on SQLite).
	Engine      Engine
	DatabaseURL string
	MasterKey   *herald.MasterKey
	// AdminToken is the admin API's bearer token (the AdminToken
	// constant in environments New starts).
	AdminToken string
	// API is the public listener (Server API and SDK API).
	API Listener
	// Admin is the admin listener.
	Admin Listener
	// Emulator is the FCM emulator at EmulatorURL (the FCM endpoint; with
	// "/token" appended, the token URI).
	Emulator    *emulator.Emulator
	EmulatorURL string
	// Log collects every log line the node writes (debug level and up).
	Log *Buffer
}

// Listener is one of the node's listeners.
type Listener struct {
	// URL is its base URL, http://127.0.0.1:port.
	URL string
}

// Buffer is a bytes.Buffer safe for the concurrent writes of a logger.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// New starts an environment that is stopped when the test ends.
func New(t testing.TB, opts ...Options) *Env {
	t.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	mk := o.MasterKey
	if mk == nil {
		var err error
		if mk, err = herald.ParseMasterKey(herald.NewMasterKeyText()); err != nil {
			t.Fatal(err)
		}
	}
	if o.Engine == "" {
		o.Engine = SQLite
	}
	if o.DatabaseURL != "" {
		o.Engine = Postgres
	}
	e := &Env{Engine: o.Engine, MasterKey: mk, AdminToken: AdminToken, Log: &Buffer{}}
	if o.EmulatorOf != nil {
		e.Emulator, e.EmulatorURL = o.EmulatorOf.Emulator, o.EmulatorOf.EmulatorURL
	} else {
		e.Emulator, e.EmulatorURL = fcmtest.StartEmulator(t, o.Emulator)
	}
	var dbURL string
	switch o.Engine {
	case SQLite:
		dir := o.SQLiteDir
		if dir == "" {
			dir = t.TempDir()
		}
		e.DBPath = filepath.Join(dir, "herald.db")
		if _, err := os.Stat(e.DBPath); errors.Is(err, fs.ErrNotExist) {
			sqlitetest.WriteMigrated(t, e.DBPath) // the node finds it migrated
		}
	case Postgres:
		dbURL = o.DatabaseURL
		if dbURL == "" {
			dbURL = pgtest.NewSchema(t, pgtest.BaseURL(t), map[string]string{"pool_max_conns": "8"})
		}
	default:
		t.Fatalf("testenv: unknown engine %q", o.Engine)
	}
	level := slog.LevelDebug
	if o.QuietLog {
		level = slog.LevelWarn
	}
	logger := slog.New(slog.NewTextHandler(e.Log, &slog.HandlerOptions{Level: level}))
	riverLogger := slog.New(slog.NewTextHandler(e.Log, &slog.HandlerOptions{Level: slog.LevelWarn}))
	publicLn, adminLn := listen(t), o.AdminListener
	if adminLn == nil {
		adminLn = listen(t)
	}
	e.DatabaseURL = dbURL
	cfg := o.Config
	cfg.Database = server.Database{URL: dbURL, SQLitePath: e.DBPath}
	cfg.Secrets = func(ctx context.Context, s *server.Server) (*herald.MasterKey, string, error) {
		return mk, AdminToken, herald.VerifyMasterKey(ctx, s.Store, mk)
	}
	cfg.Logger, cfg.RiverLogger, cfg.FCM.Endpoint = logger, riverLogger, e.EmulatorURL
	srv, err := server.New(context.Background(), cfg, publicLn, adminLn, o.Overrides)
	if err != nil {
		t.Fatalf("testenv: start herald: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(nil); err != nil {
			t.Errorf("testenv: stop herald: %v", err)
		}
	})
	e.Node, e.Store = srv, srv.Store
	e.DB, _ = srv.DB.(*sqlite.DB)
	e.API, e.Admin = Listener{URL: srv.PublicURL}, Listener{URL: srv.AdminURL}
	return e
}

// listen binds a loopback port for one of the node's listeners.
func listen(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testenv: listen: %v", err)
	}
	return ln
}

// QueryRow runs a read-only query of the environment's database on either
// engine; it is written with ? placeholders.
func (e *Env) QueryRow(query string, args ...any) *sql.Row {
	if e.Engine == Postgres {
		n := 0
		query = placeholder.ReplaceAllStringFunc(query, func(string) string { n++; return "$" + strconv.Itoa(n) })
	}
	return e.Node.DB.JobsDB().QueryRow(query, args...)
}

var placeholder = regexp.MustCompile(`\?`)

// App is an app created through the admin API, with its keys and a Go
// client of the Server API holding them.
type App struct {
	ID        string
	APIKey    string
	SecretKey string
	Client    *client.Client
}

// CreateApp creates an app through the admin API with the given settings
// (name defaults to "test app") and returns its keys.
func (e *Env) CreateApp(t testing.TB, settings map[string]any) App {
	t.Helper()
	body := map[string]any{"name": "test app"}
	for k, v := range settings {
		body[k] = v
	}
	res := e.AdminDo(t, http.MethodPost, "/admin/v1/apps", body)
	if res.Status != http.StatusCreated {
		t.Fatalf("create app: got %d %s, want 201", res.Status, res.Body)
	}
	var out struct {
		AppID, APIKey, SecretKey string
	}
	res.Decode(t, &out)
	return App{ID: out.AppID, APIKey: out.APIKey, SecretKey: out.SecretKey, Client: client.New(e.API.URL, out.APIKey, out.SecretKey, nil)}
}

// BusinessApp creates an app on the business tier with the app-user feature
// enabled: the Server API's app-user endpoints are open to it.
func (e *Env) BusinessApp(t testing.TB) App {
	t.Helper()
	return e.CreateApp(t, map[string]any{"tier": "business", "appUserEnabled": true})
}

// Response is an answer read in full.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Decode unmarshals the body into v, failing the test when it is not JSON.
func (r Response) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("answer %d %q is not the expected JSON: %v", r.Status, r.Body, err)
	}
}

// Request describes one raw request.
type Request struct {
	Method string
	// URL is the full URL, or a path on the public listener.
	URL    string
	Header map[string]string
	// Body is sent as is when a string or []byte, as JSON otherwise; nil
	// sends no body.
	Body any
	// NoContentType leaves the Content-Type header out; otherwise it is
	// application/json unless Header names one.
	NoContentType bool
}

// Do sends a raw request.
func (e *Env) Do(t testing.TB, req Request) Response {
	t.Helper()
	return Send(t, http.DefaultClient, e.API.URL, req)
}

// Send sends req with hc, resolving a path against base.
func Send(t testing.TB, hc *http.Client, base string, req Request) Response {
	t.Helper()
	var body io.Reader
	switch b := req.Body.(type) {
	case nil:
	case string:
		body = strings.NewReader(b)
	case []byte:
		body = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatalf("encode request: %v", err)
		}
		body = bytes.NewReader(raw)
	}
	url := req.URL
	if strings.HasPrefix(url, "/") {
		url = base + url
	}
	r, err := http.NewRequest(req.Method, url, body)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	if !req.NoContentType && body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	for k, v := range req.Header {
		r.Header.Set(k, v)
	}
	resp, err := hc.Do(r)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, url, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read answer: %v", req.Method, url, err)
	}
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: raw}
}

// Server sends a Server API request (x-api-key and x-secret-key) with a JSON
// body.
func (e *Env) Server(t testing.TB, app App, method, path string, body any) Response {
	t.Helper()
	return e.Do(t, Request{Method: method, URL: path, Body: body,
		Header: map[string]string{"x-api-key": app.APIKey, "x-secret-key": app.SecretKey}})
}

// SDK sends an SDK API request (x-api-key only) with a JSON body.
func (e *Env) SDK(t testing.TB, app App, method, path string, body any) Response {
	t.Helper()
	return e.Do(t, Request{Method: method, URL: path, Body: body,
		Header: map[string]string{"x-api-key": app.APIKey}})
}

// AdminDo sends an admin API request with the admin token.
func (e *Env) AdminDo(t testing.TB, method, path string, body any) Response {
	t.Helper()
	return Send(t, http.DefaultClient, e.Admin.URL, Request{Method: method, URL: path, Body: body,
		Header: map[string]string{"Authorization": "Bearer " + e.AdminToken}})
}

// SetMarketing calls PATCH /api/app-user/v2/marketing.
func (e *Env) SetMarketing(t testing.TB, app App, userID any, state map[string]any) Response {
	t.Helper()
	return e.Server(t, app, http.MethodPatch, "/api/app-user/v2/marketing", map[string]any{"userId": userID, "state": state})
}

// Withdraw calls DELETE /api/app-user/v2.
func (e *Env) Withdraw(t testing.TB, app App, userID any) Response {
	t.Helper()
	return e.Server(t, app, http.MethodDelete, "/api/app-user/v2", map[string]any{"userId": userID})
}

// RegisterToken calls POST /api/sdk/v2/push-token and fails the test unless
// it answers 200. userID nil registers the device unmapped.
func (e *Env) RegisterToken(t testing.TB, app App, deviceID, token string, userID any) DeviceAnswer {
	t.Helper()
	body := map[string]any{"deviceId": deviceID, "token": token, "platform": "android", "appSourceVersion": "1.6.0"}
	if userID != nil {
		body["userId"] = userID
	}
	res := e.SDK(t, app, http.MethodPost, "/api/sdk/v2/push-token", body)
	if res.Status != http.StatusOK {
		t.Fatalf("register token %s on %s: got %d %s, want 200", token, deviceID, res.Status, res.Body)
	}
	var d DeviceAnswer
	res.Decode(t, &d)
	return d
}

// DeviceAnswer is the SDK's answer to push-token and user calls.
type DeviceAnswer struct {
	DeviceID       string  `json:"deviceId"`
	UserID         *string `json:"userId"`
	Marketing      bool    `json:"marketing"`
	MarketingNight bool    `json:"marketingNight"`
}

// User is the admin view of an app user.
type User struct {
	UserID         string   `json:"userId"`
	State          string   `json:"state"`
	Marketing      bool     `json:"marketing"`
	MarketingNight bool     `json:"marketingNight"`
	Devices        []Device `json:"devices"`
}

// Device is one device of the admin user view.
type Device struct {
	DeviceID         string   `json:"deviceId"`
	Platform         string   `json:"platform"`
	AppSourceVersion string   `json:"appSourceVersion"`
	TokenSuffix      string   `json:"tokenSuffix"`
	Marketing        bool     `json:"marketing"`
	MarketingNight   bool     `json:"marketingNight"`
	Topics           []string `json:"topics"`
}

// Consent returns the device's pair.
func (d Device) Consent() herald.Consent {
	return herald.Consent{Marketing: d.Marketing, MarketingNight: d.MarketingNight}
}

// Consent returns the user's pair.
func (u User) Consent() herald.Consent {
	return herald.Consent{Marketing: u.Marketing, MarketingNight: u.MarketingNight}
}

// User reads GET /admin/v1/apps/{appId}/users/{userId} and fails the test
// unless it answers 200.
func (e *Env) User(t testing.TB, app App, userID string) User {
	t.Helper()
	res := e.AdminDo(t, http.MethodGet, "/admin/v1/apps/"+app.ID+"/users/"+userID, nil)
	if res.Status != http.StatusOK {
		t.Fatalf("get user %s: got %d %s, want 200", userID, res.Status, res.Body)
	}
	var u User
	res.Decode(t, &u)
	return u
}

// TokenCount counts the devices of app holding token, straight from the
// database.
func (e *Env) TokenCount(t testing.TB, app App, token string) int {
	t.Helper()
	var n int
	err := e.DB.Reader.QueryRow(`SELECT count(*) FROM devices WHERE app_id = ? AND token = ?`, app.ID, token).Scan(&n)
	if err != nil {
		t.Fatalf("count tokens: %v", err)
	}
	return n
}

// ErrorBody is the error shape of spec section 7.
type ErrorBody struct {
	StatusCode int             `json:"statusCode"`
	Path       string          `json:"path"`
	Code       string          `json:"code"`
	Message    string          `json:"message"`
	Details    []herald.Detail `json:"details"`
}

// WantError checks that res is the error want, at path, in the spec's body
// shape: exactly statusCode, path, code, message (and details only on
// ERR-AB-VAL-00, where it must name at least one problem). It returns the
// decoded body.
func WantError(t testing.TB, res Response, path string, want *herald.Error) ErrorBody {
	t.Helper()
	if res.Status != want.Status {
		t.Errorf("status: got %d, want %d (body %s)", res.Status, want.Status, res.Body)
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type: got %q, want application/json", ct)
	}
	var members map[string]json.RawMessage
	res.Decode(t, &members)
	allowed := map[string]bool{"statusCode": true, "path": true, "code": true, "message": true}
	if want.Code == herald.ErrInvalidRequest.Code || want.Code == herald.ErrNoDevice.Code || len(want.Details) > 0 {
		allowed["details"] = true // naming the fields, the target with no device, or what to do
	}
	for k := range members {
		if !allowed[k] {
			t.Errorf("error body member %q: got present, want absent (body %s)", k, res.Body)
		}
	}
	var got ErrorBody
	res.Decode(t, &got)
	wantBody := ErrorBody{StatusCode: want.Status, Path: path, Code: want.Code, Message: want.Message}
	if got.StatusCode != wantBody.StatusCode || got.Path != wantBody.Path || got.Code != wantBody.Code || got.Message != wantBody.Message {
		t.Errorf("error body: got {%d %q %q %q}, want {%d %q %q %q}", got.StatusCode, got.Path, got.Code, got.Message,
			wantBody.StatusCode, wantBody.Path, wantBody.Code, wantBody.Message)
	}
	if want.Code != herald.ErrInvalidRequest.Code && len(want.Details) > 0 && !slices.Equal(got.Details, want.Details) {
		t.Errorf("details: got %+v, want %+v", got.Details, want.Details)
	}
	if want.Code == herald.ErrInvalidRequest.Code {
		if len(got.Details) == 0 {
			t.Errorf("details: got none, want at least one {field, reason} (body %s)", res.Body)
		}
		for _, d := range got.Details {
			if d.Field == "" || d.Reason == "" {
				t.Errorf("detail: got %+v, want a non-empty field and reason", d)
			}
		}
	}
	return got
}
