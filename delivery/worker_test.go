package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
	"github.com/heraldpush/herald/sqlite"
	"github.com/heraldpush/herald/sqlite/sqlitetest"
)

// tokenSender answers each token's sends with the errors queued for it,
// one per send, then success; it notes every token sent.
type tokenSender struct {
	mu      sync.Mutex
	answers map[string][]error
	authErr error
	sent    []string
}

func (f *tokenSender) ForApp(string, []byte) herald.AppSender { return f }

func (f *tokenSender) Authorize(context.Context) error { return f.authErr }

func (f *tokenSender) Deliver(_ context.Context, n herald.Notification) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, n.Token)
	if q := f.answers[n.Token]; len(q) > 0 {
		f.answers[n.Token] = q[1:]
		return q[0]
	}
	return nil
}

// times counts the sends to token.
func (f *tokenSender) times(token string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, t := range f.sent {
		if t == token {
			n++
		}
	}
	return n
}

// workBundle is a delivery service on a real SQLite store, with an app that
// has FCM credentials and a webhook, and users u1..uN each with one device
// (dI, token tI).
type workBundle struct {
	t      *testing.T
	ctx    context.Context
	db     *sqlite.DB
	s      *Service
	sender *tokenSender
	hooks  *reportHook
	app    herald.App
}

// reportHook records the undeliverable reports it is given and answers err.
type reportHook struct {
	mu      sync.Mutex
	err     error
	reports []herald.UndeliverableReport
}

func (h *reportHook) Report(_ context.Context, _, _ string, r herald.UndeliverableReport) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reports = append(h.reports, r)
	return h.err
}

func (h *reportHook) ConsentChanged(context.Context, string, string, herald.ConsentRecord) error {
	return nil
}

func (h *reportHook) ApprovalRequested(context.Context, string, string, herald.ApprovalRequest) error {
	return nil
}

