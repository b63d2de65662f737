package delivery

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
	"github.com/heraldpush/herald/sqlite"
	"github.com/heraldpush/herald/sqlite/sqlitetest"
)

// testClock is a clock the test moves.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// newNoticeDB opens a migrated SQLite store whose jobs are only inserted.
func newNoticeDB(t *testing.T) *sqlite.DB {
	t.Helper()
	return sqlitetest.Open(t)
}

// TestNoticeWorker: the job of a decision makes one consent-notice push,
// however often it runs (a run that died after accepting it is run
// again): to the user, or to the token of a device no user is mapped to,
// rendered with the decision's pair and date; a device gone by then gets
// nothing.
func TestNoticeWorker(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newNoticeDB(t)
	a := herald.App{ID: "app_n", Name: "Shop", APIKey: herald.NewAPIKey(), SecretHash: []byte("h"), Tier: herald.TierBusiness,
		Registered: true, TimeZone: "Asia/Seoul", ConsentNotice: herald.ConsentNotice{Enabled: true}.WithDefaults()}
	if err := db.CreateApp(ctx, a); err != nil {
		t.Fatal(err)
	}
	u1 := "u1"
	for _, reg := range []herald.DeviceRegistration{{DeviceID: "d1", Token: "t1", UserID: &u1}, {DeviceID: "d0", Token: "t0"}, {DeviceID: "dx", Token: "tx"}} {
		reg.Platform, reg.AppSourceVersion = herald.PlatformAndroid, "1.6.0"
		if _, err := db.RegisterDevice(ctx, a.ID, reg); err != nil {
			t.Fatal(err)
		}
	}
	yes := true
	if _, err := db.SetUserConsent(ctx, a.ID, "u1", herald.ConsentChange{Marketing: &yes}); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"d0", "dx"} {
		if _, err := db.SetDeviceConsent(ctx, a.ID, d, herald.ConsentChange{Marketing: &yes, MarketingNight: &yes}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.DeleteDevice(ctx, a.ID, "dx"); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	rows, err := db.Reader.Query(`SELECT id FROM consent_changes WHERE source IN ('server-api', 'sdk') AND (user_id IS NULL OR device_id IS NULL) ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if len(ids) != 3 {
		t.Fatalf("decisions: got %d, want 3", len(ids))
	}
	w := &noticeWorker{s: New(Config{Store: db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})}
	for range 2 {
		for _, id := range ids {
			if err := w.Work(ctx, &river.Job[herald.ConsentNoticeJob]{Args: herald.ConsentNoticeJob{AppID: a.ID, RecordID: id}}); err != nil {
				t.Fatalf("Work %d: %v", id, err)
			}
		}
	}
	ps, _, err := db.Pushes(ctx, a.ID, herald.PushFilter{Limit: 10})
	if err != nil || len(ps) != 2 {
		t.Fatalf("pushes: got %d, %v, want 2 (one each for u1 and d0; dx is gone)", len(ps), err)
	}
	byTarget := map[string]herald.Push{}
	for _, p := range ps {
		rs, _ := db.Recipients(ctx, p.ID)
		key := p.Token
		if len(rs) == 1 {
			key = rs[0].UserID
		}
		byTarget[key] = p
		if p.Kind != herald.KindConsentNotice || p.ServerActionsHalf != 0 || p.Marketing {
			t.Errorf("push %s: got kind %s, charge %d, marketing %v, want an uncharged consent-notice", p.ID, p.Kind, p.ServerActionsHalf, p.Marketing)
		}
	}
	if p := byTarget["u1"]; !strings.Contains(p.Content.Content, "수신 동의, 야간(21시~08시) 수신 거부") || p.Content.Title != "[Shop] 광고성 정보 수신 동의 결과 안내" {
		t.Errorf("u1's notice: got %+v", p.Content)
	}
	if p := byTarget["t0"]; !strings.Contains(p.Content.Content, "수신 동의, 야간(21시~08시) 수신 동의") {
		t.Errorf("d0's notice: got %+v, want it sent to its token t0", byTarget)
	}
}

// TestDailyReconfirmation: the daily run of an app with re-confirmation on
// is made at 10:00 in its time zone, not before, and once that day however
// often it is asked (on any node: the claim is in the store); it names the
// users due within the lead days that have a device, each with its own
// notice; the next day has a run of its own; an app with it off has none.
func TestDailyReconfirmation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newNoticeDB(t)
	seoul, _ := time.LoadLocation("Asia/Seoul")
	clock := &testClock{now: time.Date(2026, 3, 2, 9, 59, 0, 0, seoul)}
	db.Now = clock.Now
	mkApp := func(id string, on bool) herald.App {
		a := herald.App{ID: id, Name: "Shop " + id, APIKey: herald.NewAPIKey(), SecretHash: []byte("h"), Tier: herald.TierBusiness,
			Registered: true, TimeZone: "Asia/Seoul", Reconfirmation: herald.Reconfirmation{Enabled: on}.WithDefaults(), AdOptOut: "수신거부: 설정"}
		if err := db.CreateApp(ctx, a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	on, off := mkApp("app_on", true), mkApp("app_off", false)
	given := clock.Now().AddDate(-2, 0, 10) // due in ten days
	for _, a := range []herald.App{on, off} {
		for _, u := range []string{"due", "nodevice", "recent"} {
			if _, err := db.RegisterDevice(ctx, a.ID, herald.DeviceRegistration{DeviceID: "d-" + u, Token: a.ID + "-t-" + u,
				Platform: herald.PlatformAndroid, AppSourceVersion: "1.6.0", UserID: &u}); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.DeleteDevice(ctx, a.ID, "d-nodevice"); err != nil {
			t.Fatal(err)
		}
		yes := herald.Consent{Marketing: true}
		entries := []herald.ConsentImport{
			{UserID: "due", Consent: yes, At: given},
			{UserID: "nodevice", Consent: yes, At: given},
			{UserID: "recent", Consent: yes, At: clock.Now().AddDate(-1, 0, 0)},
		}
		if n, skipped, err := db.ImportConsent(ctx, a.ID, entries, clock.Now()); err != nil || n != 3 {
			t.Fatalf("import: got %d %v, %v", n, skipped, err)
		}
	}
	s := New(Config{Store: db, Now: clock.Now, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	pushes := func(appID string) []herald.Push {
		t.Helper()
		ps, _, err := db.Pushes(ctx, appID, herald.PushFilter{Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		return ps
	}
	run := func(at time.Time) {
		t.Helper()
		clock.set(at)
		if err := s.DailyReconfirmations(ctx); err != nil {
			t.Fatalf("DailyReconfirmations at %v: %v", at, err)
		}
	}
	run(time.Date(2026, 3, 2, 9, 59, 59, 0, seoul))
	if ps := pushes(on.ID); len(ps) != 0 {
		t.Fatalf("before 10:00: got %d pushes, want none", len(ps))
	}
	run(time.Date(2026, 3, 2, 10, 0, 0, 0, seoul))
	ps := pushes(on.ID)
	if len(ps) != 1 || ps[0].Kind != herald.KindReconfirmation || ps[0].RequestedUsers != 1 || ps[0].ServerActionsHalf != 0 {
		t.Fatalf("at 10:00: got %+v, want one uncharged consent-reconfirmation push to one user", ps)
	}
	rs, err := db.Recipients(ctx, ps[0].ID)
	if err != nil || len(rs) != 1 || rs[0].UserID != "due" || rs[0].Content == nil {
		t.Fatalf("recipients: got %+v, %v, want due with its notice", rs, err)
	}
	stored, err := db.App(ctx, on.ID)
	if err != nil {
		t.Fatal(err)
	}
	// {optOut} is the app's adOptOut as stored (the ad footer's setting).
	want := herald.Content{Title: "[Shop app_on] 광고성 정보 수신 동의 확인 안내",
		Content: strings.TrimSpace(given.Format(time.DateOnly) + "에 동의하신 광고성 정보 수신 상태를 안내합니다: 수신 동의, 야간(21시~08시) 수신 거부. " + stored.AdOptOut)}
	if *rs[0].Content != want {
		t.Errorf("notice: got %+v, want %+v", *rs[0].Content, want)
	}
	for _, at := range []time.Time{time.Date(2026, 3, 2, 10, 1, 0, 0, seoul), time.Date(2026, 3, 2, 23, 59, 0, 0, seoul)} {
		run(at)
	}
	if ps := pushes(on.ID); len(ps) != 1 {
		t.Errorf("later the same day: got %d pushes, want still 1", len(ps))
	}
	if ps := pushes(off.ID); len(ps) != 0 {
		t.Errorf("app with re-confirmation off: got %d pushes, want none", len(ps))
	}
	// The next day the first notice is still on its way: the run is made,
	// naming nobody. Once that push is recorded (here reaching nobody, as
	// when every token was dead), the user, still due, is named again.
	run(time.Date(2026, 3, 3, 10, 0, 0, 0, seoul))
	if claimed, err := db.ReconfirmationClaimed(ctx, on.ID, "2026-03-03"); err != nil || !claimed || len(pushes(on.ID)) != 1 {
		t.Errorf("the next day with the first notice on its way: got claimed %v, %v, %d pushes, want the run made with no push",
			claimed, err, len(pushes(on.ID)))
	}
	if ok, err := db.RecordReconfirmed(ctx, on.ID, ps[0].ID, nil, clock.Now()); err != nil || !ok {
		t.Fatalf("RecordReconfirmed: %v, %v", ok, err)
	}
	run(time.Date(2026, 3, 4, 10, 0, 0, 0, seoul))
	if ps := pushes(on.ID); len(ps) != 2 {
		t.Errorf("the day after, the first push recorded: got %d pushes, want a second one", len(ps))
	}
	if !strings.Contains(want.Content, "2024-03-12") {
		t.Errorf("consentDate: got %q, want the import's date 2024-03-12", want.Content)
	}
}

// TestReconfirmedWorker: at a re-confirmation push's end, the users with a
// delivery sent are confirmed in the trail, those without stay as they
// were; in a sandbox app (FCM only validated the sends) nobody is.
func TestReconfirmedWorker(t *testing.T) {
	t.Parallel()
	for _, sandbox := range []bool{false, true} {
		t.Run(map[bool]string{false: "Sent", true: "Sandbox"}[sandbox], func(t *testing.T) {
			ctx := context.Background()
			db := newNoticeDB(t)
			a := herald.App{ID: "app_r", Name: "Shop", APIKey: herald.NewAPIKey(), SecretHash: []byte("h"), Tier: herald.TierBusiness,
				Registered: true, TimeZone: "Asia/Seoul", Sandbox: sandbox}
			if err := db.CreateApp(ctx, a); err != nil {
				t.Fatal(err)
			}
			yes := true
			for _, u := range []string{"u1", "u2"} {
				if _, err := db.RegisterDevice(ctx, a.ID, herald.DeviceRegistration{DeviceID: "d" + u, Token: "t" + u,
					Platform: herald.PlatformAndroid, AppSourceVersion: "1.6.0", UserID: &u}); err != nil {
					t.Fatal(err)
				}
				if _, err := db.SetUserConsent(ctx, a.ID, u, herald.ConsentChange{Marketing: &yes}); err != nil {
					t.Fatal(err)
				}
			}
			s := New(Config{Store: db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			p := herald.Push{ID: herald.NewID("push_", time.Now()), AppID: a.ID, Kind: herald.KindReconfirmation, Status: herald.StatusSending,
				CreatedAt: time.Now().UTC().Truncate(time.Millisecond), RequestedUsers: 2}
			if _, _, err := s.Accept(ctx, p, []herald.Recipient{{UserID: "u1"}, {UserID: "u2"}}, nil); err != nil {
				t.Fatal(err)
			}
			f := sendstore.Fanout{To: sendstore.FanoutCursor{Seq: 2}, Finish: FinishArgs{PushID: p.ID}, Deliveries: []herald.Delivery{
				{Seq: 0, RecipientIdx: 0, UserID: "u1", DeviceID: "du1", Token: "tu1", State: herald.DeliverySent},
				{Seq: 1, RecipientIdx: 1, UserID: "u2", DeviceID: "du2", Token: "tu2", State: herald.DeliveryUndeliverable, Reason: "APP_DELETED"},
			}}
			if ok, err := db.StartSending(ctx, p.ID, f); err != nil || !ok {
				t.Fatalf("StartSending: %v, %v", ok, err)
			}
			w := &reconfirmedWorker{s: s}
			if err := w.Work(ctx, &river.Job[ReconfirmedArgs]{Args: ReconfirmedArgs{PushID: p.ID}}); err != nil {
				t.Fatal(err)
			}
			for u, want := range map[string]bool{"u1": !sandbox, "u2": false} {
				h, err := db.ConsentHistory(ctx, a.ID, u)
				if err != nil {
					t.Fatal(err)
				}
				got := h[len(h)-1].Source == herald.SourceReconfirmation
				if got != want {
					t.Errorf("%s confirmed: got %v, want %v (history %+v)", u, got, want, h)
				}
			}
		})
	}
}
