package admin_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/heraldpush/herald"
)

// TestDashboardConsentNotices: the app page shows both notice settings
// with their defaults; each form replaces its setting; a template with an
// unknown placeholder is refused naming the field, changing nothing.
func TestDashboardConsentNotices(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	appPath := b.submit("/", "/apps", url.Values{"name": {"Shop"}, "tier": {"free"}, "timeZone": {"Asia/Seoul"}})
	appID := strings.TrimPrefix(appPath, "/apps/")
	_, body := b.get(appPath)
	for _, want := range []string{`id="consent-notice"`, `id="reconfirmation"`, `value="30"`, "{date} 광고성 정보 수신 {marketing}"} {
		if !strings.Contains(body, want) {
			t.Errorf("app page: want %q", want)
		}
	}
	b.submit(appPath, appPath+"/settings", url.Values{"reconfirmation.enabled": {"false", "true"},
		"reconfirmation.title": {"[{app}] 확인"}, "reconfirmation.content": {"{consentDate} {optOut}"}, "reconfirmation.leadDays": {"14"}})
	b.submit(appPath, appPath+"/settings", url.Values{"consentNotice.enabled": {"false", "true"},
		"consentNotice.title": {"{app}"}, "consentNotice.content": {"{date}"}})
	a, err := e.db.App(context.Background(), appID)
	if err != nil {
		t.Fatal(err)
	}
	wantR := herald.Reconfirmation{Enabled: true, Title: "[{app}] 확인", Content: "{consentDate} {optOut}", LeadDays: 14}
	wantN := herald.ConsentNotice{Enabled: true, Title: "{app}", Content: "{date}"}
	if a.Reconfirmation != wantR || a.ConsentNotice != wantN || a.Name != "Shop" {
		t.Errorf("stored: got %+v %+v, want %+v %+v and the rest kept", a.Reconfirmation, a.ConsentNotice, wantR, wantN)
	}
	form := url.Values{"consentNotice.enabled": {"false"}, "consentNotice.title": {"{app}"}, "consentNotice.content": {"{consentDate}"},
		"csrf": {b.csrf(appPath)}}
	resp, body := b.post(appPath+"/settings", form)
	wantStatus(t, resp, body, http.StatusBadRequest)
	if !strings.Contains(body, "<code>consentNotice.content</code> has the unknown placeholder {consentDate}") {
		t.Errorf("refused form: got %s, want the problem named", body)
	}
	if a, _ := e.db.App(context.Background(), appID); a.ConsentNotice != wantN {
		t.Errorf("after the refused form: got %+v, want %+v", a.ConsentNotice, wantN)
	}
}

// TestDashboardReconfirmationRun: the consent page says when the notices
// are off (and a run is refused 409); when on, its button sends them at
// once to the users due with a device and says how many.
func TestDashboardReconfirmationRun(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	appPath := b.submit("/", "/apps", url.Values{"name": {"Shop"}, "tier": {"business"}, "timeZone": {"Asia/Seoul"}})
	appID := strings.TrimPrefix(appPath, "/apps/")
	_, body := b.get(appPath + "/consent")
	if !strings.Contains(body, `id="reconfirm-off"`) || strings.Contains(body, `id="reconfirm-now"`) {
		t.Errorf("consent page with the notices off: got %s, want it said and no button", body)
	}
	resp, body := b.post(appPath+"/reconfirmation/run", url.Values{"csrf": {b.csrf(appPath + "/consent")}})
	wantStatus(t, resp, body, http.StatusConflict)

	ctx := context.Background()
	u := "u1"
	if _, err := e.db.RegisterDevice(ctx, appID, herald.DeviceRegistration{DeviceID: "d1", Token: "t1", Platform: herald.PlatformAndroid,
		AppSourceVersion: "1.6.0", UserID: &u}); err != nil {
		t.Fatal(err)
	}
	if n, _, err := e.db.ImportConsent(ctx, appID, []herald.ConsentImport{{UserID: u, Consent: herald.Consent{Marketing: true},
		At: e.clock.Now().AddDate(-2, 0, 5)}}, e.clock.Now()); err != nil || n != 1 {
		t.Fatalf("import: %d, %v", n, err)
	}
	b.submit(appPath, appPath+"/settings", url.Values{"reconfirmation.enabled": {"false", "true"},
		"reconfirmation.title": {herald.DefaultReconfirmationTitle}, "reconfirmation.content": {herald.DefaultReconfirmationContent},
		"reconfirmation.leadDays": {"30"}})
	to := b.submit(appPath+"/consent", appPath+"/reconfirmation/run", url.Values{})
	_, body = b.get(to)
	if !strings.Contains(body, "Re-confirmation notice sent to 1 users") {
		t.Errorf("after the run: got %s, want it to say one user", body)
	}
	ps, _, err := e.db.Pushes(ctx, appID, herald.PushFilter{Limit: 5})
	if err != nil || len(ps) != 1 || ps[0].Kind != herald.KindReconfirmation {
		t.Errorf("pushes: got %+v, %v, want one consent-reconfirmation push", ps, err)
	}
}
