package api_test

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/internal/testenv"
)

// Local-time pushes end to end (options.localTime with scheduleTime,
// DESIGN 14): the node runs on an injected clock (River's too) that the
// tests move from one zone's time to the next, so a day of zones passes
// in seconds; the emulator keeps the real clock (clk.Fake converts).

// localView is a push's admin record as the local-time tests read it.
type localView struct {
	Status        string
	LocalTime     bool
	LocalWallTime *string
	ScheduledAt   *time.Time
	NextLocalAt   *time.Time
	ServerActions float64
	Counts        struct{ Tokens, Sent, SuppressedNight, LateLocal int }
}

func (e *env) localPush(id string) localView {
	e.T.Helper()
	var v localView
	if code := e.AdminJSON("GET", "/admin/v1/pushes/"+id, nil, &v); code != http.StatusOK {
		e.T.Fatalf("get push %s: got %d", id, code)
	}
	return v
}

// zoneDevice is a user whose one device reported zone ("" for none).
type zoneDevice struct{ user, zone string }

// zoneApp is an app in Seoul with one user per zoneDevice.
func zoneApp(t *testing.T, e *env, devices []zoneDevice) testenv.App {
	t.Helper()
	a := e.NewApp(map[string]any{"tier": "business", "appUserEnabled": true, "timeZone": "Asia/Seoul"})
	for _, d := range devices {
		if _, err := a.Client.RegisterPushToken(context.Background(), client.RegisterRequest{DeviceID: "dev-" + d.user,
			Token: zoneToken(a, d.user), Platform: "android", AppSourceVersion: "1.6.0", UserID: d.user, TimeZone: d.zone}); err != nil {
			t.Fatalf("register %s: %v", d.user, err)
		}
	}
	return a
}

func zoneToken(a testenv.App, user string) string { return "tok-" + a.ID + "-" + user }

// pushLocal sends a local-time push at wall (YYYY-MM-DDTHH:MM) to users.
func pushLocal(t *testing.T, a testenv.App, wall string, users ...any) string {
	t.Helper()
	res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: users, Title: "Good morning",
		Content: "Your daily digest", Options: &client.Options{ScheduleTime: wall, LocalTime: true}})
	if err != nil {
		t.Fatalf("push: %v", err)
	}
	return res.PushID
}

