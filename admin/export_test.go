package admin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/internal/testenv"
)

// exportView is a user's export as the admin API answers it.
type exportView struct {
	UserID, State             string
	Marketing, MarketingNight bool
	ExportedAt                time.Time
	ConsentHistory            []struct{ Source string }
	Devices                   []struct {
		DeviceID, Platform, AppSourceVersion, TokenSuffix string
		CreatedAt                                         time.Time
	}
	Pushes []struct {
		PushID               string
		At                   time.Time
		Title                *string
		Outcome              string
		ReceivedAt, OpenedAt *time.Time
	}
}

// export reads a user's export, failing unless it answers 200 as a
// download; it returns the body too.
func (e *env) export(a testenv.App, userID string) (exportView, string) {
	e.T.Helper()
	path := "/admin/v1/apps/" + a.ID + "/users/" + userID + "/export?reason=" + url.QueryEscape("PIPA art. 35 request #12")
	res := e.AdminDo(e.T, http.MethodGet, path, nil)
	if res.Status != http.StatusOK {
		e.T.Fatalf("export of %s: got %d (%s), want 200", userID, res.Status, res.Body)
	}
	if cd := res.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, "attachment;") {
		e.T.Errorf("Content-Disposition: got %q, want an attachment", cd)
	}
	var v exportView
	res.Decode(e.T, &v)
	return v, string(res.Body)
}

