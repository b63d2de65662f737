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
