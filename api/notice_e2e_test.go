package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testenv"
)

// notification reads the title and body of an emulator message.
func notification(t *testing.T, m testenv.EmuMessage) (string, string) {
	t.Helper()
	var msg struct {
		Notification struct{ Title, Body string }
		Data         map[string]string
	}
	if err := json.Unmarshal(m.Message, &msg); err != nil {
		t.Fatalf("emulator message %s: %v", m.Message, err)
	}
	return msg.Notification.Title, msg.Notification.Body
}

// pushesOfKind returns the app's pushes of one kind, newest first.
func (e *env) pushesOfKind(a testenv.App, kind string) []testenv.PushView {
	var out []testenv.PushView
	for _, p := range e.PushList(a) {
		if p.Kind == kind {
			out = append(out, p)
		}
	}
	return out
}

// TestConsentResultNotices: with consentNotice on, each decision through
// its own interface (the SDK switch of an unmapped device and of a mapped
// one, the Server API setting the same value again, the admin API) sends
// one notice, not charged, listed in history: to the device itself, or to
// every device of the user, rendered with the app's name, today's date in
// its zone and 동의/거부; with it off, decisions send none.
func TestConsentResultNotices(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(map[string]any{"name": "마이샵", "tier": "business", "appUserEnabled": true,
		"consentNotice": map[string]any{"enabled": true}})
	e.Device(a, "dev-0", "tok-0", "android", "1.6.0", nil)
	e.Device(a, "dev-1", "tok-1", "android", "1.6.0", "u1")
	e.Device(a, "dev-2", "tok-2", "ios", "1.6.0", "u1")

	e.sdkConsent(a, map[string]any{"deviceId": "dev-0", "marketing": true})
	e.sdkConsent(a, map[string]any{"deviceId": "dev-1", "marketing": true, "marketingNight": true})
	e.serverConsent(a, "u1", map[string]bool{"marketing": true, "marketingNight": true})
	if code := e.AdminJSON("PATCH", "/admin/v1/apps/"+a.ID+"/users/u1/consent", map[string]bool{"marketing": false}, nil); code != http.StatusOK {
		t.Fatalf("admin consent: got %d, want 200", code)
	}
	testenv.WaitFor(t, "four notices done", 30*time.Second, func() bool {
		ps := e.pushesOfKind(a, "consent-notice")
		done := 0
		for _, p := range ps {
			if p.Status == "done" {
				done++
			}
		}
		return done == 4
	})
	for _, p := range e.pushesOfKind(a, "consent-notice") {
		if p.ServerActions != 0 || p.Marketing {
			t.Errorf("notice %s: got serverActions %v marketing %v, want an uncharged informational push", p.PushID, p.ServerActions, p.Marketing)
		}
	}
	if got := e.Usage(a); got != 0 {
		t.Errorf("usage: got %v, want 0 (notices are not charged)", got)
	}
	today := time.Now().In(testenv.Seoul).Format(time.DateOnly)
	want := map[string][]string{
		"tok-0": {today + " 광고성 정보 수신 동의, 야간(21시~08시) 수신 거부 처리되었습니다."},
		"tok-1": {
			today + " 광고성 정보 수신 동의, 야간(21시~08시) 수신 동의 처리되었습니다.",
			today + " 광고성 정보 수신 동의, 야간(21시~08시) 수신 동의 처리되었습니다.",
			today + " 광고성 정보 수신 거부, 야간(21시~08시) 수신 거부 처리되었습니다.",
		},
	}
	want["tok-2"] = want["tok-1"]
	for token, bodies := range want {
		ms := e.Received(token)
		var got []string
		for _, m := range ms {
			title, body := notification(t, m)
			if title != "[마이샵] 광고성 정보 수신 동의 결과 안내" {
				t.Errorf("%s: title %q, want the default with the app's name", token, title)
			}
			got = append(got, body)
		}
		if strings.Join(sortedCopy(got), "\n") != strings.Join(sortedCopy(bodies), "\n") {
			t.Errorf("%s received:\n got %q\nwant %q", token, got, bodies)
		}
	}

	e.PatchApp(a, map[string]any{"consentNotice": map[string]any{"enabled": false}})
	e.serverConsent(a, "u1", map[string]bool{"marketing": true})
	e.sdkConsent(a, map[string]any{"deviceId": "dev-0", "marketing": false})
	// The notice's job is recorded in the decision's transaction: none
	// now is none ever.
	var jobs int
	if err := e.QueryRow(`SELECT COUNT(*) FROM river_job WHERE kind = ?`, "herald.consent_notice").Scan(&jobs); err != nil || jobs != 4 {
		t.Errorf("notice jobs after decisions with the notice off: got %d, %v, want still 4", jobs, err)
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// importAnswer is the answer of POST …/consent-import.
type importAnswer struct {
	Imported int
	Skipped  []struct{ UserID, Reason string }
}

// TestReconfirmationRun: users imported with consent given 23 months ago
// are due within 30 days, one imported a year back is not; the run sends
// the notice to the due users with a device, in one uncharged push; the
// user it reached gets a reconfirmation record in the trail, sent as
// consent.changed, and its clock restarts; the user whose token is dead
// and the one with no device stay due; a run with nobody due answers a
// null pushId; with re-confirmation off the run is refused.
func TestReconfirmationRun(t *testing.T) {
	t.Parallel()
	e := start(t)
	zone := beforeTen(t)
	a := e.NewApp(map[string]any{"name": "Shop", "tier": "business", "appUserEnabled": true, "timeZone": zone.String(),
		"reconfirmation": map[string]any{"enabled": true, "content": "{consentDate} 동의 {marketing}/{marketingNight}"}})
	recv := testenv.NewReceiver(t, 0)
	secret := e.PutWebhook(a, recv.URL)
	e.Device(a, "dev-due", "tok-due", "android", "1.6.0", "due")
	e.Device(a, "dev-dead", "unregistered-dead", "android", "1.6.0", "dead")
	e.Device(a, "dev-nodev", "tok-nodev", "android", "1.6.0", "nodev")
	e.Device(a, "dev-recent", "tok-recent", "android", "1.6.0", "recent")
	if r := e.ServerDo("DELETE", "/api/sdk/v2/push-token", map[string]string{"x-api-key": a.APIKey}, map[string]string{"deviceId": "dev-nodev"}); r.Status != http.StatusOK {
		t.Fatalf("delete dev-nodev: got %d %s", r.Status, r.Body)
	}
	old := time.Now().AddDate(-2, 0, 10).UTC().Truncate(time.Second) // due in ten days
	yearAgo := time.Now().AddDate(-1, 0, 0).UTC().Truncate(time.Second)
	entry := func(user string, at time.Time) map[string]any {
		return map[string]any{"userId": user, "marketing": true, "marketingNight": true, "at": at.Format(time.RFC3339)}
	}
	var imp importAnswer
	if code := e.AdminJSON("POST", "/admin/v1/apps/"+a.ID+"/consent-import", map[string]any{"users": []any{
		entry("due", old), entry("dead", old), entry("nodev", old), entry("recent", yearAgo),
		entry("ghost", old), entry("due", time.Now().Add(time.Hour)),
	}}, &imp); code != http.StatusOK {
		t.Fatalf("import: got %d, want 200", code)
	}
	if fmt.Sprint(imp) != "{4 [{ghost unknown user} {due at is in the future}]}" {
		t.Errorf("import: got %v, want 4 imported, ghost unknown and the future date skipped", imp)
	}
	if h := e.consentHistory(a, "due"); len(h) != 2 || h[0].Source != "import" || !h[0].At.Equal(old) {
		t.Errorf("due's history: got %v, want the import (and its device's) at %v", h, old)
	}
	if due, _ := e.consentDue(a, "?within=30d"); fmt.Sprint(dueIDs(due)) != "[dead due nodev]" {
		t.Errorf("due within 30 days: got %v, want dead, due and nodev (not recent)", dueIDs(due))
	}

	var run struct {
		Notified int
		PushID   *string
	}
	if code := e.AdminJSON("POST", "/admin/v1/apps/"+a.ID+"/reconfirmation/run", nil, &run); code != http.StatusOK || run.PushID == nil {
		t.Fatalf("run: got %d %+v, want 200 with a push", code, run)
	}
	if run.Notified != 2 {
		t.Errorf("notified: got %d, want 2 (due and dead: nodev has no device)", run.Notified)
	}
	p := e.WaitFinal(*run.PushID, 30*time.Second)
	if p.Kind != "consent-reconfirmation" || p.Counts.Sent != 1 || p.Counts.Unreachable != 1 || p.ServerActions != 0 {
		t.Errorf("push: got %+v, want consent-reconfirmation, 1 sent, 1 unreachable, not charged", p)
	}
	ms := e.Received("tok-due")
	if len(ms) != 1 {
		t.Fatalf("tok-due: got %d messages, want 1", len(ms))
	}
	if title, body := notification(t, ms[0]); title != "[Shop] 광고성 정보 수신 동의 확인 안내" ||
		body != old.In(zone).Format(time.DateOnly)+" 동의 동의/동의" {
		t.Errorf("notice: got %q %q", title, body)
	}
	// The admin API shows the push as its devices got it: its title with
	// the app's name, not the template's {app}.
	var one struct{ Title string }
	var list struct {
		Pushes []struct{ PushID, Title string }
	}
	e.AdminJSON("GET", "/admin/v1/pushes/"+*run.PushID, nil, &one)
	e.AdminJSON("GET", "/admin/v1/apps/"+a.ID+"/pushes", nil, &list)
	for _, got := range append([]string{one.Title}, func() (ts []string) {
		for _, p := range list.Pushes {
			if p.PushID == *run.PushID {
				ts = append(ts, p.Title)
			}
		}
		return ts
	}()...) {
		if got != "[Shop] 광고성 정보 수신 동의 확인 안내" {
			t.Errorf("the push's title through the admin API: got %q, want it as sent", got)
		}
	}
	if len(list.Pushes) == 0 {
		t.Error("the app's pushes: got none, want the re-confirmation")
	}
	testenv.WaitFor(t, "due's reconfirmation in the trail", 30*time.Second, func() bool {
		h := e.consentHistory(a, "due")
		return len(h) > 0 && h[len(h)-1].Source == "reconfirmation"
	})
	last := e.consentHistory(a, "due")
	if r := last[len(last)-1]; fmt.Sprint(r) != "reconfirmation user true/true→true/true" || time.Since(r.At).Abs() > time.Minute {
		t.Errorf("record: got %v at %v, want reconfirmation true/true→true/true now", r, r.At)
	}
	for _, u := range []string{"dead", "nodev", "recent"} {
		for _, r := range e.consentHistory(a, u) {
			if r.Source == "reconfirmation" {
				t.Errorf("%s: got a reconfirmation record, want none (the notice did not reach it)", u)
			}
		}
	}
	if due, _ := e.consentDue(a, "?within=30d"); fmt.Sprint(dueIDs(due)) != "[dead nodev]" {
		t.Errorf("due after the run: got %v, want dead and nodev (due's clock restarted)", dueIDs(due))
	}
	consentHooks := func() []testenv.Hook {
		var out []testenv.Hook
		for _, h := range recv.Hooks() {
			if strings.Contains(string(h.Body), `"type":"consent.changed"`) {
				out = append(out, h)
			}
		}
		return out
	}
	testenv.WaitFor(t, "the consent.changed event", 30*time.Second, func() bool { return len(consentHooks()) >= 1 })
	for _, h := range consentHooks() {
		ev := verifiedConsent(t, secret, h)
		if ev.Type != "consent.changed" || ev.Data.UserID != "due" || ev.Data.Source != "reconfirmation" || !ev.Data.Marketing || !ev.Data.MarketingNight {
			t.Errorf("event: got %s, want consent.changed of due with source reconfirmation (imports send none)", h.Body)
		}
	}
	if code := e.AdminJSON("POST", "/admin/v1/apps/"+a.ID+"/reconfirmation/run", nil, &run); code != http.StatusOK || run.PushID != nil || run.Notified != 0 {
		t.Errorf("second run: got %d %+v, want 200 with nobody (dead's token was dropped, nodev has none)", code, run)
	}
	e.PatchApp(a, map[string]any{"reconfirmation": map[string]any{"enabled": false}})
	var refused struct{ Code, Message string }
	if code := e.AdminJSON("POST", "/admin/v1/apps/"+a.ID+"/reconfirmation/run", nil, &refused); code != http.StatusConflict ||
		refused.Code != "ERR-AB-CFG-01" || refused.Message != "Feature not enabled for this app." {
		t.Errorf("run when off: got %d %+v, want 409 ERR-AB-CFG-01", code, refused)
	}
}

// beforeTen returns a time zone where it is now about 03:00, so that the
// daily run of 10:00, which River also starts on its own, cannot come
// while a test makes its runs by hand.
func beforeTen(t *testing.T) *time.Location {
	t.Helper()
	h := time.Now().UTC().Hour()
	offset := (3 - h + 24) % 24 // hours east of UTC
	if offset > 14 {
		offset -= 24
	}
	name := "Etc/GMT" // Etc/GMT-9 is nine hours east
	switch {
	case offset > 0:
		name += "-" + strconv.Itoa(offset)
	case offset < 0:
		name += "+" + strconv.Itoa(-offset)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// TestConsentImportMissingMember: an import entry missing marketing or
// marketingNight is malformed: 400 ERR-AB-VAL-00 naming the member, and
// nothing of the request imported (the well-formed entries before it
// neither).
func TestConsentImportMissingMember(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(map[string]any{"name": "Shop", "tier": "business", "appUserEnabled": true})
	for _, u := range []string{"u0", "u1", "u2", "u3"} {
		e.Device(a, "dev-"+u, "tok-"+u, "android", "1.6.0", u)
	}
	at := time.Now().AddDate(-1, 0, 0).UTC().Format(time.RFC3339)
	whole := func(user string) map[string]any {
		return map[string]any{"userId": user, "marketing": true, "marketingNight": true, "at": at}
	}
	for _, tc := range []struct {
		name  string
		last  map[string]any
		field string
	}{
		{"NoMarketingNight", map[string]any{"userId": "u3", "marketing": true, "at": at}, "users[3].marketingNight"},
		{"NoMarketing", map[string]any{"userId": "u3", "marketingNight": false, "at": at}, "users[3].marketing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var refused struct {
				Code    string
				Details []struct{ Field, Reason string }
			}
			code := e.AdminJSON("POST", "/admin/v1/apps/"+a.ID+"/consent-import", map[string]any{"users": []any{
				whole("u0"), whole("u1"), whole("u2"), tc.last}}, &refused)
			if code != http.StatusBadRequest || refused.Code != "ERR-AB-VAL-00" || len(refused.Details) != 1 || refused.Details[0].Field != tc.field {
				t.Errorf("import: got %d %+v, want 400 ERR-AB-VAL-00 naming %s", code, refused, tc.field)
			}
		})
	}
	for _, u := range []string{"u0", "u1", "u2", "u3"} {
		if h := e.consentHistory(a, u); len(h) != 0 {
			t.Errorf("%s's history: got %v, want nothing imported", u, h)
		}
	}
	var imp importAnswer
	if code := e.AdminJSON("POST", "/admin/v1/apps/"+a.ID+"/consent-import", map[string]any{"users": []any{
		whole("u0"), whole("u1"), whole("u2"), whole("u3")}}, &imp); code != http.StatusOK || imp.Imported != 4 {
		t.Errorf("whole entries: got %d %+v, want 4 imported", code, imp)
	}
}

// TestReconfirmationConcurrentRuns: eight manual runs at once make one
// push naming every due user; the other seven answer notified 0 and a
// null pushId, and each device gets one notice.
func TestReconfirmationConcurrentRuns(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(map[string]any{"name": "Shop", "tier": "business", "appUserEnabled": true, "timeZone": beforeTen(t).String(),
		"reconfirmation": map[string]any{"enabled": true}})
	users := []string{"u1", "u2", "u3"}
	var entries []any
	old := time.Now().AddDate(-2, 0, 10).UTC().Truncate(time.Second) // due in ten days
	for _, u := range users {
		e.Device(a, "dev-"+u, "tok-"+u, "android", "1.6.0", u)
		entries = append(entries, map[string]any{"userId": u, "marketing": true, "marketingNight": false, "at": old.Format(time.RFC3339)})
	}
	if code := e.AdminJSON("POST", "/admin/v1/apps/"+a.ID+"/consent-import", map[string]any{"users": entries}, nil); code != http.StatusOK {
		t.Fatalf("import: got %d, want 200", code)
	}
	type runAnswer struct {
		Notified int
		PushID   *string
	}
	const runs = 8
	answers := make([]runAnswer, runs)
	codes := make([]int, runs)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Go(func() {
			codes[i] = e.AdminJSON("POST", "/admin/v1/apps/"+a.ID+"/reconfirmation/run", nil, &answers[i])
		})
	}
	wg.Wait()
	var pushID string
	for i, r := range answers {
		switch {
		case codes[i] != http.StatusOK:
			t.Errorf("run %d: got %d, want 200", i, codes[i])
		case r.PushID != nil && pushID == "" && r.Notified == len(users):
			pushID = *r.PushID
		case r.PushID != nil || r.Notified != 0:
			t.Errorf("run %d: got notified %d push %v, want 0 and null (another run's push names them)", i, r.Notified, r.PushID != nil)
		}
	}
	if pushID == "" {
		t.Fatalf("runs: got %+v, want one naming %d users", answers, len(users))
	}
	p := e.WaitFinal(pushID, 30*time.Second)
	if p.Counts.Sent != len(users) {
		t.Errorf("push: got %+v, want %d sent", p.Counts, len(users))
	}
	if got := e.pushesOfKind(a, "consent-reconfirmation"); len(got) != 1 {
		t.Errorf("re-confirmation pushes: got %d, want 1", len(got))
	}
	for _, u := range users {
		if ms := e.Received("tok-" + u); len(ms) != 1 {
			t.Errorf("tok-%s: got %d notices, want 1", u, len(ms))
		}
	}
}
