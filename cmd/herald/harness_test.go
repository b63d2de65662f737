package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/fcm/emulator"
	"github.com/heraldpush/herald/fcm/fcmtest"
	"github.com/heraldpush/herald/internal/testenv"
	"github.com/heraldpush/herald/postgres/pgtest"
	"github.com/heraldpush/herald/sqlite"
)

// env is a running herald serve with an FCM emulator, for end-to-end tests.
type env struct {
	t        *testing.T
	svc      *service
	emu      *emulator.Emulator
	emuURL   string
	logs     *syncBuffer
	dataDir  string
	dbURL    string // the PostgreSQL schema's URL, when on PostgreSQL
	adminTok string
}

type syncBuffer struct {
	mu  chan struct{}
	buf bytes.Buffer
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{mu: make(chan struct{}, 1)} }

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu <- struct{}{}
	defer func() { <-b.mu }()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu <- struct{}{}
	defer func() { <-b.mu }()
	return b.buf.String()
}

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

// sqliteOnly skips a test of something only the embedded store has when
// the tests run on PostgreSQL.
func sqliteOnly(t *testing.T, what string) {
	t.Helper()
	if testEngine() != "sqlite" {
		t.Skip("SQLite only (" + what + "): this run is on PostgreSQL")
	}
}

// sqliteOnly skips e's test when it runs on PostgreSQL.
func (e *env) sqliteOnly(what string) { e.t.Helper(); sqliteOnly(e.t, what) }

// queryRow runs a read-only query of the test's database on either engine;
// it is written with ? placeholders.
func (e *env) queryRow(query string, args ...any) *sql.Row {
	e.t.Helper()
	if e.dbURL != "" {
		n := 0
		query = regexp.MustCompile(`\?`).ReplaceAllStringFunc(query, func(string) string { n++; return "$" + strconv.Itoa(n) })
	}
	return e.svc.DB.JobsDB().QueryRow(query, args...)
}

// sqliteDB is the service's SQLite engine; the test fails on PostgreSQL.
func (e *env) sqliteDB() *sqlite.DB {
	e.t.Helper()
	db, ok := e.svc.DB.(*sqlite.DB)
	if !ok {
		e.t.Fatalf("the service's engine is %s, not SQLite", e.svc.DB.Name())
	}
	return db
}

// config is the configuration of e's service, tweaked.
func (e *env) config(tweak ...func(*config)) config {
	cfg := config{
		Addr: "127.0.0.1:0", AdminAddr: "127.0.0.1:0", DataDir: e.dataDir, AdminToken: e.adminTok,
		FCMEndpoint: e.emuURL, FCMAllowAnyTokenURI: true, WebhookAllowPrivate: true,
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
}

// admin calls the admin API and decodes the answer into out.
func (e *env) admin(method, path string, body any, out any) int {
	e.t.Helper()
	var rd io.Reader
	if b, ok := body.([]byte); ok {
		rd = bytes.NewReader(b)
	} else if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, e.svc.AdminURL+path, rd)
	req.Header.Set("Authorization", "Bearer "+e.adminTok)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			e.t.Fatalf("%s %s: decode %s: %v", method, path, raw, err)
		}
	}
	return resp.StatusCode
}

// The ad footer's settings of a test app (see newAppWithoutFCM).
const (
	testAdSender  = "(주)테스트"
	testAdContact = "080-000-0000"
	testAdOptOut  = "수신거부: 마이 > 설정 > 알림"
)

// testAdFooter is the footer a test app's marketing messages end with.
const testAdFooter = "\n" + testAdSender + " " + testAdContact + "\n" + testAdOptOut

// testApp is an app created through the admin API, with FCM credentials.
type testApp struct {
	ID, APIKey, SecretKey string
	c                     *client.Client
}

func (e *env) newApp(settings map[string]any) testApp {
	e.t.Helper()
	a := e.newAppWithoutFCM(settings)
	e.putCredentials(a, "proj-"+a.ID[len(a.ID)-6:])
	return a
}

