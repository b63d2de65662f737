package delivery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivertype"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/fcm"
	"github.com/heraldpush/herald/fcm/emulator"
	"github.com/heraldpush/herald/fcm/fcmtest"
	"github.com/heraldpush/herald/postgres"
	"github.com/heraldpush/herald/postgres/pgtest"
	"github.com/heraldpush/herald/request"
	"github.com/heraldpush/herald/sqlite/sqlitetest"
	"github.com/heraldpush/herald/sqlstore"
	"github.com/heraldpush/herald/webhook"
)

// The harness of delivery's behaviour tests: the service on a real store
// (SQLite, or PostgreSQL when HERALD_TEST_DATABASE_URL is set), the real
// FCM client against the emulator, the real webhook sender against an
// httptest receiver, and a clock the test sets. River does not run: the
// test drives the jobs (run) as River's producer and completer would,
// through the same units the simulation runs (Service.Unit), so no test
// waits for River's scheduler and a rule that fires at 08:00 or in an
// hour is tested in milliseconds. River's clock is the service's, as
// server.Overrides.Clock makes it in a node: jobs are inserted and judged
// due on the clock the test sets (at). One real test of River's scheduler
// stays in api (TestScheduledPushPunctual).

// The footer settings of every harness app, as testenv gives the API's
// test apps, and the footer they make.
const (
	adSender  = "(주)테스트"
	adContact = "080-000-0000"
	adOptOut  = "수신거부: 마이 > 설정 > 알림"
	adFooter  = "\n" + adSender + " " + adContact + "\n" + adOptOut
)

// seoul is the zone of an app that names none (herald.DefaultTimeZone).
var seoul = func() *time.Location {
	loc, err := time.LoadLocation(herald.DefaultTimeZone)
	if err != nil {
		panic(err)
	}
	return loc
}()

// harnessClock is the service's clock, frozen at what the test set.
type harnessClock struct {
	mu  sync.Mutex
	now time.Time
}