// TestLocalTimeDayOfZones: devices in Pacific/Kiritimati (+14), Asia/Seoul,
// Europe/London, America/New_York, Pacific/Pago_Pago (-11) and one that
// reported no zone (the app's, Seoul) are each sent at 09:00 of their own
// zone, never before; the push is scheduled until the first zone's time,
// then sending with nextLocalAt moving zone by zone, then done; alike on
// /users, /all and /segments.
func TestLocalTimeDayOfZones(t *testing.T) {
	t.Parallel()
	zone := func(name string) *time.Location {
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Fatal(err)
		}
		return loc
	}
	devices := []zoneDevice{{"kiri", "Pacific/Kiritimati"}, {"seoul", "Asia/Seoul"}, {"nozone", ""}, {"london", "Europe/London"},
		{"newyork", "America/New_York"}, {"pago", "Pacific/Pago_Pago"}}
	// When each zone reads 2026-12-06 09:00, in order; "nozone" is Seoul's.
	at := func(loc string) time.Time { return time.Date(2026, 12, 6, 9, 0, 0, 0, zone(loc)) }
	steps := []struct {
		at    time.Time
		users []string
	}{
		{at("Pacific/Kiritimati"), []string{"kiri"}},
		{at("Asia/Seoul"), []string{"seoul", "nozone"}},
		{at("Europe/London"), []string{"london"}},
		{at("America/New_York"), []string{"newyork"}},
		{at("Pacific/Pago_Pago"), []string{"pago"}},
	}
	clk := &testenv.Clock{}
	clk.Run(time.Date(2026, 12, 5, 12, 0, 0, 0, testenv.Seoul))
	e := start(t, testenv.Clocked(clk))
	a := zoneApp(t, e, devices)
	var users []any
	for _, d := range devices {
		users = append(users, d.user)
	}
	// The same on /users, /all and /segments.
	ids := []string{pushLocal(t, a, "2026-12-06T09:00", users...)}
	opts := &client.Options{ScheduleTime: "2026-12-06T09:00", LocalTime: true}
	all, err := a.Client.PushAll(context.Background(), client.PushAllRequest{Title: "Good morning", Content: "c", Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	segment := e.ServerDo(http.MethodPost, "/api/push/v2/segments", a.Keys(), map[string]any{"filter": map[string]any{"field": "platform", "eq": "android"},
		"title": "Good morning", "content": "c", "options": opts})
	if segment.Status != http.StatusOK {
		t.Fatalf("segment push: got %d %s", segment.Status, segment.Body)
	}
	ids = append(ids, all.PushID, segment.Header.Get("X-Push-Id"))
	for _, id := range ids {
		v := e.localPush(id)
		if v.Status != "scheduled" || !v.LocalTime || v.LocalWallTime == nil || *v.LocalWallTime != "2026-12-06T09:00" ||
			v.ScheduledAt == nil || !v.ScheduledAt.Equal(steps[0].at) || v.NextLocalAt != nil {
			t.Fatalf("%s at accept: got %+v, want scheduled, localTime, wall 2026-12-06T09:00, scheduledAt %v (Kiritimati's 09:00)", id, v, steps[0].at)
		}
	}
	sent := map[string]bool{}
	for i, st := range steps {
		clk.Run(st.at.Add(-2 * time.Second))
		if i == 0 {
			for _, id := range ids {
				if v := e.localPush(id); v.Status != "scheduled" {
					t.Fatalf("%s before the first zone: got %s, want scheduled", id, v.Status)
				}
			}
		}
		for _, u := range st.users {
			testenv.WaitFor(t, u+"'s device at its 09:00", 30*time.Second, func() bool { return len(e.Received(zoneToken(a, u))) == len(ids) })
			sent[u] = true
		}
		for _, d := range devices {
			msgs := e.Received(zoneToken(a, d.user))
			switch {
			case !sent[d.user] && len(msgs) > 0:
				t.Errorf("at %v: %s (%s) was sent before its zone's 09:00", st.at, d.user, d.zone)
			case sent[d.user] && len(msgs) != len(ids):
				t.Errorf("at %v: %s got %d messages, want %d", st.at, d.user, len(msgs), len(ids))
			}
		}
		for _, u := range st.users {
			for _, m := range e.Received(zoneToken(a, u)) {
				if got := clk.Fake(m.ReceivedAt); got.Before(st.at) {
					t.Errorf("%s: sent at %v, before its zone's 09:00 (%v)", u, got, st.at)
				}
			}
		}
		if i+1 < len(steps) {
			next := steps[i+1].at
			for _, id := range ids {
				testenv.WaitFor(t, "nextLocalAt to move on", 10*time.Second, func() bool {
					v := e.localPush(id)
					return v.NextLocalAt != nil && v.NextLocalAt.Equal(next)
				})
				if v := e.localPush(id); v.Status != "sending" {
					t.Errorf("%s after the zone of %v: got %s, want sending", id, st.at, v.Status)
				}
			}
		}
	}
	for _, id := range ids {
		e.WaitFinal(id, 30*time.Second)
		if v := e.localPush(id); v.Status != "done" || v.NextLocalAt != nil || v.Counts.Tokens != 6 || v.Counts.Sent != 6 || v.Counts.LateLocal != 0 ||
			v.ServerActions != 3 {
			t.Errorf("%s at the end: got %+v, want done, 6 tokens sent, none late, 3 Server Actions", id, v)
		}
	}
}

// TestLocalTimeLate: accepted at 08:00 in Seoul for 09:00, a device whose
// zone's 09:00 has passed (Kiritimati's came five hours before) is sent at
// once and counted lateLocal; the others wait for their own 09:00. The
// push began at once (its first zone's time had passed), so it can no
// longer be cancelled.
func TestLocalTimeLate(t *testing.T) {
	t.Parallel()
	clk := &testenv.Clock{}
	accept := time.Date(2026, 12, 6, 8, 0, 0, 0, testenv.Seoul)
	clk.Run(accept)
	e := start(t, testenv.Clocked(clk))
	a := zoneApp(t, e, []zoneDevice{{"kiri", "Pacific/Kiritimati"}, {"seoul", "Asia/Seoul"}, {"london", "Europe/London"}})
	id := pushLocal(t, a, "2026-12-06T09:00", "kiri", "seoul", "london")
	testenv.WaitFor(t, "the late device", 20*time.Second, func() bool { return len(e.Received(zoneToken(a, "kiri"))) == 1 })
	seoul := time.Date(2026, 12, 6, 9, 0, 0, 0, testenv.Seoul)
	testenv.WaitFor(t, "the push to start", 10*time.Second, func() bool { return e.localPush(id).NextLocalAt != nil })
	v := e.localPush(id)
	if v.Status != "sending" || v.Counts.LateLocal != 1 || !v.NextLocalAt.Equal(seoul) {
		t.Fatalf("after accept: got %+v (next %v), want sending, 1 late, next %v", v, v.NextLocalAt, seoul)
	}
	if got := len(e.Received(zoneToken(a, "seoul"))) + len(e.Received(zoneToken(a, "london"))); got != 0 {
		t.Errorf("the zones still ahead got %d messages before their time, want 0", got)
	}
	var refused struct{ Code string }
	if code := e.AdminJSON("POST", "/admin/v1/pushes/"+id+"/cancel", nil, &refused); code != http.StatusConflict || refused.Code != "ERR-AB-SCH-01" {
		t.Errorf("cancel after the first zone's time: got %d %s, want 409 ERR-AB-SCH-01", code, refused.Code)
	}
	clk.Run(time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC).Add(-2 * time.Second)) // London's 09:00
	e.WaitFinal(id, 30*time.Second)
	if v := e.localPush(id); v.Status != "done" || v.Counts.Sent != 3 || v.Counts.LateLocal != 1 {
		t.Errorf("at the end: got %+v, want done, 3 sent, 1 late", v)
	}
	if at := clk.Fake(e.Received(zoneToken(a, "seoul"))[0].ReceivedAt); at.Before(seoul) {
		t.Errorf("seoul: sent at %v, before %v", at, seoul)
	}
}

