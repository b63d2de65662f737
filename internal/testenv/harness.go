package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/fcm/fcmtest"
	"github.com/heraldpush/herald/sqlite"
)

// Harness is an Env bound to one test, with the helpers of the tests that
// send pushes end to end: apps with FCM credentials on the emulator,
// devices, pushes followed to their end, what the emulator received.
type Harness struct {
	*Env
	T *testing.T
}

// Start starts an environment for an end-to-end test: on the engine the
// tests run on (TestEngine), accepting the emulator's service accounts
// (Config.FCM.Client.AllowAnyTokenURI) and webhooks on loopback
// (Config.Webhook.AllowPrivate).
func Start(t *testing.T, opts ...Options) *Harness {
	t.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	o.Config.FCM.Client.AllowAnyTokenURI, o.Config.Webhook.AllowPrivate = true, true
	return StartWith(t, o)
}

// StartWith starts an environment for an end-to-end test with o as given,
// on the engine the tests run on (TestEngine).
func StartWith(t *testing.T, o Options) *Harness {
	t.Helper()
	o.Engine = TestEngine()
	return &Harness{Env: New(t, o), T: t}
}

// EnvLong names the variable that runs the long tests (load-sized crash
// and import runs, long simulations): CI sets it; `go test ./...` leaves
// them out, so that it runs in about two minutes.
const EnvLong = "HERALD_TEST_LONG"

// EnvInt returns the environment variable name as a positive whole
// number, or def when it is unset or not one: how a measurement behind an
// environment variable is sized.
func EnvInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// Long skips a long test (what it does, for the message) unless EnvLong
// is set.
func Long(t testing.TB, what string) {
	t.Helper()
	if os.Getenv(EnvLong) == "" {
		t.Skip(what + ": a long test, run with " + EnvLong + "=1 (CI does)")
	}
}

// SQLiteOnly skips a test of something only the embedded store has when
// the tests run on PostgreSQL.
func SQLiteOnly(t testing.TB, what string) {
	t.Helper()
	if TestEngine() != SQLite {
		t.Skip("SQLite only (" + what + "): this run is on PostgreSQL")
	}
}

// SQLiteOnly skips h's test when it runs on PostgreSQL.
func (h *Harness) SQLiteOnly(what string) { h.T.Helper(); SQLiteOnly(h.T, what) }

// SQLiteDB is the node's SQLite engine; the test fails on PostgreSQL.
func (h *Harness) SQLiteDB() *sqlite.DB {
	h.T.Helper()
	if h.DB == nil {
		h.T.Fatalf("the node's engine is %s, not SQLite", h.Node.DB.Name())
	}
	return h.DB
}

// AdminJSON calls the admin API and decodes the answer into out (nil: the
// answer is dropped); body is sent as is when []byte, as JSON otherwise.
func (h *Harness) AdminJSON(method, path string, body any, out any) int {
	h.T.Helper()
	var rd io.Reader
	if b, ok := body.([]byte); ok {
		rd = bytes.NewReader(b)
	} else if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, h.Admin.URL+path, rd)
	req.Header.Set("Authorization", "Bearer "+h.AdminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.T.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			h.T.Fatalf("%s %s: decode %s: %v", method, path, raw, err)
		}
	}
	return resp.StatusCode
}

// The ad footer's settings of a test app (see NewAppWithoutFCM).
const (
	AdSender  = "(주)테스트"
	AdContact = "080-000-0000"
	AdOptOut  = "수신거부: 마이 > 설정 > 알림"
)

// AdFooter is the footer a test app's marketing messages end with.
const AdFooter = "\n" + AdSender + " " + AdContact + "\n" + AdOptOut

// NewApp creates an app through the admin API with FCM credentials on the
// emulator.
func (h *Harness) NewApp(settings map[string]any) App {
	h.T.Helper()
	a := h.NewAppWithoutFCM(settings)
	h.PutCredentials(a, "proj-"+a.ID[len(a.ID)-6:])
	return a
}