// TestUserExport: a user's export (DESIGN 12) holds its state, consent
// trail, devices by the token's last 8 characters only, and every push
// sent to it or that could not reach it, newest first, with the outcome
// and the events its devices reported; a withdrawn user keeps its trail
// and pushes and has no devices. It runs on the engine the tests run on.
func TestUserExport(t *testing.T) {
	t.Parallel()
	e := start(t)
	ctx := context.Background()
	a := e.NewApp(map[string]any{"tier": "business", "appUserEnabled": true})
	tokA, tokB := "export-token-aaaaaaaa-0001", "export-token-bbbbbbbb-0002"
	e.Device(a, "dev-a", tokA, "android", "1.6.0", "u1")
	e.Device(a, "dev-b", tokB, "ios", "1.6.0", "u1")
	e.Register(a, "export-tok-", "u2", "gone")

	first, err := a.Client.PushUsers(ctx, client.PushUsersRequest{UserIDs: []any{"u1", "u2", "gone"}, Title: "First", Content: "c"})
	if err != nil {
		t.Fatal(err)
	}
	e.WaitFinal(first.PushID, 20*time.Second)
	if _, err := a.Client.ReportEvents(ctx, "dev-b", []client.Event{{PushID: first.PushID, Type: "received"}, {PushID: first.PushID, Type: "opened"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Client.DeleteUser(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	yes := true
	ad, err := a.Client.PushUsers(ctx, client.PushUsersRequest{UserIDs: []any{"u1", "gone"}, Title: "(광고) Sale", Content: "c",
		Options: &client.Options{IsMarketing: &yes}})
	if err != nil {
		t.Fatal(err)
	}
	e.WaitFinal(ad.PushID, 20*time.Second)
	msgs, err := a.Client.PushMessages(ctx, client.PushMessagesRequest{Messages: []client.Message{
		{UserID: "u2", Title: "For u2", Content: "c"}, {UserID: "u1", Title: "For u1", Content: "c"}}})
	if err != nil {
		t.Fatal(err)
	}
	e.WaitFinal(msgs.PushID, 20*time.Second)

	t.Run("OK", func(t *testing.T) {
		got, body := e.export(a, "u1")
		if got.UserID != "u1" || got.State != "registered" || got.ExportedAt.IsZero() {
			t.Errorf("user: got %q %q at %v, want u1 registered with exportedAt", got.UserID, got.State, got.ExportedAt)
		}
		if len(got.Devices) != 2 {
			t.Fatalf("devices: got %+v, want dev-a and dev-b", got.Devices)
		}
		for _, d := range got.Devices {
			want := map[string]string{"dev-a": tokA[len(tokA)-8:], "dev-b": tokB[len(tokB)-8:]}[d.DeviceID]
			if d.TokenSuffix != want || d.CreatedAt.IsZero() || d.AppSourceVersion != "1.6.0" {
				t.Errorf("device %s: got suffix %q created %v version %q, want %q, a time, 1.6.0", d.DeviceID, d.TokenSuffix, d.CreatedAt, d.AppSourceVersion, want)
			}
		}
		for _, tok := range []string{tokA, tokB} {
			if strings.Contains(body, tok) {
				t.Errorf("the export holds the full token %s", tok)
			}
		}
		type row struct{ id, title, outcome string }
		want := []row{{msgs.PushID, "For u1", "sent"}, {ad.PushID, "(광고) Sale", "suppressed_consent"}, {first.PushID, "First", "sent"}}
		if len(got.Pushes) != len(want) {
			t.Fatalf("pushes: got %+v, want %v", got.Pushes, want)
		}
		for i, w := range want {
			p := got.Pushes[i]
			if p.PushID != w.id || p.Title == nil || *p.Title != w.title || p.Outcome != w.outcome || p.At.IsZero() {
				t.Errorf("push %d: got %s %v %q at %v, want %v", i, p.PushID, p.Title, p.Outcome, p.At, w)
			}
		}
		if p := got.Pushes[2]; p.ReceivedAt == nil || p.OpenedAt == nil {
			t.Errorf("first push: got received %v opened %v, want both (dev-b reported them)", p.ReceivedAt, p.OpenedAt)
		}
		if p := got.Pushes[0]; p.ReceivedAt != nil || p.OpenedAt != nil {
			t.Errorf("last push: got received %v opened %v, want neither", p.ReceivedAt, p.OpenedAt)
		}
		// The download is recorded with its reason and whose data it was.
		recs := e.records("userId=u1")
		last := recs[len(recs)-1]
		if last.Route != "GET /admin/v1/apps/{appId}/users/{userId}/export" || last.Reason != "PIPA art. 35 request #12" ||
			!slices.Equal(last.UserIDs, []string{"u1"}) || last.AppID != a.ID || last.Status != http.StatusOK {
			t.Errorf("the export's access record: %+v, want its route, reason, app and u1", last)
		}
	})

	t.Run("Withdrawn", func(t *testing.T) {
		got, _ := e.export(a, "gone")
		if got.State != "withdrawn" || len(got.Devices) != 0 {
			t.Errorf("got state %q devices %+v, want withdrawn and none", got.State, got.Devices)
		}
		if len(got.ConsentHistory) == 0 || got.ConsentHistory[len(got.ConsentHistory)-1].Source != "withdrawal" {
			t.Errorf("consent history: got %+v, want the trail ending with the withdrawal", got.ConsentHistory)
		}
		if len(got.Pushes) != 2 || got.Pushes[0].PushID != ad.PushID || got.Pushes[0].Outcome != "unreachable" ||
			got.Pushes[1].PushID != first.PushID || got.Pushes[1].Outcome != "sent" {
			t.Errorf("pushes: got %+v, want the ad unreachable, then the first push sent", got.Pushes)
		}
	})

	t.Run("ErrReason", func(t *testing.T) {
		for _, q := range []string{"", "?reason=", "?reason=%20%20", "?reason=" + strings.Repeat("x", herald.MaxDownloadReason+1)} {
			path := "/admin/v1/apps/" + a.ID + "/users/u1/export"
			res := e.AdminDo(t, http.MethodGet, path+q, nil)
			got := testenv.WantError(t, res, path, herald.ErrInvalidRequest)
			if len(got.Details) != 1 || got.Details[0].Field != "reason" {
				t.Errorf("%q: details %+v, want one naming reason", q, got.Details)
			}
		}
	})

	t.Run("ErrNotFound", func(t *testing.T) {
		for _, path := range []string{"/admin/v1/apps/" + a.ID + "/users/never/export", "/admin/v1/apps/app_unknown/users/u1/export"} {
			res := e.AdminDo(t, http.MethodGet, path+"?reason=asked", nil)
			testenv.WantError(t, res, path, herald.ErrNotFound)
		}
	})
}

// TestDashboardUserExport: the user page's form downloads the user's
// export, and a blank reason shows the page again naming it.
func TestDashboardUserExport(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	appPath := b.submit("/", "/apps", url.Values{"name": {"Export"}, "tier": {"business"}, "timeZone": {"Asia/Seoul"}})
	appID := strings.TrimPrefix(appPath, "/apps/")
	u := "kim/1"
	if _, err := e.db.RegisterDevice(context.Background(), appID, herald.DeviceRegistration{DeviceID: "d-1", Token: "token-of-kim-12345678",
		Platform: herald.PlatformAndroid, AppSourceVersion: "1.6.0", UserID: &u}); err != nil {
		t.Fatal(err)
	}
	_, body := b.get(appPath + "/users?userId=" + url.QueryEscape(u))
	wantIn(t, "user page", body, `id="user-export"`, `action="/apps/`+appID+`/users/export"`, `name="reason"`)

	resp, body := b.get(appPath + "/users/export?userId=" + url.QueryEscape(u) + "&reason=" + url.QueryEscape("access request"))
	wantStatus(t, resp, body, http.StatusOK)
	if cd := resp.Header.Get("Content-Disposition"); cd != `attachment; filename="herald-user-kim_1.json"` {
		t.Errorf("Content-Disposition: got %q", cd)
	}
	var got exportView
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("download: %v\n%s", err, body)
	}
	if got.UserID != u || len(got.Devices) != 1 || got.Devices[0].TokenSuffix != "12345678" || strings.Contains(body, "token-of-kim") {
		t.Errorf("download: got %+v, want kim/1 with its device by suffix only", got)
	}

	resp, body = b.get(appPath + "/users/export?userId=" + url.QueryEscape(u) + "&reason=+")
	wantStatus(t, resp, body, http.StatusBadRequest)
	wantIn(t, "refused reason", body, "<code>reason</code>", `id="user-export"`)
	resp, body = b.get(appPath + "/users/export?userId=nobody&reason=asked")
	wantStatus(t, resp, body, http.StatusNotFound)
}

// TestDashboardHeldPush: a push a restore held says so on its page and
// offers Release and Cancel, each confirmed first; released, it is back
// where it stood (scheduled, sent at once); cancelled, refunded as it had
// not begun. A push not held cannot be released: the page says why.
func TestDashboardHeldPush(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	appPath, first, second := withScheduledApp(t, e, b)
	ctx := context.Background()
	held, err := e.db.HoldPushes(ctx, time.Date(2026, 12, 1, 14, 0, 0, 0, seoul))
	if err != nil || len(held) != 2 {
		t.Fatalf("HoldPushes: got %d pushes, %v; want the two due", len(held), err)
	}
	_, body := b.get(appPath + "/pushes/" + first)
	wantIn(t, "held push page", body, `id="held"`, `href="`+appPath+`/pushes/`+first+`/release"`, `href="`+appPath+`/scheduled/`+first+`/cancel"`)

	release := appPath + "/pushes/" + first + "/release"
	resp, _ := b.post(release, url.Values{"csrf": {b.csrf(appPath)}})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != release {
		t.Fatalf("unconfirmed release: got %d to %q, want 303 to the confirmation page", resp.StatusCode, resp.Header.Get("Location"))
	}
	_, body = b.get(release)
	wantIn(t, "release page", body, `id="confirm-release"`, "in flight", "had not begun")
	if to := b.submit(release, release, url.Values{"confirmed": {"yes"}}); to != appPath+"/pushes/"+first {
		t.Errorf("release: got redirect to %q, want the push page", to)
	}
	if p, _ := e.db.Push(ctx, first); p.Status != herald.StatusScheduled {
		t.Errorf("released push: got %s, want scheduled (as it was held)", p.Status)
	}
	_, body = b.get(release)
	wantIn(t, "release page of a push no longer held", body, `id="blocked"`)

	cancel := appPath + "/scheduled/" + second + "/cancel"
	_, body = b.get(cancel)
	wantIn(t, "cancel page of a held push", body, "Cancel this held push?", "0.5 Server Actions are refunded")
	b.submit(cancel, cancel, url.Values{"confirmed": {"yes"}})
	if p, _ := e.db.Push(ctx, second); p.Status != herald.StatusCancelled {
		t.Errorf("cancelled held push: got %s, want cancelled", p.Status)
	}
	_, body = b.get(appPath + "/pushes/" + second)
	wantIn(t, "cancelled held push", body, "refunded when it was cancelled: net 0")
	_, body = b.get(appPath + "/pushes?status=held")
	wantIn(t, "history filter", body, `value="held"`)
}