// newAppWithoutFCM creates an app through the admin API and uploads no FCM
// credentials.
func (e *env) newAppWithoutFCM(settings map[string]any) testApp {
	e.t.Helper()
	if settings == nil {
		settings = map[string]any{}
	}
	if settings["name"] == nil {
		settings["name"] = "test app"
	}
	// An app under the (광고) rule sends ads only with the footer's
	// settings: a test app has them unless the test says otherwise (null).
	if _, ok := settings["adSender"]; !ok {
		settings["adSender"] = map[string]any{"name": testAdSender, "contact": testAdContact}
	}
	if _, ok := settings["adOptOut"]; !ok {
		settings["adOptOut"] = testAdOptOut
	}
	var a struct{ AppID, APIKey, SecretKey string }
	if code := e.admin("POST", "/admin/v1/apps", settings, &a); code != http.StatusCreated {
		e.t.Fatalf("create app: got %d, want 201", code)
	}
	return testApp{ID: a.AppID, APIKey: a.APIKey, SecretKey: a.SecretKey, c: client.New(e.svc.PublicURL, a.APIKey, a.SecretKey, nil)}
}

// putCredentials uploads a service account of project, whose token_uri is
// the emulator's. The emulator refuses tokens of a project named denied….
func (e *env) putCredentials(a testApp, project string) {
	e.t.Helper()
	creds := fcmtest.ServiceAccountJSON(e.t, project, e.emuURL+"/token")
	if code := e.admin("PUT", "/admin/v1/apps/"+a.ID+"/fcm-credentials", creds, nil); code != http.StatusOK {
		e.t.Fatalf("put fcm credentials: got %d, want 200", code)
	}
}

// register registers n devices, one per user "u<i>", with tokens prefix+i.
func (e *env) register(a testApp, prefix string, users ...string) {
	e.t.Helper()
	for i, u := range users {
		_, err := a.c.RegisterPushToken(context.Background(), client.RegisterRequest{
			DeviceID: fmt.Sprintf("dev-%s-%d", u, i), Token: prefix + u, Platform: "android", AppSourceVersion: "1.6.0", UserID: u,
		})
		if err != nil {
			e.t.Fatalf("register %s: %v", u, err)
		}
	}
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond) // polling interval, not a wait for work
	}
}

// pushStatus reads a push's admin record.
func (e *env) push(id string) pushView {
	e.t.Helper()
	var p pushView
	if code := e.admin("GET", "/admin/v1/pushes/"+id, nil, &p); code != http.StatusOK {
		e.t.Fatalf("get push %s: got %d", id, code)
	}
	return p
}

type pushView struct {
	PushID, Status, RequestGroupID string
	Kind, FailureReason            string
	Marketing, IsUsingBadge        bool
	ServerActions                  float64
	Counts                         struct {
		RequestedUsers, Tokens, Sent, Failed, SuppressedConsent, SuppressedNight, Unreachable int
	}
	UnreachableUsers []struct{ UserID, Reason string }
	Failures         []struct{ UserID, Token, Error string }
}

// keys returns the Server API headers of the app.
func (a testApp) keys() map[string]string {
	return map[string]string{"x-api-key": a.APIKey, "x-secret-key": a.SecretKey}
}

// serverDo sends a raw request to the public listener: body is sent as is
// when a string or []byte, as JSON otherwise.
func (e *env) serverDo(method, path string, header map[string]string, body any) testenv.Response {
	e.t.Helper()
	return testenv.Send(e.t, http.DefaultClient, e.svc.PublicURL, testenv.Request{Method: method, URL: path, Header: header, Body: body})
}

// device registers one device through the SDK API and fails the test unless
// it is accepted.
func (e *env) device(a testApp, deviceID, token, platform, version string, userID any) {
	e.t.Helper()
	_, err := a.c.RegisterPushToken(context.Background(), client.RegisterRequest{
		DeviceID: deviceID, Token: token, Platform: platform, AppSourceVersion: version, UserID: userID,
	})
	if err != nil {
		e.t.Fatalf("register %s for %v: %v", token, userID, err)
	}
}

// patchApp changes app settings through the admin API.
func (e *env) patchApp(a testApp, settings map[string]any) {
	e.t.Helper()
	if code := e.admin("PATCH", "/admin/v1/apps/"+a.ID, settings, nil); code != http.StatusOK {
		e.t.Fatalf("patch app %v: got %d, want 200", settings, code)
	}
}