// NewAppWithoutFCM creates an app through the admin API and uploads no FCM
// credentials.
func (h *Harness) NewAppWithoutFCM(settings map[string]any) App {
	h.T.Helper()
	if settings == nil {
		settings = map[string]any{}
	}
	if settings["name"] == nil {
		settings["name"] = "test app"
	}
	// An app under the (광고) rule sends ads only with the footer's
	// settings: a test app has them unless the test says otherwise (null).
	if _, ok := settings["adSender"]; !ok {
		settings["adSender"] = map[string]any{"name": AdSender, "contact": AdContact}
	}
	if _, ok := settings["adOptOut"]; !ok {
		settings["adOptOut"] = AdOptOut
	}
	var a struct{ AppID, APIKey, SecretKey string }
	if code := h.AdminJSON("POST", "/admin/v1/apps", settings, &a); code != http.StatusCreated {
		h.T.Fatalf("create app: got %d, want 201", code)
	}
	return App{ID: a.AppID, APIKey: a.APIKey, SecretKey: a.SecretKey, Client: client.New(h.API.URL, a.APIKey, a.SecretKey, nil)}
}

// PutCredentials uploads a service account of project, whose token_uri is
// the emulator's. The emulator refuses tokens of a project named denied….
func (h *Harness) PutCredentials(a App, project string) {
	h.T.Helper()
	creds := fcmtest.ServiceAccountJSON(h.T, project, h.EmulatorURL+"/token")
	if code := h.AdminJSON("PUT", "/admin/v1/apps/"+a.ID+"/fcm-credentials", creds, nil); code != http.StatusOK {
		h.T.Fatalf("put fcm credentials: got %d, want 200", code)
	}
}

// Register registers one device per user, with tokens prefix+user.
func (h *Harness) Register(a App, prefix string, users ...string) {
	h.T.Helper()
	for i, u := range users {
		_, err := a.Client.RegisterPushToken(context.Background(), client.RegisterRequest{
			DeviceID: fmt.Sprintf("dev-%s-%d", u, i), Token: prefix + u, Platform: "android", AppSourceVersion: "1.6.0", UserID: u,
		})
		if err != nil {
			h.T.Fatalf("register %s: %v", u, err)
		}
	}
}

// WaitFor polls cond until it holds or the deadline passes.
func WaitFor(t testing.TB, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond) // polling interval, not a wait for work
	}
}

// Push reads a push's admin record.
func (h *Harness) Push(id string) PushView {
	h.T.Helper()
	var p PushView
	if code := h.AdminJSON("GET", "/admin/v1/pushes/"+id, nil, &p); code != http.StatusOK {
		h.T.Fatalf("get push %s: got %d", id, code)
	}
	return p
}

// PushView is a push's admin record.
type PushView struct {
	PushID, Status, RequestGroupID string
	Kind, FailureReason            string
	Marketing, IsUsingBadge        bool
	ServerActions                  float64
	Counts                         struct {
		RequestedUsers, Tokens, Sent, Failed, SuppressedConsent, SuppressedNight, SuppressedCap, Unreachable int
	}
	UnreachableUsers []struct{ UserID, Reason string }
	Failures         []struct{ UserID, Token, Error string }
}

// Keys returns the Server API headers of the app.
func (a App) Keys() map[string]string {
	return map[string]string{"x-api-key": a.APIKey, "x-secret-key": a.SecretKey}
}

// ServerDo sends a raw request to the public listener: body is sent as is
// when a string or []byte, as JSON otherwise.
func (h *Harness) ServerDo(method, path string, header map[string]string, body any) Response {
	h.T.Helper()
	return Send(h.T, http.DefaultClient, h.API.URL, Request{Method: method, URL: path, Header: header, Body: body})
}

// Device registers one device through the SDK API and fails the test unless
// it is accepted.
func (h *Harness) Device(a App, deviceID, token, platform, version string, userID any) {
	h.T.Helper()
	_, err := a.Client.RegisterPushToken(context.Background(), client.RegisterRequest{
		DeviceID: deviceID, Token: token, Platform: platform, AppSourceVersion: version, UserID: userID,
	})
	if err != nil {
		h.T.Fatalf("register %s for %v: %v", token, userID, err)
	}
}

// PatchApp changes app settings through the admin API.
func (h *Harness) PatchApp(a App, settings map[string]any) {
	h.T.Helper()
	if code := h.AdminJSON("PATCH", "/admin/v1/apps/"+a.ID, settings, nil); code != http.StatusOK {
		h.T.Fatalf("patch app %v: got %d, want 200", settings, code)
	}
}

// PushList returns the app's pushes (newest first, at most 200).
func (h *Harness) PushList(a App) []PushView {
	h.T.Helper()
	var out struct{ Pushes []PushView }
	if code := h.AdminJSON("GET", "/admin/v1/apps/"+a.ID+"/pushes?limit=200", nil, &out); code != http.StatusOK {
		h.T.Fatalf("list pushes: got %d, want 200", code)
	}
	return out.Pushes
}