// TestLocalTimeDST: on New York's DST days a wall time that does not exist
// (02:30 on 2026-03-08) is sent at 03:30 EDT, the reading shifted by the
// gap; one that happens twice (01:30 on 2026-11-01) at the first, EDT.
func TestLocalTimeDST(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, wall string
		want       time.Time
	}{
		{"SpringForward", "2026-03-08T02:30", time.Date(2026, 3, 8, 7, 30, 0, 0, time.UTC)},
		{"FallBack", "2026-11-01T01:30", time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clk := &testenv.Clock{}
			clk.Run(tc.want.Add(-20 * time.Hour))
			e := start(t, testenv.Clocked(clk))
			a := zoneApp(t, e, []zoneDevice{{"newyork", "America/New_York"}})
			id := pushLocal(t, a, tc.wall, "newyork")
			clk.Run(tc.want.Add(-3 * time.Second))
			testenv.WaitFor(t, "the New York device", 30*time.Second, func() bool { return len(e.Received(zoneToken(a, "newyork"))) == 1 })
			if at := clk.Fake(e.Received(zoneToken(a, "newyork"))[0].ReceivedAt); at.Before(tc.want) || !at.Before(tc.want.Add(time.Hour)) {
				t.Errorf("sent at %v, want from %v, within the hour", at.UTC(), tc.want)
			}
			if v := e.WaitFinal(id, 20*time.Second); v.Status != "done" {
				t.Errorf("got %s, want done", v.Status)
			}
		})
	}
}