// pushList returns the app's pushes (newest first, at most 200).
func (e *env) pushList(a testApp) []pushView {
	e.t.Helper()
	var out struct{ Pushes []pushView }
	if code := e.admin("GET", "/admin/v1/apps/"+a.ID+"/pushes?limit=200", nil, &out); code != http.StatusOK {
		e.t.Fatalf("list pushes: got %d, want 200", code)
	}
	return out.Pushes
}

// waitFinal waits until the push is done or failed and returns it.
func (e *env) waitFinal(id string, timeout time.Duration) pushView {
	e.t.Helper()
	var p pushView
	waitFor(e.t, "push "+id+" to finish", timeout, func() bool {
		p = e.push(id)
		return p.Status == "done" || p.Status == "failed"
	})
	return p
}

// userView is the admin view of an app user.
type userView struct {
	UserID, State             string
	Marketing, MarketingNight bool
	Devices                   []struct {
		DeviceID, Platform, TokenSuffix string
		Marketing, MarketingNight       bool
	}
}

// user reads the admin view of an app user.
func (e *env) user(a testApp, userID string) userView {
	e.t.Helper()
	var u userView
	if code := e.admin("GET", "/admin/v1/apps/"+a.ID+"/users/"+userID, nil, &u); code != http.StatusOK {
		e.t.Fatalf("get user %s: got %d, want 200", userID, code)
	}
	return u
}

// emuMessage is one message as GET /emulator/messages shows it.
type emuMessage struct {
	ReceivedAt time.Time
	Project    string
	Message    json.RawMessage
}

// received reads, over the emulator's HTTP inspection endpoint, the messages
// it accepted for token.
func (e *env) received(token string) []emuMessage {
	e.t.Helper()
	resp, err := http.Get(e.emuURL + "/emulator/messages?token=" + url.QueryEscape(token))
	if err != nil {
		e.t.Fatalf("emulator messages: %v", err)
	}
	defer resp.Body.Close()
	var out struct{ Messages []emuMessage }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		e.t.Fatalf("emulator messages: decode: %v", err)
	}
	return out.Messages
}

// sentTo counts, per token, the accepted messages carrying data.pushId id.
func (e *env) sentTo(id string) map[string]int {
	e.t.Helper()
	out := map[string]int{}
	for _, r := range e.emu.Messages("") {
		var m struct {
			Token string
			Data  map[string]string
		}
		if err := json.Unmarshal(r.Message, &m); err != nil {
			e.t.Fatalf("emulator message %s: %v", r.Message, err)
		}
		if m.Data["pushId"] == id {
			out[m.Token]++
		}
	}
	return out
}

// usage reads the app's Server Actions of this month.
func (e *env) usage(a testApp) float64 {
	e.t.Helper()
	var u struct{ TotalServerActions float64 }
	if code := e.admin("GET", "/admin/v1/apps/"+a.ID+"/usage", nil, &u); code != http.StatusOK {
		e.t.Fatalf("usage: got %d, want 200", code)
	}
	return u.TotalServerActions
}

// hook is one request a webhook receiver got.
type hook struct {
	Header http.Header
	Body   []byte
}

// receiver is a webhook endpoint on 127.0.0.1 that records what it gets and
// answers 500 to the first failFirst requests.
type receiver struct {
	URL       string
	mu        sync.Mutex
	failFirst int
	got       []hook
}

func newReceiver(t *testing.T, failFirst int) *receiver {
	t.Helper()
	r := &receiver{failFirst: failFirst}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, hook{Header: req.Header.Clone(), Body: body})
		fail := len(r.got) <= r.failFirst
		r.mu.Unlock()
		if fail {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL + "/hooks"
	return r
}

// hooks returns what the receiver got so far.
func (r *receiver) hooks() []hook {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// putWebhook registers url as the app's webhook and returns its secret.
func (e *env) putWebhook(a testApp, url string) string {
	e.t.Helper()
	var out struct{ URL, Secret string }
	if code := e.admin("PUT", "/admin/v1/apps/"+a.ID+"/webhook", map[string]string{"url": url}, &out); code != http.StatusOK {
		e.t.Fatalf("put webhook: got %d, want 200", code)
	}
	if out.URL != url {
		e.t.Errorf("webhook url: got %q, want %q", out.URL, url)
	}
	return out.Secret
}