// WaitFinal waits until the push is done or failed and returns it.
func (h *Harness) WaitFinal(id string, timeout time.Duration) PushView {
	h.T.Helper()
	var p PushView
	WaitFor(h.T, "push "+id+" to finish", timeout, func() bool {
		p = h.Push(id)
		return p.Status == "done" || p.Status == "failed"
	})
	return p
}

// UserView is the admin view of an app user.
type UserView struct {
	UserID, State             string
	Marketing, MarketingNight bool
	Devices                   []struct {
		DeviceID, Platform, TokenSuffix string
		Marketing, MarketingNight       bool
		Locale, TimeZone                string
		LastSeenAt                      time.Time
	}
}

// UserView reads the admin view of an app user.
func (h *Harness) UserView(a App, userID string) UserView {
	h.T.Helper()
	var u UserView
	if code := h.AdminJSON("GET", "/admin/v1/apps/"+a.ID+"/users/"+userID, nil, &u); code != http.StatusOK {
		h.T.Fatalf("get user %s: got %d, want 200", userID, code)
	}
	return u
}

// EmuMessage is one message as GET /emulator/messages shows it.
type EmuMessage struct {
	ReceivedAt time.Time
	Project    string
	Message    json.RawMessage
}

// Received reads, over the emulator's HTTP inspection endpoint, the
// messages it accepted for token.
func (h *Harness) Received(token string) []EmuMessage {
	h.T.Helper()
	resp, err := http.Get(h.EmulatorURL + "/emulator/messages?token=" + url.QueryEscape(token))
	if err != nil {
		h.T.Fatalf("emulator messages: %v", err)
	}
	defer resp.Body.Close()
	var out struct{ Messages []EmuMessage }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		h.T.Fatalf("emulator messages: decode: %v", err)
	}
	return out.Messages
}

// SentTo counts, per token, the accepted messages carrying data.pushId id.
func (h *Harness) SentTo(id string) map[string]int {
	h.T.Helper()
	out := map[string]int{}
	for _, r := range h.Emulator.Messages("") {
		var m struct {
			Token string
			Data  map[string]string
		}
		if err := json.Unmarshal(r.Message, &m); err != nil {
			h.T.Fatalf("emulator message %s: %v", r.Message, err)
		}
		if m.Data["pushId"] == id {
			out[m.Token]++
		}
	}
	return out
}

// Usage reads the app's Server Actions of this month.
func (h *Harness) Usage(a App) float64 {
	h.T.Helper()
	var u struct{ TotalServerActions float64 }
	if code := h.AdminJSON("GET", "/admin/v1/apps/"+a.ID+"/usage", nil, &u); code != http.StatusOK {
		h.T.Fatalf("usage: got %d, want 200", code)
	}
	return u.TotalServerActions
}

// Hook is one request a webhook receiver got.
type Hook struct {
	Header http.Header
	Body   []byte
}

// Receiver is a webhook endpoint on 127.0.0.1 that records what it gets
// and answers 500 to the first failFirst requests.
type Receiver struct {
	URL       string
	mu        sync.Mutex
	failFirst int
	got       []Hook
}

// NewReceiver starts a receiver that answers 500 to the first failFirst
// requests, stopped when the test ends.
func NewReceiver(t testing.TB, failFirst int) *Receiver {
	t.Helper()
	r := &Receiver{failFirst: failFirst}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, Hook{Header: req.Header.Clone(), Body: body})
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