// TestLocalTimeCancel: a local-time push can be cancelled until 5 minutes
// before its first zone's time (UTC+14's): 6 minutes before it is
// cancelled and refunded; 4 minutes before it is refused 409 and goes on.
func TestLocalTimeCancel(t *testing.T) {
	t.Parallel()
	clk := &testenv.Clock{}
	first := time.Date(2026, 12, 6, 9, 0, 0, 0, time.FixedZone("UTC+14", 14*3600))
	clk.Run(first.Add(-time.Hour))
	e := start(t, testenv.Clocked(clk))
	a := zoneApp(t, e, []zoneDevice{{"kiri", "Pacific/Kiritimati"}, {"seoul", "Asia/Seoul"}})
	early := pushLocal(t, a, "2026-12-06T09:00", "kiri", "seoul")
	late := pushLocal(t, a, "2026-12-06T09:00", "kiri", "seoul")
	if got := e.Usage(a); got != 2 {
		t.Fatalf("usage after two accepts: got %v, want 2", got)
	}
	// An edit's scheduleTime is a wall-clock time too.
	var edited localView
	if code := e.AdminJSON("PATCH", "/admin/v1/pushes/"+early, map[string]any{"scheduleTime": "2026-12-06T10:00"}, &edited); code != http.StatusOK ||
		edited.LocalWallTime == nil || *edited.LocalWallTime != "2026-12-06T10:00" || !edited.ScheduledAt.Equal(first.Add(time.Hour)) {
		t.Fatalf("edit to 10:00: got %d %+v, want wall 10:00, scheduledAt %v", code, edited, first.Add(time.Hour))
	}
	if code := e.AdminJSON("PATCH", "/admin/v1/pushes/"+early, map[string]any{"scheduleTime": "2026-12-06T09:00"}, &edited); code != http.StatusOK ||
		!edited.ScheduledAt.Equal(first) {
		t.Fatalf("edit back to 09:00: got %d %+v", code, edited)
	}
	clk.Run(first.Add(-6 * time.Minute))
	var v localView
	if code := e.AdminJSON("POST", "/admin/v1/pushes/"+early+"/cancel", nil, &v); code != http.StatusOK || v.Status != "cancelled" {
		t.Errorf("cancel 6 minutes before the first zone: got %d %s, want 200 cancelled", code, v.Status)
	}
	clk.Run(first.Add(-4 * time.Minute))
	var refused struct{ Code string }
	if code := e.AdminJSON("POST", "/admin/v1/pushes/"+late+"/cancel", nil, &refused); code != http.StatusConflict || refused.Code != "ERR-AB-SCH-01" {
		t.Errorf("cancel 4 minutes before the first zone: got %d %s, want 409 ERR-AB-SCH-01", code, refused.Code)
	}
	if got := e.Usage(a); got != 1 {
		t.Errorf("usage: got %v, want 1 (the cancelled push refunded)", got)
	}
	clk.Run(first.Add(-2 * time.Second))
	testenv.WaitFor(t, "the refused cancel's push at Kiritimati's 09:00", 30*time.Second, func() bool {
		return len(e.Received(zoneToken(a, "kiri"))) == 1
	})
	if v := e.localPush(late); v.Status != "sending" || v.NextLocalAt == nil {
		t.Errorf("after the first zone: got %+v, want sending with its next zone", v)
	}
}