func newWorkBundle(t *testing.T, users int) *workBundle {
	t.Helper()
	ctx := context.Background()
	db := sqlitetest.Open(t)
	mk, err := herald.ParseMasterKey(herald.NewMasterKeyText())
	if err != nil {
		t.Fatal(err)
	}
	app := herald.App{ID: "app_work", Name: "a", APIKey: herald.NewAPIKey(), SecretHash: []byte("h"), Tier: herald.TierBusiness,
		Registered: true, TimeZone: herald.DefaultTimeZone}
	must(t, db.CreateApp(ctx, app))
	must(t, db.SetFCMCredentials(ctx, app.ID, mk.Seal([]byte(`{"type":"service_account"}`))))
	must(t, db.SetWebhook(ctx, app.ID, "https://hooks.example.com/h", mk.Seal([]byte("whsec_c2VjcmV0"))))
	for i := 1; i <= users; i++ {
		user, n := "u"+strconv.Itoa(i), strconv.Itoa(i)
		if _, err := db.RegisterDevice(ctx, app.ID, herald.DeviceRegistration{DeviceID: "d" + n, Token: "t" + n,
			Platform: herald.PlatformAndroid, AppSourceVersion: "1.6.0", UserID: &user}); err != nil {
			t.Fatal(err)
		}
	}
	b := &workBundle{t: t, ctx: ctx, db: db, sender: &tokenSender{answers: map[string][]error{}}, hooks: &reportHook{}}
	b.s = New(Config{Store: db, Sender: b.sender, Webhooks: b.hooks, MasterKey: mk, ChunkSize: 2, Concurrency: 2,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if b.app, err = db.App(ctx, app.ID); err != nil {
		t.Fatal(err)
	}
	return b
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// accept stores an immediate push to users and returns its id.
func (b *workBundle) accept(users ...string) string {
	b.t.Helper()
	now := time.Now()
	p := herald.Push{ID: herald.NewID("push_", now), AppID: b.app.ID, Kind: herald.KindUsers, Status: herald.StatusSending,
		Content: herald.Content{Title: "title", Content: "content"}, RequestedUsers: len(users),
		ServerActionsHalf: int64(len(users)), CreatedAt: now}
	rs := make([]herald.Recipient, len(users))
	for i, u := range users {
		rs[i] = herald.Recipient{UserID: u}
	}
	id, _, err := b.s.Accept(b.ctx, p, rs, nil)
	must(b.t, err)
	return id
}

// sendJobs returns the chunks of the push's queued send jobs, in order.
func (b *workBundle) sendJobs(pushID string) []SendArgs {
	b.t.Helper()
	rows, err := b.db.Reader.Query(`SELECT json(args) FROM river_job WHERE kind = ? ORDER BY id`, SendArgs{}.Kind())
	must(b.t, err)
	defer rows.Close()
	var out []SendArgs
	for rows.Next() {
		var raw []byte
		must(b.t, rows.Scan(&raw))
		var a SendArgs
		must(b.t, json.Unmarshal(raw, &a))
		if a.PushID == pushID {
			out = append(out, a)
		}
	}
	must(b.t, rows.Err())
	return out
}

// jobs counts the queued jobs of a kind.
func (b *workBundle) jobs(kind string) int {
	b.t.Helper()
	var n int
	must(b.t, b.db.Reader.QueryRow(`SELECT COUNT(*) FROM river_job WHERE kind = ?`, kind).Scan(&n))
	return n
}

func (b *workBundle) fanout(pushID string) error {
	return (&fanoutWorker{s: b.s}).Work(b.ctx, &river.Job[FanoutArgs]{JobRow: &rivertype.JobRow{Attempt: 1}, Args: b.fanoutArgs(pushID)})
}

// fanoutArgs is the push's fan-out job as Service.Accept queues it.
func (b *workBundle) fanoutArgs(pushID string) FanoutArgs {
	return FanoutArgs{PushID: pushID, Sends: mayBeLone(b.push(pushID))}
}

// record runs the fan-out as a run of the watch does: its pages are
// recorded, and a lone chunk (see lone) is left to the fan-out's job, for
// which b.send(id, 0) then stands.
func (b *workBundle) record(pushID string) error {
	return b.s.fanout(b.ctx, b.fanoutArgs(pushID), time.Time{}, 0)
}

func (b *workBundle) send(pushID string, chunk int) error {
	return (&sendWorker{s: b.s}).Work(b.ctx, &river.Job[SendArgs]{JobRow: &rivertype.JobRow{Attempt: 1},
		Args: SendArgs{PushID: pushID, Chunk: chunk}})
}

func (b *workBundle) finish(pushID string) error {
	return (&finishWorker{s: b.s}).Work(b.ctx, &river.Job[FinishArgs]{JobRow: &rivertype.JobRow{Attempt: 1}, Args: FinishArgs{PushID: pushID}})
}

func (b *workBundle) push(id string) herald.Push {
	b.t.Helper()
	p, err := b.db.Push(b.ctx, id)
	must(b.t, err)
	return p
}

// TestFanoutWork: the fan-out records a push's deliveries in chunks, one
// send job each, and a second run finds it done and records nothing.
func TestFanoutWork(t *testing.T) {
	t.Parallel()
	b := newWorkBundle(t, 3)
	id := b.accept("u1", "u2", "u3", "ghost")
	must(t, b.fanout(id))
	if got := b.sendJobs(id); len(got) != 2 || got[0].Chunk != 0 || got[1].Chunk != 1 {
		t.Fatalf("send jobs: got %+v, want chunks 0 and 1", got)
	}
	if p := b.push(id); p.Status != herald.StatusSending || p.Counts.Tokens != 3 {
		t.Errorf("push: got %s with %d tokens, want sending with 3", p.Status, p.Counts.Tokens)
	}
	must(t, b.fanout(id))
	if got := b.sendJobs(id); len(got) != 2 {
		t.Errorf("after a second run: got %d send jobs, want 2", len(got))
	}
}

// TestFanoutSendsLoneChunk: a push that makes one chunk is sent and
// finished by its fan-out job's run, with no send or finish job; a run of
// the job after a crash sends what the run before left (the page recorded,
// nothing sent), and one after a finish that failed finishes the push,
// each token sent once.
func TestFanoutSendsLoneChunk(t *testing.T) {
	t.Parallel()
	b := newWorkBundle(t, 2)
	id := b.accept("u1", "u2")
	must(t, b.fanout(id))
	if p := b.push(id); p.Status != herald.StatusDone || p.Counts.Sent != 2 {
		t.Errorf("push: got %s %+v, want done, 2 sent", p.Status, p.Counts)
	}
	if sends, finishes := len(b.sendJobs(id)), b.jobs(FinishArgs{}.Kind()); sends != 0 || finishes != 0 {
		t.Errorf("jobs: got %d send, %d finish, want none", sends, finishes)
	}

	crashed := b.accept("u1")
	must(t, b.record(crashed)) // the page recorded; the run died before it sent
	must(t, b.fanout(crashed)) // the job's next run
	if p := b.push(crashed); p.Status != herald.StatusDone || p.Counts.Sent != 1 {
		t.Errorf("after a crash: got %s %+v, want done, 1 sent", p.Status, p.Counts)
	}

	unfinished := b.accept("u2")
	flaky := &flakyFinish{FinishStore: b.db, fail: 1}
	b.s.finishes = flaky
	if err := b.fanout(unfinished); err == nil {
		t.Fatal("a run whose finish failed: got nil, want the error")
	}
	if p := b.push(unfinished); p.FinishedAt != nil || p.Counts.Sent != 1 {
		t.Fatalf("after the failed finish: got finished at %v, %+v; want sent, not finished", p.FinishedAt, p.Counts)
	}
	must(t, b.fanout(unfinished)) // the job's retry finishes it
	if p := b.push(unfinished); p.Status != herald.StatusDone {
		t.Errorf("after the retry: got %s, want done", p.Status)
	}
	for tok, want := range map[string]int{"t1": 2, "t2": 2} { // one send of each push
		if got := b.sender.times(tok); got != want {
			t.Errorf("sends to %s: got %d, want %d", tok, got, want)
		}
	}
}

// TestFanoutJobOfOlderBinary: a fan-out job queued by a binary that did
// not send lone chunks (FanoutArgs.Sends unset) records its page with a
// send job, and a run of it after a crash leaves the chunk to that job:
// two runs of one chunk at once would each take the other's sends in
// flight for a dead run's, and send them again.
func TestFanoutJobOfOlderBinary(t *testing.T) {
	t.Parallel()
	b := newWorkBundle(t, 2)
	id := b.accept("u1")
	old := &river.Job[FanoutArgs]{JobRow: &rivertype.JobRow{Attempt: 1}, Args: FanoutArgs{PushID: id}}
	must(t, (&fanoutWorker{s: b.s}).Work(b.ctx, old))
	if got := len(b.sendJobs(id)); got != 1 || b.sender.times("t1") != 0 {
		t.Fatalf("the older job's run: got %d send jobs, %d sends; want its page's send job, nothing sent", got, b.sender.times("t1"))
	}
	old.Attempt = 2 // its run after a crash
	must(t, (&fanoutWorker{s: b.s}).Work(b.ctx, old))
	if got := b.sender.times("t1"); got != 0 {
		t.Fatalf("the older job's second run sent %d messages, want none (its send job sends)", got)
	}
	must(t, b.send(id, 0))
	if p := b.push(id); p.Status != herald.StatusDone || b.sender.times("t1") != 1 {
		t.Errorf("after its send job: got %s, %d sends; want done, 1", p.Status, b.sender.times("t1"))
	}
}

// flakyFinish fails the first fail finishes as an unavailable store would.
type flakyFinish struct {
	FinishStore
	fail int
}

func (f *flakyFinish) FinishPush(ctx context.Context, pushID string, unreachable []herald.Unreachable, follow []herald.Job) (bool, error) {
	if f.fail > 0 {
		f.fail--
		return false, herald.Unavailable(errors.New("connection refused"))
	}
	return f.FinishStore.FinishPush(ctx, pushID, unreachable, follow)
}

// TestSendWork sends a chunk: a dead token is recorded and its device
// dropped, a retriable failure becomes a retry chunk with a job due at its
// backoff, and the chunk completes; the retry chunk's run sends it, and
// the run of the last chunk completed finishes the push.
func TestSendWork(t *testing.T) {
	t.Parallel()
	b := newWorkBundle(t, 4)
	id := b.accept("u1", "u2", "u3", "u4")
	must(t, b.fanout(id))
	b.sender.answers["t1"] = []error{&herald.SendError{Class: herald.SendUnregistered, Code: "UNREGISTERED"}}
	b.sender.answers["t2"] = []error{&herald.SendError{Class: herald.SendRetry, Code: "QUOTA_EXCEEDED", RetryAfter: time.Minute}}
	must(t, b.send(id, 0))
	jobs := b.sendJobs(id)
	if len(jobs) != 3 || jobs[2].Chunk != -1 || time.Until(jobs[2].Due) < 50*time.Second {
		t.Fatalf("send jobs: got %+v, want a retry chunk -1 due in about a minute", jobs)
	}
	if _, _, err := b.db.User(b.ctx, b.app.ID, "u1"); err != nil {
		t.Fatal(err)
	}
	if _, devs, _ := b.db.User(b.ctx, b.app.ID, "u1"); len(devs) != 0 {
		t.Errorf("u1's dead token: got %d devices, want it dropped", len(devs))
	}
	must(t, b.send(id, 1))
	if n := b.jobs(FinishArgs{}.Kind()); n != 0 {
		t.Errorf("finish jobs before the retry: got %d, want 0", n)
	}
	must(t, b.send(id, -1))
	if p := b.push(id); p.FinishedAt == nil || b.jobs(FinishArgs{}.Kind()) != 0 {
		t.Errorf("after the retry: got finished at %v, %d finish jobs; want finished by the retry chunk's run, no job",
			p.FinishedAt, b.jobs(FinishArgs{}.Kind()))
	}
	if got := b.sender.times("t2"); got != 2 {
		t.Errorf("sends to t2: got %d, want 2 (the 429 and its retry)", got)
	}
	c := b.push(id).Counts
	if c.Tokens != 4 || c.Sent != 3 || c.Failed != 1 {
		t.Errorf("counts: got %+v, want 4 tokens, 3 sent, 1 failed", c)
	}
	must(t, b.finish(id))
	p := b.push(id)
	if p.Status != herald.StatusDone || p.Counts.Unreachable != 1 {
		t.Errorf("push: got %s with %d unreachable, want done with u1 unreachable", p.Status, p.Counts.Unreachable)
	}
	if n := b.jobs(WebhookArgs{}.Kind()); n != 1 {
		t.Errorf("webhook jobs: got %d, want 1 (u1 unreachable)", n)
	}
}

// TestSendWorkThirdPartyAuthLegacy: FCM's legacy APNS_AUTH_ERROR (401),
// which the FCM client classes as THIRD_PARTY_AUTH_ERROR, fails that
// delivery only, with the reason: the push goes on for the other devices
// and ends done, and the app carries the warning.
func TestSendWorkThirdPartyAuthLegacy(t *testing.T) {
	t.Parallel()
	b := newWorkBundle(t, 3)
	id := b.accept("u1", "u2", "u3")
	must(t, b.fanout(id))
	b.sender.answers["t1"] = []error{&herald.SendError{Class: herald.SendThirdPartyAuth, Status: 401, Code: "APNS_AUTH_ERROR",
		Message: "Auth error from APNS or Web Push Service"}}
	must(t, b.send(id, 0))
	must(t, b.send(id, 1))
	if got := []int{b.sender.times("t1"), b.sender.times("t2"), b.sender.times("t3")}; !slices.Equal(got, []int{1, 1, 1}) {
		t.Errorf("sends to t1..t3: got %v, want one each", got)
	}
	must(t, b.finish(id))
	p := b.push(id)
	if p.Status != herald.StatusDone || p.FailureReason != "" {
		t.Errorf("push: got %s %q, want done (not failed as a credential refusal)", p.Status, p.FailureReason)
	}
	if c := p.Counts; c.Tokens != 3 || c.Sent != 2 || c.Failed != 1 {
		t.Errorf("counts: got %+v, want 3 tokens, 2 sent, 1 failed", c)
	}
	ds, err := b.db.Deliveries(b.ctx, id)
	must(t, err)
	for _, d := range ds {
		if d.Token == "t1" && (d.State != herald.DeliveryFailed || !strings.Contains(d.Error, "APNS_AUTH_ERROR")) {
			t.Errorf("t1's delivery: got %s %q, want failed with the reason", d.State, d.Error)
		}
	}
	if _, devs, _ := b.db.User(b.ctx, b.app.ID, "u1"); len(devs) != 1 {
		t.Errorf("u1's devices: got %d, want 1 (the error says nothing about the token)", len(devs))
	}
	if app, _ := b.db.App(b.ctx, b.app.ID); !strings.Contains(app.FCMWarning, "APNs or web-push") {
		t.Errorf("app: got warning %q, want the APNs or web-push warning", app.FCMWarning)
	}
}

// TestSendWorkResumesInFlight: a run died with slots in flight. The next
// run settles them into a retry chunk due at once and marked resent; sent
// again, they are recorded as resent, and each token is counted once.
func TestSendWorkResumesInFlight(t *testing.T) {
	t.Parallel()
	b := newWorkBundle(t, 2)
	id := b.accept("u1", "u2")
	must(t, b.record(id))
	if _, _, err := b.db.AdvanceChunk(b.ctx, b.app.ID, id, sendstore.ChunkStep{New: sendstore.Range{Marked: 2}}); err != nil {
		t.Fatal(err)
	}
	must(t, b.send(id, 0))
	if len(b.sender.sent) != 0 {
		t.Fatalf("sent: got %v, want nothing before the retry chunk's run", b.sender.sent)
	}
	jobs := b.sendJobs(id)
	if len(jobs) != 1 || jobs[0].Chunk != -1 || time.Until(jobs[0].Due) > time.Second { // a lone chunk has no job
		t.Fatalf("send jobs: got %+v, want a retry chunk due at once", jobs)
	}
	must(t, b.send(id, -1))
	ds, err := b.db.Deliveries(b.ctx, id)
	must(t, err)
	for _, d := range ds {
		if d.State != herald.DeliverySent || !d.Resent {
			t.Errorf("delivery %d: got %s resent %v, want sent, resent", d.Seq, d.State, d.Resent)
		}
	}
	if c := b.push(id).Counts; c.Tokens != 2 || c.Sent != 2 {
		t.Errorf("counts: got %+v, want 2 tokens, both sent", c)
	}
	if p := b.push(id); p.Status != herald.StatusDone || b.jobs(FinishArgs{}.Kind()) != 0 {
		t.Errorf("push: got %s, %d finish jobs; want done by the retry chunk's run, no job", p.Status, b.jobs(FinishArgs{}.Kind()))
	}
}

// TestSendWorkCredentialsRefused: the app's credentials are refused: the
// push fails with the reason, the app's page warns, and a later run of
// another chunk sends nothing.
func TestSendWorkCredentialsRefused(t *testing.T) {
	t.Parallel()
	b := newWorkBundle(t, 3)
	id := b.accept("u1", "u2", "u3")
	must(t, b.fanout(id))
	b.sender.authErr = &herald.SendError{Class: herald.SendAuth, Code: "invalid_grant", Message: "Invalid JWT Signature."}
	must(t, b.send(id, 0))
	p := b.push(id)
	if p.Status != herald.StatusFailed || p.FailureReason == "" || p.Counts.Failed != 3 {
		t.Errorf("push: got %s %q with %+v, want failed with the reason, every token failed", p.Status, p.FailureReason, p.Counts)
	}
	if app, _ := b.db.App(b.ctx, b.app.ID); app.FCMWarning == "" {
		t.Errorf("app: got no FCM warning, want the refusal")
	}
	b.sender.authErr = nil
	must(t, b.send(id, 1))
	if len(b.sender.sent) != 0 {
		t.Errorf("sent: got %v, want nothing for a failed push", b.sender.sent)
	}
}

// TestSendWorkTokenEndpointDown: the token endpoint cannot be reached: the
// chunk's job comes back after a backoff, nothing sent or settled.
func TestSendWorkTokenEndpointDown(t *testing.T) {
	t.Parallel()
	b := newWorkBundle(t, 1)
	id := b.accept("u1")
	must(t, b.record(id))
	b.sender.authErr = &herald.SendError{Class: herald.SendRetry, Status: 503}
	err := b.send(id, 0)
	var snooze *river.JobSnoozeError
	if !errors.As(err, &snooze) || snooze.Duration <= 0 {
		t.Fatalf("got %v, want the job snoozed for a backoff", err)
	}
	if w, _ := b.db.ResumeChunk(b.ctx, id, 0); w.Range != (sendstore.Range{}) || len(b.sender.sent) != 0 {
		t.Errorf("got %+v and %v sent, want nothing moved", w.Range, b.sender.sent)
	}
}

// TestFinishWork: the finish records the unreachable users once and queues
// a webhook message for them; a second run does nothing.
func TestFinishWork(t *testing.T) {
	t.Parallel()
	b := newWorkBundle(t, 1)
	id := b.accept("u1", "ghost")
	must(t, b.fanout(id))
	must(t, b.send(id, 0))
	must(t, b.finish(id))
	must(t, b.finish(id))
	p := b.push(id)
	if p.Status != herald.StatusDone || p.Counts.Sent != 1 || p.Counts.Unreachable != 1 {
		t.Errorf("push: got %s %+v, want done, 1 sent, ghost unreachable", p.Status, p.Counts)
	}
	if n := b.jobs(WebhookArgs{}.Kind()); n != 1 {
		t.Errorf("webhook jobs: got %d, want 1", n)
	}
}

// TestWebhookWork: a report is posted; a failure is retried, one that
// cannot be mended is cancelled.
func TestWebhookWork(t *testing.T) {
	t.Parallel()
	b := newWorkBundle(t, 0)
	w := &webhookWorker{s: b.s}
	job := &river.Job[WebhookArgs]{JobRow: &rivertype.JobRow{Attempt: 1, MaxAttempts: herald.WebhookAttempts},
		Args: WebhookArgs{Report: herald.UndeliverableReport{ID: "msg_1", AppID: b.app.ID, PushID: "push_1",
			Users: []herald.Unreachable{{UserID: "u1", Reason: herald.ReasonNoToken}}}}}
	must(t, w.Work(b.ctx, job))
	b.hooks.err = errors.New("503")
	if err := w.Work(b.ctx, job); err == nil || isCancel(err) {
		t.Errorf("failed post: got %v, want an error to retry", err)
	}
	b.hooks.err = herald.ErrNoRetry
	if err := w.Work(b.ctx, job); !isCancel(err) {
		t.Errorf("post not to retry: got %v, want the job cancelled", err)
	}
	if got := len(b.hooks.reports); got != 3 || !slices.Equal(b.hooks.reports[0].Users, job.Args.Report.Users) {
		t.Errorf("reports: got %d (%+v), want the report posted 3 times", got, b.hooks.reports)
	}
}

// TestWebhookNextRetryOnServiceClock: a webhook's retry is due on the
// service's clock, which River shares (server.Overrides.Clock): under a
// clock days ahead, the retry is due a retry's wait after that clock's
// now, not days early or late.
func TestWebhookNextRetryOnServiceClock(t *testing.T) {
	t.Parallel()
	ahead := func() time.Time { return time.Now().Add(72 * time.Hour) }
	s := New(Config{Now: ahead, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	before := ahead()
	for name, next := range map[string]time.Time{
		"push.undeliverable": (&webhookWorker{s: s}).NextRetry(&river.Job[WebhookArgs]{JobRow: &rivertype.JobRow{Attempt: 1}}),
		"consent.changed":    (&consentWorker{s: s}).NextRetry(&river.Job[herald.ConsentEventJob]{JobRow: &rivertype.JobRow{Attempt: 1}}),
	} {
		wait, _ := herald.WebhookRetry(1, nil)
		if next.Before(before.Add(wait)) || next.After(ahead().Add(wait)) {
			t.Errorf("%s: first retry at %v, want %v after now on the service's clock", name, next, wait)
		}
	}
}