// Hooks returns what the receiver got so far.
func (r *Receiver) Hooks() []Hook {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// PutWebhook registers url as the app's webhook and returns its secret.
func (h *Harness) PutWebhook(a App, url string) string {
	h.T.Helper()
	var out struct{ URL, Secret string }
	if code := h.AdminJSON("PUT", "/admin/v1/apps/"+a.ID+"/webhook", map[string]string{"url": url}, &out); code != http.StatusOK {
		h.T.Fatalf("put webhook: got %d, want 200", code)
	}
	if out.URL != url {
		h.T.Errorf("webhook url: got %q, want %q", out.URL, url)
	}
	return out.Secret
}

// NightView is the admin record of a push as the night tests read it.
type NightView struct {
	Status        string
	NightPolicy   string
	DeferredUntil *time.Time
	ServerActions float64
	Counts        struct {
		Tokens, Sent, SuppressedConsent, SuppressedNight, DeferredNight int
	}
}

// NightPush reads a push's admin record as a NightView.
func (h *Harness) NightPush(id string) NightView {
	h.T.Helper()
	var v NightView
	if code := h.AdminJSON("GET", "/admin/v1/pushes/"+id, nil, &v); code != http.StatusOK {
		h.T.Fatalf("get push %s: got %d", id, code)
	}
	return v
}

// Arrivals returns when the emulator accepted each message of each push,
// oldest first, by push id.
func (h *Harness) Arrivals(pushIDs ...string) map[string][]time.Time {
	h.T.Helper()
	out := map[string][]time.Time{}
	for _, r := range h.Emulator.Messages("") {
		var m struct{ Data map[string]string }
		if err := json.Unmarshal(r.Message, &m); err != nil {
			h.T.Fatalf("emulator message %s: %v", r.Message, err)
		}
		if id := m.Data["pushId"]; slices.Contains(pushIDs, id) {
			out[id] = append(out[id], r.ReceivedAt)
		}
	}
	return out
}

// PushProjects makes two apps of one FCM project and one of another, each
// at the default app rate with n users, pushes to all of each at once,
// waits for the three pushes and returns when the emulator took each
// message: the 2n of the shared project and the n of the other, in order.
func (h *Harness) PushProjects(n int) (shared, other []time.Time) {
	h.T.Helper()
	var apps [3]App
	for i, project := range []string{"shared-proj", "shared-proj", "other-proj"} {
		apps[i] = h.NewAppWithoutFCM(map[string]any{"name": fmt.Sprintf("app %d", i)})
		h.PutCredentials(apps[i], project)
	}
	users := make([]any, n)
	for j := range users {
		users[j] = fmt.Sprintf("u%02d", j)
	}
	for i, a := range apps {
		for _, u := range users {
			h.Register(a, fmt.Sprintf("proj%d-", i), u.(string))
		}
	}
	ids := h.pushTogether(apps[:], [][]any{users, users, users})
	arrivals := h.Arrivals(ids...)
	shared = append(arrivals[ids[0]], arrivals[ids[1]]...)
	other = arrivals[ids[2]]
	if len(shared) != 2*n || len(other) != n {
		h.T.Fatalf("arrivals: got %d of the shared project and %d of the other, want %d and %d", len(shared), len(other), 2*n, n)
	}
	for _, ts := range [][]time.Time{shared, other} {
		slices.SortFunc(ts, func(x, y time.Time) int { return x.Compare(y) })
	}
	return shared, other
}

// PushPaced registers n users of a, sends them two pushes of n/2 each at
// once, waits for both and returns the span of the arrivals of all n.
func (h *Harness) PushPaced(a App, n int) time.Duration {
	h.T.Helper()
	var users [2][]any
	for i := range n {
		u := fmt.Sprintf("u%02d", i)
		h.Register(a, "rate-", u)
		users[i*2/n] = append(users[i*2/n], u)
	}
	ids := h.pushTogether([]App{a, a}, users[:])
	var all []time.Time
	for _, at := range h.Arrivals(ids...) {
		all = append(all, at...)
	}
	if len(all) != n {
		h.T.Fatalf("arrivals: got %d, want %d", len(all), n)
	}
	slices.SortFunc(all, func(x, y time.Time) int { return x.Compare(y) })
	return all[n-1].Sub(all[0])
}

// pushTogether sends, all at once, a push of apps[i] to users[i] for each
// i, and waits until each has ended done with every user sent; it returns
// their ids.
func (h *Harness) pushTogether(apps []App, users [][]any) []string {
	h.T.Helper()
	ids := make([]string, len(apps))
	var wg sync.WaitGroup
	for i, a := range apps {
		wg.Go(func() {
			res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: users[i], Title: "paced", Content: "c"})
			if err != nil {
				h.T.Errorf("push %d of app %s: %v", i, a.ID, err)
				return
			}
			ids[i] = res.PushID
		})
	}
	wg.Wait()
	if h.T.Failed() {
		h.T.FailNow()
	}
	for i, id := range ids {
		if p := h.WaitFinal(id, 30*time.Second); p.Status != "done" || p.Counts.Sent != len(users[i]) {
			h.T.Fatalf("push %s: got %s with %d sent, want done with %d", id, p.Status, p.Counts.Sent, len(users[i]))
		}
	}
	return ids
}