// TestLocalTimeRefused: options.localTime that is not a boolean, true
// without scheduleTime, or on /messages is 400 naming options.localTime
// (with a scheduleTime too soon, options.scheduleTime), on the real
// stack: nothing is stored or charged.
func TestLocalTimeRefused(t *testing.T) {
	t.Parallel()
	clk := &testenv.Clock{}
	clk.Run(time.Date(2026, 12, 5, 12, 0, 0, 0, testenv.Seoul))
	e := start(t, testenv.Clocked(clk))
	a := zoneApp(t, e, []zoneDevice{{"u1", "Europe/London"}})
	later, soon := "2026-12-06T09:00", "2026-12-05T12:00"
	for _, tc := range []struct {
		name, path, body, field string
	}{
		{"String", "/api/push/v2/users", `{"userIds":["u1"],"title":"t","content":"c","options":{"scheduleTime":"` + later + `","localTime":"true"}}`, "options.localTime"},
		{"Number", "/api/push/v2/all", `{"title":"t","content":"c","options":{"scheduleTime":"` + later + `","localTime":1}}`, "options.localTime"},
		{"NoScheduleTime", "/api/push/v2/topics", `{"topic":"news","title":"t","content":"c","options":{"localTime":true}}`, "options.localTime"},
		{"NoScheduleTimeSegment", "/api/push/v2/segments", `{"filter":{"field":"platform","eq":"android"},"title":"t","content":"c","options":{"localTime":true}}`, "options.localTime"},
		{"Messages", "/api/push/v2/messages", `{"messages":[{"userId":"u1","title":"t","content":"c"}],"options":{"localTime":true}}`, "options.localTime"},
		{"TooSoonInAppZone", "/api/push/v2/users", `{"userIds":["u1"],"title":"t","content":"c","options":{"scheduleTime":"` + soon + `","localTime":true}}`, "options.scheduleTime"},
	} {
		res := e.ServerDo(http.MethodPost, tc.path, a.Keys(), tc.body)
		var got struct {
			Code    string
			Details []struct{ Field string }
		}
		res.Decode(t, &got)
		if res.Status != http.StatusBadRequest || got.Code != "ERR-AB-VAL-00" || len(got.Details) != 1 || got.Details[0].Field != tc.field {
			t.Errorf("%s: got %d %s, want 400 naming %s", tc.name, res.Status, res.Body, tc.field)
		}
	}
	if ps := e.PushList(a); len(ps) != 0 {
		t.Errorf("pushes stored: %+v, want none", ps)
	}
	if got := e.Usage(a); got != 0 {
		t.Errorf("usage: got %v, want nothing charged", got)
	}
	// localTime false is an ordinary scheduled push, and so is null.
	for _, v := range []string{"false", "null"} {
		res := e.ServerDo(http.MethodPost, "/api/push/v2/users", a.Keys(), `{"userIds":["u1"],"title":"t","content":"c","options":{"scheduleTime":"`+later+`","localTime":`+v+`}}`)
		if res.Status != http.StatusOK {
			t.Fatalf("localTime %s: got %d %s, want 200", v, res.Status, res.Body)
		}
		if p := e.localPush(res.Header.Get("X-Push-Id")); p.LocalTime || p.LocalWallTime != nil ||
			!p.ScheduledAt.Equal(time.Date(2026, 12, 6, 9, 0, 0, 0, testenv.Seoul)) {
			t.Errorf("localTime %s: got %+v, want an ordinary push scheduled at 09:00 in Seoul", v, p)
		}
	}
}