// Now reads the clock.
func (c *harnessClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// NowOrNil reads the clock for River (rivertype.TimeGenerator), which then
// writes its times from it instead of the database's.
func (c *harnessClock) NowOrNil() *time.Time { t := c.Now(); return &t }

func (c *harnessClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// harness is a delivery service with everything real but the clock.
type harness struct {
	t      *testing.T
	ctx    context.Context
	store  *sqlstore.Store
	s      *Service
	clock  *harnessClock
	emu    *emulator.Emulator
	fcmURL string
	mk     *herald.MasterKey
	hook   *hookReceiver
	log    *bytes.Buffer
	logMu  *sync.Mutex
	jobs   jobQueue
	apps   int
	// sentAt holds, by token, the service's clock at each send FCM took.
	sentMu sync.Mutex
	sentAt map[string][]time.Time
}

// harnessOptions changes the harness from its defaults.
type harnessOptions struct {
	emulator    emulator.Options
	fcmTimeout  time.Duration
	projectRate int
	fanoutPage  int
	// now is where the clock starts (the real time when zero).
	now time.Time
}

// newHarness starts the harness with its clock at o.now (now when zero).
func newHarness(t *testing.T, o harnessOptions) *harness {
	t.Helper()
	ctx := context.Background()
	mk, err := herald.ParseMasterKey(herald.NewMasterKeyText())
	must(t, err)
	h := &harness{t: t, ctx: ctx, clock: &harnessClock{now: time.Now()}, mk: mk, log: &bytes.Buffer{}, logMu: &sync.Mutex{}}
	if !o.now.IsZero() {
		h.clock.now = o.now
	}
	h.sentAt = map[string][]time.Time{}
	before := o.emulator.BeforeAnswer
	o.emulator.BeforeAnswer = func(token string) {
		h.sentMu.Lock()
		h.sentAt[token] = append(h.sentAt[token], h.clock.Now())
		h.sentMu.Unlock()
		if before != nil {
			before(token)
		}
	}
	h.emu, h.fcmURL = fcmtest.StartEmulator(t, o.emulator)
	h.store, h.jobs = openStore(t, h.clock)
	h.store.Now = h.clock.Now
	h.hook = newHookReceiver(t)
	h.s = New(Config{
		Store:          h.store,
		Sender:         fcm.NewClient(h.fcmURL, fcm.ClientOptions{AllowAnyTokenURI: true, Timeout: o.fcmTimeout}),
		Webhooks:       webhook.NewSender(webhook.SenderOptions{AllowPrivate: true}),
		MasterKey:      mk,
		Logger:         slog.New(slog.NewTextHandler(&lockedWriter{mu: h.logMu, w: h.log}, nil)),
		Now:            h.clock.Now,
		FCMProjectRate: o.projectRate,
		FanoutPage:     o.fanoutPage,
	})
	return h
}

// lockedWriter serializes the log's writes.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// logs is what the service logged.
func (h *harness) logs() string {
	h.logMu.Lock()
	defer h.logMu.Unlock()
	return h.log.String()
}

// openStore opens a migrated store of the test's own, on PostgreSQL when
// HERALD_TEST_DATABASE_URL is set, else SQLite in a temporary directory,
// with a River client that only inserts jobs, and the jobs' queue as the
// harness drives it.
func openStore(t *testing.T, clock *harnessClock) (*sqlstore.Store, jobQueue) {
	t.Helper()
	ctx := context.Background()
	if os.Getenv(pgtest.EnvURL) != "" {
		db, err := postgres.Open(ctx, pgtest.NewSchema(t, pgtest.BaseURL(t), map[string]string{"pool_max_conns": "8"}))
		must(t, err)
		t.Cleanup(func() { db.Close() })
		must(t, db.Migrate(ctx))
		q, err := river.NewClient(riverpgxv5.New(db.Pool), &river.Config{Test: river.TestConfig{Time: clock}})
		must(t, err)
		db.Queue = q
		return db.Store, jobQueue{list: q.JobList, update: func(id int64, state string, at time.Time, attempt int) error {
			var finalized *time.Time
			if final(state) {
				finalized = &at
			}
			_, err := db.Pool.Exec(ctx, `UPDATE river_job SET state = $1, scheduled_at = $2, attempt = $3, finalized_at = $4 WHERE id = $5`,
				state, at, attempt, finalized, id)
			return err
		}}
	}
	db := sqlitetest.OpenMigrated(t, filepath.Join(t.TempDir(), "herald.db"))
	q, err := river.NewClient(riversqlite.New(db.Writer), &river.Config{Test: river.TestConfig{Time: clock}})
	must(t, err)
	db.Queue = q
	return db.Store, jobQueue{list: q.JobList, update: func(id int64, state string, at time.Time, attempt int) error {
		ts := at.UTC().Round(time.Millisecond).Format("2006-01-02 15:04:05.000") // River's SQLite format
		var finalized *string
		if final(state) {
			finalized = &ts
		}
		_, err := db.Writer.Exec(`UPDATE river_job SET state = ?, scheduled_at = ?, attempt = ?, finalized_at = ? WHERE id = ?`,
			state, ts, attempt, finalized, id)
		return err
	}}
}

// final reports whether a job's state is one it ends in.
func final(state string) bool {
	return state == "completed" || state == "cancelled" || state == "discarded"
}

// jobQueue is River's job table as the harness drives it.
type jobQueue struct {
	list   func(context.Context, *river.JobListParams) (*river.JobListResult, error)
	update func(id int64, state string, at time.Time, attempt int) error
}

// due returns the jobs due by the clock now, oldest first.
func (h *harness) due() []*rivertype.JobRow {
	h.t.Helper()
	res, err := h.jobs.list(h.ctx, river.NewJobListParams().
		States(rivertype.JobStateAvailable, rivertype.JobStateScheduled, rivertype.JobStateRetryable).First(10_000))
	must(h.t, err)
	// River keeps a job's time to the millisecond on SQLite, rounded: a
	// job queued for now may read up to half a millisecond later
	now := h.clock.Now().Add(time.Millisecond)
	var out []*rivertype.JobRow
	for _, j := range res.Jobs {
		if !j.ScheduledAt.After(now) {
			out = append(out, j)
		}
	}
	return out
}

// run works the due jobs, and those they make due, until none is due, as
// River's producer and completer would: the jobs due together run at
// once, as River's workers run them, and each ends done, snoozed (no
// attempt counted), cancelled, or retried at the worker's NextRetry
// until its attempts run out. It returns how many runs it made.
func (h *harness) run() int {
	h.t.Helper()
	runs := 0
	for {
		jobs := h.due()
		if len(jobs) == 0 {
			return runs
		}
		errs := make([]error, len(jobs))
		var wg sync.WaitGroup
		for i, j := range jobs {
			wg.Go(func() { errs[i] = h.work(j) })
		}
		wg.Wait()
		must(h.t, errors.Join(errs...))
		if runs += len(jobs); runs > 10_000 {
			h.t.Fatal("jobs still due after 10,000 runs")
		}
	}
}

// background runs the jobs (run) while the test goes on; the function it
// returns waits for them.
func (h *harness) background() (wait func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		h.run()
	}()
	return func() { <-done }
}

// work runs one job and records its end.
func (h *harness) work(row *rivertype.JobRow) error {
	row.Attempt++
	u, err := h.s.Unit(row)
	if err != nil {
		return err
	}
	timeout := u.Timeout
	if timeout == 0 {
		timeout = JobTimeout
	}
	ctx, cancel := context.WithTimeout(h.ctx, timeout)
	err = (&storeRetry{}).Work(ctx, row, u.Work)
	cancel()
	now := h.clock.Now()
	state, at, attempt := "completed", now, row.Attempt
	var snooze *river.JobSnoozeError
	var cancelled *river.JobCancelError
	switch {
	case err == nil:
	case errors.As(err, &snooze):
		state, at, attempt = "scheduled", now.Add(snooze.Duration), row.Attempt-1
	case errors.As(err, &cancelled):
		state = "cancelled"
	case row.Attempt >= row.MaxAttempts:
		state = "discarded"
	default:
		state, at = "retryable", u.NextRetry()
		if at.IsZero() {
			at = now.Add(time.Duration(math.Pow(float64(row.Attempt), 4)) * time.Second)
		}
	}
	return h.jobs.update(row.ID, state, at, attempt)
}

// at sets the clock, the service's and River's, to t.
func (h *harness) at(t time.Time) { h.clock.set(t) }

// advance moves the service's clock by d (at) and runs what is then due.
func (h *harness) advance(d time.Duration) {
	h.t.Helper()
	h.at(h.clock.Now().Add(d))
	h.run()
}

// harnessApp is an app of the harness.
type harnessApp struct{ herald.App }

// newApp creates a registered business app with FCM credentials of its
// own project, a webhook to the harness's receiver, the footer's
// settings, in Seoul, changed by edit.
func (h *harness) newApp(edit func(*herald.App)) harnessApp {
	h.t.Helper()
	h.apps++
	a := herald.App{ID: fmt.Sprintf("app_h%06d", h.apps), Name: "test app", APIKey: herald.NewAPIKey(), SecretHash: []byte("h"),
		Tier: herald.TierBusiness, Registered: true, TimeZone: herald.DefaultTimeZone, CreatedAt: h.clock.Now(),
		AdSenderName: adSender, AdSenderContact: adContact, AdOptOut: adOptOut}
	if edit != nil {
		edit(&a)
	}
	must(h.t, h.store.CreateApp(h.ctx, a))
	h.credentials(a.ID, "proj-"+a.ID[len(a.ID)-6:])
	must(h.t, h.store.SetWebhook(h.ctx, a.ID, h.hook.url, h.mk.Seal([]byte(webhookSecret))))
	return harnessApp{App: h.app(a.ID)}
}

// credentials gives the app a service account of project.
func (h *harness) credentials(appID, project string) {
	h.t.Helper()
	must(h.t, h.store.SetFCMCredentials(h.ctx, appID, h.mk.Seal(fcmtest.ServiceAccountJSON(h.t, project, h.fcmURL+"/token"))))
}

// app reads an app.
func (h *harness) app(id string) herald.App {
	h.t.Helper()
	a, err := h.store.App(h.ctx, id)
	must(h.t, err)
	return a
}

// editApp changes an app's settings, as the admin API's PATCH does.
func (h *harness) editApp(a harnessApp, edit func(*herald.App)) {
	h.t.Helper()
	app := h.app(a.ID)
	edit(&app)
	must(h.t, h.store.UpdateApp(h.ctx, app))
}

// device registers a device of user (none when user is "") with token.
func (h *harness) device(a harnessApp, deviceID, token, platform, user string) {
	h.t.Helper()
	reg := herald.DeviceRegistration{DeviceID: deviceID, Token: token, Platform: herald.Platform(platform), AppSourceVersion: "1.6.0"}
	if user != "" {
		reg.UserID = &user
	}
	_, err := h.store.RegisterDevice(h.ctx, a.ID, reg)
	must(h.t, err)
}

// register gives each user one android device, dev-<token><user>, of
// token <token><user>: the emulator answers by the token's prefix.
func (h *harness) register(a harnessApp, token string, users ...string) {
	h.t.Helper()
	for _, u := range users {
		h.device(a, "dev-"+token+u, token+u, "android", u)
	}
}

// accept accepts a push as the Server API does: the body judged by the
// request rules at the clock's time, the push accepted by the service.
func (h *harness) accept(a harnessApp, kind herald.PushKind, body any) (string, error) {
	h.t.Helper()
	raw, err := json.Marshal(body)
	must(h.t, err)
	p, rs, err := request.JudgePush(h.app(a.ID), kind, raw, h.clock.Now())
	if err != nil {
		return "", err
	}
	id, _, err := h.s.Accept(h.ctx, p, rs, nil)
	return id, err
}

// push accepts a push to users, fails the test when it is refused, and
// runs its jobs.
func (h *harness) push(a harnessApp, body map[string]any) string {
	h.t.Helper()
	id, err := h.accept(a, herald.KindUsers, body)
	if err != nil {
		h.t.Fatalf("push %v: %v", body, err)
	}
	h.run()
	return id
}

// pushUsers pushes title and content to users.
func (h *harness) pushUsers(a harnessApp, users ...string) string {
	h.t.Helper()
	us := make([]any, len(users))
	for i, u := range users {
		us[i] = u
	}
	return h.push(a, map[string]any{"userIds": us, "title": "t", "content": "c"})
}

// pushView is a push as the admin API shows it: the record, its
// unreachable users and failures.
type pushView struct {
	herald.Push
	Unreachable []herald.Unreachable
	Failures    []herald.Failure
}

// view reads a push.
func (h *harness) view(id string) pushView {
	h.t.Helper()
	p, err := h.store.Push(h.ctx, id)
	must(h.t, err)
	v := pushView{Push: p}
	v.Unreachable, err = h.store.UnreachableUsersOf(h.ctx, id)
	must(h.t, err)
	v.Failures, err = h.store.Failures(h.ctx, id)
	must(h.t, err)
	return v
}

// final runs the jobs due and reads the push, failing the test unless it
// has ended.
func (h *harness) final(id string) pushView {
	h.t.Helper()
	h.run()
	v := h.view(id)
	if v.Status != herald.StatusDone && v.Status != herald.StatusFailed {
		h.t.Fatalf("push %s: got %s after its jobs ran, want done or failed", id, v.Status)
	}
	return v
}

// devices returns a user's devices.
func (h *harness) devices(a harnessApp, user string) []herald.Device {
	h.t.Helper()
	_, ds, err := h.store.User(h.ctx, a.ID, user)
	if errors.Is(err, herald.ErrNotFound) || errors.Is(err, herald.ErrUserNotFound) {
		return nil
	}
	must(h.t, err)
	return ds
}

// emuMessage is a message the emulator took, decoded.
type emuMessage struct {
	Token        string
	Notification struct{ Title, Body string }
	Data         map[string]string
	Android      struct {
		TTL         string `json:"ttl"`
		CollapseKey string `json:"collapse_key"`
	}
	ReceivedAt time.Time `json:"-"`
	raw        json.RawMessage
}

// messages returns the accepted messages to token (all when ""), oldest
// first.
func (h *harness) messages(token string) []emuMessage {
	h.t.Helper()
	var out []emuMessage
	for _, r := range h.emu.Messages(token) {
		var m emuMessage
		if err := json.Unmarshal(r.Message, &m); err != nil {
			h.t.Fatalf("emulator message %s: %v", r.Message, err)
		}
		m.ReceivedAt, m.raw = r.ReceivedAt, r.Message
		out = append(out, m)
	}
	return out
}

// sentTo counts, per token, the accepted messages of push id.
func (h *harness) sentTo(id string) map[string]int {
	h.t.Helper()
	out := map[string]int{}
	for _, m := range h.messages("") {
		if m.Data["pushId"] == id {
			out[m.Token]++
		}
	}
	return out
}

// bodyAt returns the body of the one message of push id at token.
func (h *harness) bodyAt(token, id string) string {
	h.t.Helper()
	var bodies []string
	for _, m := range h.messages(token) {
		if m.Data["pushId"] == id {
			bodies = append(bodies, m.Notification.Body)
		}
	}
	if len(bodies) != 1 {
		h.t.Fatalf("messages of %s at %s: got %d, want 1", id, token, len(bodies))
	}
	return bodies[0]
}

// webhookSecret is the signing secret of every harness app's webhook.
const webhookSecret = "whsec_c2VjcmV0"

// hookReceiver is an app's webhook endpoint: it records each message and
// answers the status its answer gives (200 when nil).
type hookReceiver struct {
	url    string
	mu     sync.Mutex
	got    []hookMessage
	answer func(n int) int
}

// hookMessage is one webhook message received.
type hookMessage struct {
	ID     string
	Status int
	Body   []byte
	Header http.Header
}

func newHookReceiver(t *testing.T) *hookReceiver {
	r := &hookReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		status := http.StatusOK
		if r.answer != nil {
			status = r.answer(len(r.got))
		}
		r.got = append(r.got, hookMessage{ID: req.Header.Get("webhook-id"), Status: status, Body: body, Header: req.Header.Clone()})
		r.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL + "/hook"
	return r
}

// messages returns what the receiver got, in order.
func (r *hookReceiver) messages() []hookMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hookMessage(nil), r.got...)
}

// events returns the bodies of the messages of a type
// ("push.undeliverable", "consent.changed") answered 2xx.
func (r *hookReceiver) events(typ string) []json.RawMessage {
	var out []json.RawMessage
	for _, m := range r.messages() {
		var e struct{ Type string }
		if json.Unmarshal(m.Body, &e) == nil && e.Type == typ && m.Status < 300 {
			out = append(out, m.Body)
		}
	}
	return out
}

// sendTimes returns the service's clock at each send to token FCM took.
func (h *harness) sendTimes(token string) []time.Time {
	h.sentMu.Lock()
	defer h.sentMu.Unlock()
	return append([]time.Time(nil), h.sentAt[token]...)
}

// usage is the Server Actions charged to an app, refunds deducted.
func (h *harness) usage(a harnessApp) float64 {
	h.t.Helper()
	days, err := h.store.Usage(h.ctx, a.ID, "2000-01-01", "2100-01-01")
	must(h.t, err)
	var half int64
	for _, d := range days {
		half += d.Half
	}
	return float64(half) / 2
}

// serverActions is a push's charge.
func (v pushView) serverActions() float64 { return float64(v.ServerActionsHalf) / 2 }
