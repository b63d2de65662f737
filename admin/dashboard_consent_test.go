package admin_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/client"
)

// TestDashboardConsent: the consent page counts the users due for
// re-confirmation and lists them, the CSV holds every one of them, the
// user page shows the consent trail, and its form re-confirms as the
// operator, which takes the user off the list.
func TestDashboardConsent(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	appPath := b.submit("/", "/apps", url.Values{"name": {"Consent"}, "tier": {"business"}, "timeZone": {"Asia/Seoul"}})
	appID := strings.TrimPrefix(appPath, "/apps/")
	ctx := context.Background()
	given := e.clock.Now()
	for _, u := range []string{"u1", "u2", "=HYPERLINK(1)", "-42"} {
		if _, err := e.db.RegisterDevice(ctx, appID, herald.DeviceRegistration{DeviceID: "d-" + u, Token: "t-" + u,
			Platform: herald.PlatformAndroid, AppSourceVersion: "1.6.0", UserID: &u}); err != nil {
			t.Fatal(err)
		}
	}
	yes := true
	for _, u := range []string{"u1", "=HYPERLINK(1)", "-42"} {
		if _, err := e.db.SetUserConsent(ctx, appID, u, herald.ConsentChange{Marketing: &yes, MarketingNight: &yes}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.db.SetDeviceConsent(ctx, appID, "d-u2", herald.ConsentChange{Marketing: &yes}); err != nil {
		t.Fatal(err)
	}

	_, body := b.get(appPath + "/consent")
	wantIn(t, "consent page, nobody due yet", body, `id="due-now">0<`, `id="due-soon">0<`, `id="nobody-due"`, `href="/apps/`+appID+`/consent"`)

	due := given.AddDate(2, 0, 0)
	e.clock.Set(due.Add(-24 * time.Hour))
	b.login() // the session of two years ago has expired
	_, body = b.get(appPath + "/consent")
	wantIn(t, "consent page, a day before", body, `id="due-now">0<`, `id="due-soon">4<`, "<code>u1</code>", "<code>u2</code>")
	e.clock.Set(due)
	b.login()
	_, body = b.get(appPath + "/consent?within=0d")
	wantIn(t, "consent page, at two years", body, `id="due-now">4<`, `id="due-soon">4<`, "Due within 0d")

	resp, csv := b.get(appPath + "/consent-due.csv?within=0d")
	wantStatus(t, resp, csv, http.StatusOK)
	if ct, cd := resp.Header.Get("Content-Type"), resp.Header.Get("Content-Disposition"); ct != "text/csv; charset=utf-8" || !strings.HasPrefix(cd, "attachment;") {
		t.Errorf("CSV headers: got %q and %q, want text/csv as an attachment", ct, cd)
	}
	stamp := given.UTC().Format(time.RFC3339Nano) + "," + due.UTC().Format(time.RFC3339Nano)
	want := "userId,marketing,marketingNight,confirmedAt,dueAt\n" +
		"-42,true,true," + stamp + "\n" +
		"'=HYPERLINK(1),true,true," + stamp + "\n" +
		"u1,true,true," + stamp + "\n" +
		"u2,true,false," + stamp + "\n"
	if csv != want {
		t.Errorf("CSV:\n got %q\nwant %q", csv, want)
	}

	userPage := appPath + "/users?userId=u1"
	_, body = b.get(userPage)
	wantIn(t, "user page", body, `id="consent-history"`, `data-source="server-api"`, "the app&#39;s server (Server API)", `id="user-due"`, `id="user-consent"`)
	e.clock.Set(due.Add(time.Minute))
	to := b.submit(userPage, appPath+"/users/consent", url.Values{"userId": {"u1"}, "marketing": {"true"}, "marketingNight": {"true"}})
	_, body = b.get(to)
	wantIn(t, "user page after the form", body, "Consent of user u1 set: marketing yes, night yes", `data-source="admin"`, "an operator (admin)")
	_, body = b.get(appPath + "/consent?within=0d")
	wantIn(t, "consent page after re-confirming u1", body, `id="due-now">3<`)
	if strings.Contains(body, "<code>u1</code>") {
		t.Errorf("consent page: u1 still listed after it was re-confirmed")
	}

	t.Run("ErrForm", func(t *testing.T) {
		b := b.with(t)
		resp, body := b.post(appPath+"/users/consent", url.Values{"csrf": {b.csrf(userPage)}, "userId": {"u1"}, "marketing": {"false"}, "marketingNight": {"true"}})
		wantStatus(t, resp, body, http.StatusBadRequest)
		wantIn(t, "refused form", body, "<code>marketingNight</code>")
		resp, body = b.get(appPath + "/consent?within=tomorrow")
		wantStatus(t, resp, body, http.StatusBadRequest)
		wantIn(t, "bad window", body, "<code>within</code>")
	})
}

// TestDashboardAdPrefixAndSandbox: the settings form turns the (광고)
// check and sandbox on and off, and a push's page says which rule made it
// marketing.
func TestDashboardAdPrefixAndSandbox(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	a := newDashApp(t, e, b)
	ctx := context.Background()
	settings := url.Values{"name": {"Scheduler"}, "tier": {"free"}, "timeZone": {"Asia/Seoul"}, "registered": {"false", "true"},
		"appUserEnabled": {"false"}, "adPrefixCheck": {"false"}, "sandbox": {"false", "true"}}
	b.submit(a.path, a.path+"/settings", settings)
	got, _ := e.db.App(ctx, a.app.ID)
	if !got.NoAdPrefixCheck || !got.Sandbox {
		t.Fatalf("after the form: got check off %v, sandbox %v; want both", got.NoAdPrefixCheck, got.Sandbox)
	}
	_, body := b.get(a.path)
	if strings.Contains(body, `name="adPrefixCheck" value="true" checked`) || !strings.Contains(body, `name="sandbox" value="true" checked`) ||
		!strings.Contains(body, `id="sandbox-tag"`) {
		t.Errorf("app page: want the (광고) box unchecked, the sandbox box checked and the app marked sandbox")
	}
	res, err := a.c.PushUsers(ctx, client.PushUsersRequest{UserIDs: []any{"u1"}, Title: "In the sandbox", Content: "c"})
	if err != nil {
		t.Fatal(err)
	}
	_, body = b.get(a.path + "/pushes/" + res.PushID)
	wantIn(t, "push page of a sandbox app", body, "0.5 (the app is a sandbox: not charged)")
	settings.Set("adPrefixCheck", "true")
	settings["sandbox"] = []string{"false"}
	b.submit(a.path, a.path+"/settings", settings)
	if got, _ := e.db.App(ctx, a.app.ID); got.NoAdPrefixCheck || got.Sandbox {
		t.Errorf("after the second form: got check off %v, sandbox %v; want neither", got.NoAdPrefixCheck, got.Sandbox)
	}

	yes := true
	ad := client.PushUsersRequest{UserIDs: []any{"u1"}, Title: "(광고) Sale", Content: "c", Options: &client.Options{IsMarketing: &yes}}
	if _, err = a.c.PushUsers(ctx, ad); err == nil || !strings.Contains(err.Error(), "app.adSender.name") {
		t.Fatalf("an ad without the footer's settings: got %v, want refused naming app.adSender.name", err)
	}
	settings.Set("adSenderName", "(주)헤럴드")
	settings.Set("adSenderContact", "080-123-4567")
	settings.Set("adOptOut", "수신거부: 마이 > 설정")
	b.submit(a.path, a.path+"/settings", settings)
	if got, _ := e.db.App(ctx, a.app.ID); got.AdSenderName != "(주)헤럴드" || got.AdSenderContact != "080-123-4567" || got.AdOptOut != "수신거부: 마이 > 설정" {
		t.Fatalf("after the footer form: got %q %q %q", got.AdSenderName, got.AdSenderContact, got.AdOptOut)
	}
	_, body = b.get(a.path)
	wantIn(t, "app page", body, `name="adSenderName" maxlength="100" value="(주)헤럴드"`, `value="수신거부: 마이 &gt; 설정"`)
	res, err = pushWhenSeen(ctx, a, ad)
	if err != nil {
		t.Fatal(err)
	}
	_, body = b.get(a.path + "/pushes/" + res.PushID)
	wantIn(t, "push page", body, `id="marketing-rule">the request marked it options.isMarketing`,
		`id="ad-footer">
(주)헤럴드 080-123-4567
수신거부: 마이 &gt; 설정</div>`)
	res, err = a.c.PushUsers(ctx, client.PushUsersRequest{UserIDs: []any{"u1"}, Title: "(광고) Sale", Content: "c"})
	if err != nil {
		t.Fatal(err)
	}
	_, body = b.get(a.path + "/pushes/" + res.PushID)
	wantIn(t, "push page", body, `id="marketing-rule">its title starts with (광고)`)

	// Empty fields clear the settings, and ads are refused again.
	settings.Set("adSenderName", "")
	settings.Set("adSenderContact", "")
	settings.Set("adOptOut", "")
	b.submit(a.path, a.path+"/settings", settings)
	if got, _ := e.db.App(ctx, a.app.ID); got.AdSenderName != "" || got.AdSenderContact != "" || got.AdOptOut != "" {
		t.Errorf("after clearing: got %q %q %q, want all cleared", got.AdSenderName, got.AdSenderContact, got.AdOptOut)
	}
	settings.Set("adSenderName", "Co")
	settings.Set("csrf", b.csrf(a.path))
	resp, body := b.post(a.path+"/settings", settings)
	wantStatus(t, resp, body, http.StatusBadRequest)
	wantIn(t, "a name without a contact", body, "adSender.contact")
}

// pushWhenSeen sends p until the public API's app cache (a second) has seen
// a settings change, at most a few seconds.
func pushWhenSeen(ctx context.Context, a dashApp, p client.PushUsersRequest) (client.PushResult, error) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		res, err := a.c.PushUsers(ctx, p)
		if err == nil || time.Now().After(deadline) {
			return res, err
		}
		time.Sleep(50 * time.Millisecond) // polling interval, not a wait for work
	}
}