// TestLocalTimeNight: an ad at 22:00 local time with nightPolicy defer is
// judged in each device's zone at its own 22:00: a London device with
// night consent gets it at London's 22:00; one without, and one in Seoul
// without, wait for their own zone's 08:00.
func TestLocalTimeNight(t *testing.T) {
	t.Parallel()
	london, _ := time.LoadLocation("Europe/London")
	clk := &testenv.Clock{}
	clk.Run(time.Date(2026, 12, 6, 12, 0, 0, 0, testenv.Seoul))
	e := start(t, testenv.Clocked(clk))
	a := e.NewApp(map[string]any{"tier": "business", "appUserEnabled": true, "timeZone": "Asia/Seoul", "adPrefixCheck": false})
	ctx := context.Background()
	on := true
	for _, d := range []struct {
		user, zone string
		night      bool
	}{{"seoul-day", "Asia/Seoul", false}, {"lon-day", "Europe/London", false}, {"lon-all", "Europe/London", true}} {
		if _, err := a.Client.RegisterPushToken(ctx, client.RegisterRequest{DeviceID: "dev-" + d.user, Token: zoneToken(a, d.user),
			Platform: "android", AppSourceVersion: "1.6.0", UserID: d.user, TimeZone: d.zone}); err != nil {
			t.Fatal(err)
		}
		c := client.MarketingState{Marketing: &on}
		if d.night {
			c.MarketingNight = &on
		}
		if _, err := a.Client.SetMarketing(ctx, d.user, c); err != nil {
			t.Fatal(err)
		}
	}
	yes := true
	res, err := a.Client.PushUsers(ctx, client.PushUsersRequest{UserIDs: []any{"seoul-day", "lon-day", "lon-all"}, Title: "Night sale",
		Content: "c", Options: &client.Options{IsMarketing: &yes, NightPolicy: "defer", ScheduleTime: "2026-12-06T22:00", LocalTime: true}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.PushID
	steps := []struct {
		at   time.Time
		user string
	}{
		{time.Date(2026, 12, 6, 22, 0, 0, 0, london), "lon-all"},
		{time.Date(2026, 12, 7, 8, 0, 0, 0, testenv.Seoul), "seoul-day"},
		{time.Date(2026, 12, 7, 8, 0, 0, 0, london), "lon-day"},
	}
	clk.Run(time.Date(2026, 12, 6, 22, 0, 0, 0, herald14()).Add(-2 * time.Second)) // the first zone's 22:00
	testenv.WaitFor(t, "the fan-out", 20*time.Second, func() bool { return e.NightPush(id).Counts.DeferredNight == 2 })
	if v := e.NightPush(id); v.DeferredUntil == nil || !v.DeferredUntil.Equal(steps[1].at) {
		t.Errorf("after the fan-out: got %+v, want 2 deferred, the first to %v (Seoul's 08:00)", v, steps[1].at)
	}
	for i, st := range steps {
		clk.Run(st.at.Add(-2 * time.Second))
		testenv.WaitFor(t, st.user+" at "+st.at.String(), 30*time.Second, func() bool { return len(e.Received(zoneToken(a, st.user))) == 1 })
		if at := clk.Fake(e.Received(zoneToken(a, st.user))[0].ReceivedAt); at.Before(st.at) {
			t.Errorf("%s: sent at %v, before %v", st.user, at, st.at)
		}
		for _, later := range steps[i+1:] {
			if n := len(e.Received(zoneToken(a, later.user))); n != 0 {
				t.Errorf("%s got %d messages before %v", later.user, n, later.at)
			}
		}
	}
	if v := e.WaitFinal(id, 30*time.Second); v.Status != "done" || v.Counts.Sent != 3 || v.Counts.SuppressedNight != 0 {
		t.Errorf("at the end: got %s %+v, want done, 3 sent, none suppressed", v.Status, v.Counts)
	}
}

// herald14 is UTC+14, the first zone to reach a wall-clock time.
func herald14() *time.Location { return time.FixedZone("UTC+14", 14*3600) }

// TestLocalTimeRestart: a local-time push whose first zone was sent goes
// on after its node stops: a new node on the same store (and emulator)
// sends each remaining zone at its time, each device once.
func TestLocalTimeRestart(t *testing.T) {
	t.Parallel()
	clk := &testenv.Clock{}
	clk.Run(time.Date(2026, 12, 5, 12, 0, 0, 0, testenv.Seoul))
	e := start(t, testenv.Clocked(clk))
	a := zoneApp(t, e, []zoneDevice{{"kiri", "Pacific/Kiritimati"}, {"seoul", "Asia/Seoul"}, {"london", "Europe/London"}})
	id := pushLocal(t, a, "2026-12-06T09:00", "kiri", "seoul", "london")
	clk.Run(time.Date(2026, 12, 6, 9, 0, 0, 0, herald14()).Add(-2 * time.Second))
	testenv.WaitFor(t, "the first zone", 30*time.Second, func() bool { return len(e.Received(zoneToken(a, "kiri"))) == 1 })
	if err := e.Node.Stop(nil); err != nil {
		t.Fatalf("stop the first node: %v", err)
	}
	o := testenv.Clocked(clk)
	o.MasterKey, o.EmulatorOf, o.DatabaseURL = e.MasterKey, e.Env, e.DatabaseURL
	if e.DatabaseURL == "" {
		o.SQLiteDir = filepath.Dir(e.DBPath)
	}
	next := start(t, o)
	for _, st := range []struct {
		at   time.Time
		user string
	}{{time.Date(2026, 12, 6, 9, 0, 0, 0, testenv.Seoul), "seoul"}, {time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC), "london"}} {
		clk.Run(st.at.Add(-2 * time.Second))
		testenv.WaitFor(t, st.user+" after the restart", 30*time.Second, func() bool { return len(e.Received(zoneToken(a, st.user))) == 1 })
		if at := clk.Fake(e.Received(zoneToken(a, st.user))[0].ReceivedAt); at.Before(st.at) {
			t.Errorf("%s: sent at %v, before %v", st.user, at, st.at)
		}
	}
	if v := next.WaitFinal(id, 30*time.Second); v.Status != "done" || v.Counts.Sent != 3 {
		t.Errorf("after the restart: got %s %+v, want done, 3 sent", v.Status, v.Counts)
	}
	for _, u := range []string{"kiri", "seoul", "london"} {
		if n := len(e.Received(zoneToken(a, u))); n != 1 {
			t.Errorf("%s: got %d messages, want 1", u, n)
		}
	}
}
