package api_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/internal/testenv"
)

// emuNotification is the notification of one message the emulator took.
func emuNotification(t *testing.T, m testenv.EmuMessage) (title, body string) {
	t.Helper()
	var msg struct {
		Notification struct{ Title, Body string }
	}
	if err := json.Unmarshal(m.Message, &msg); err != nil {
		t.Fatalf("emulator message %s: %v", m.Message, err)
	}
	return msg.Notification.Title, msg.Notification.Body
}

// bodyAt waits for the one message of push id at token and returns its
// notification body.
func (e *env) bodyAt(token, id string) string {
	e.T.Helper()
	e.WaitFinal(id, 20*time.Second)
	var bodies []string
	for _, m := range e.Received(token) {
		var msg struct{ Data map[string]string }
		json.Unmarshal(m.Message, &msg)
		if msg.Data["pushId"] == id {
			_, body := emuNotification(e.T, m)
			bodies = append(bodies, body)
		}
	}
	if len(bodies) != 1 {
		e.T.Fatalf("messages of %s at %s: got %d, want 1", id, token, len(bodies))
	}
	return bodies[0]
}

// pushJSON reads the admin JSON of a push as a map, so that a member's
// absence and null show.
func (e *env) pushJSON(id string) map[string]any {
	e.T.Helper()
	var out map[string]any
	if code := e.AdminJSON("GET", "/admin/v1/pushes/"+id, nil, &out); code != http.StatusOK {
		e.T.Fatalf("get push %s: got %d", id, code)
	}
	return out
}

// optedIn is the settings of an app whose devices start with marketing
// and night consent, so that ads reach them at any hour.
func optedIn() map[string]any {
	return map[string]any{"defaultConsent": map[string]any{"marketing": true, "marketingNight": true}}
}

// TestAdFooterRefusedEndToEnd: an app under the (광고) rule without the footer's
// settings has every ad refused, on each push endpoint and the admin test
// push, with one detail per unset setting citing art. 50(4); nothing is
// stored, charged or sent. A plain push of the same app goes out.
func TestAdFooterRefusedEndToEnd(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(map[string]any{"adSender": nil, "adOptOut": nil})
	e.Register(a, "nofooter-", "u1")
	ad := map[string]any{"isMarketing": true}
	requests := []struct {
		path string
		body map[string]any
	}{
		{"/api/push/v2/users", map[string]any{"userIds": []any{"u1"}, "title": "(광고) Sale", "content": "c"}},
		{"/api/push/v2/users", map[string]any{"userIds": []any{"u1"}, "title": "(광고) Sale", "content": "c", "options": ad}},
		{"/api/push/v2/messages", map[string]any{"messages": []any{
			map[string]any{"userId": "u1", "title": "hello", "content": "c"},
			map[string]any{"userId": "u1", "title": "(광고) two", "content": "c"},
		}}},
		{"/api/push/v2/topics", map[string]any{"topic": "news", "title": "(광고) Sale", "content": "c"}},
		{"/api/push/v2/all", map[string]any{"title": "(광고) Sale", "content": "c", "options": ad}},
	}
	for _, r := range requests {
		res := e.ServerDo("POST", r.path, a.Keys(), r.body)
		wantFooterRefusal(t, r.path, res.Status, res.Body)
	}
	var refusal json.RawMessage
	code := e.AdminJSON("POST", "/admin/v1/apps/"+a.ID+"/test-push", map[string]any{"userId": "u1", "title": "(광고) test", "content": "c"}, &refusal)
	wantFooterRefusal(t, "test-push", code, refusal)
	if n := len(e.PushList(a)); n != 0 || e.Usage(a) != 0 || e.Emulator.Stats().Received != 0 {
		t.Errorf("after refusals: got %d pushes, %v Server Actions, %d sends; want none", n, e.Usage(a), e.Emulator.Stats().Received)
	}
	res := e.ServerDo("POST", "/api/push/v2/users", a.Keys(), map[string]any{"userIds": []any{"u1"}, "title": "Receipt", "content": "c"})
	if res.Status != http.StatusOK {
		t.Fatalf("plain push: got %d %s, want 200", res.Status, res.Body)
	}
	if body := e.bodyAt("nofooter-u1", res.Header.Get("X-Push-Id")); body != "c" {
		t.Errorf("plain push: got body %q, want %q", body, "c")
	}
}

// wantFooterRefusal checks a 400 naming the three unset settings, one
// detail per leaf, each citing art. 50(4).
func wantFooterRefusal(t *testing.T, what string, status int, raw []byte) {
	t.Helper()
	var body struct {
		Code    string
		Details []struct{ Field, Reason string }
	}
	if err := json.Unmarshal(raw, &body); err != nil || status != http.StatusBadRequest || body.Code != "ERR-AB-VAL-00" {
		t.Fatalf("%s: got %d %s, want 400 ERR-AB-VAL-00", what, status, raw)
	}
	var fields []string
	for _, d := range body.Details {
		fields = append(fields, d.Field)
		if !strings.Contains(d.Reason, "art. 50(4)") {
			t.Errorf("%s: reason of %s: got %q, want it to cite art. 50(4)", what, d.Field, d.Reason)
		}
	}
	if got := strings.Join(fields, " "); got != "app.adSender.name app.adSender.contact app.adOptOut" {
		t.Errorf("%s: details: got %s, want app.adSender.name app.adSender.contact app.adOptOut", what, got)
	}
}

// TestAdFooterSent: the footer reaches FCM byte for byte at the end of the
// body of every marketing message — on /users, and on /messages for the
// marketing message only — while a plain push is sent as given; the
// push's admin JSON keeps the content as sent and shows the footer as
// adFooter (null on a plain push). The footer's own line breaks and
// spaces are kept verbatim.
func TestAdFooterSent(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(optedIn()) // the test app's footer: testenv.AdFooter
	for _, u := range []string{"u1", "u2", "u3"} {
		e.Register(a, "footer-", u)
	}
	content := "주말 한정 20% 할인\n지금 확인하세요"
	res := e.ServerDo("POST", "/api/push/v2/users", a.Keys(), map[string]any{"userIds": []any{"u1"}, "title": "(광고) 봄 세일", "content": content})
	if res.Status != http.StatusOK {
		t.Fatalf("ad on /users: got %d %s", res.Status, res.Body)
	}
	users := res.Header.Get("X-Push-Id")
	if got, want := e.bodyAt("footer-u1", users), content+"\n(주)테스트 080-000-0000\n수신거부: 마이 > 설정 > 알림"; got != want {
		t.Errorf("/users body at the emulator: got %q, want %q", got, want)
	}
	p := e.pushJSON(users)
	if p["content"] != content || p["adFooter"] != testenv.AdFooter {
		t.Errorf("/users push JSON: got content %q and adFooter %#v, want %q and %q", p["content"], p["adFooter"], content, testenv.AdFooter)
	}

	res = e.ServerDo("POST", "/api/push/v2/messages", a.Keys(), map[string]any{"messages": []any{
		map[string]any{"userId": "u2", "title": "주문 확인", "content": "주문이 접수되었습니다"},
		map[string]any{"userId": "u3", "title": "(광고) 쿠폰", "content": "쿠폰이 도착했어요"},
	}})
	if res.Status != http.StatusOK {
		t.Fatalf("mixed /messages: got %d %s", res.Status, res.Body)
	}
	mixed := res.Header.Get("X-Push-Id")
	if got := e.bodyAt("footer-u2", mixed); got != "주문이 접수되었습니다" {
		t.Errorf("/messages plain message: got %q, want it as given", got)
	}
	if got, want := e.bodyAt("footer-u3", mixed), "쿠폰이 도착했어요"+testenv.AdFooter; got != want {
		t.Errorf("/messages marketing message: got %q, want %q", got, want)
	}
	if p := e.pushJSON(mixed); p["adFooter"] != testenv.AdFooter {
		t.Errorf("/messages push JSON: got adFooter %#v, want %q", p["adFooter"], testenv.AdFooter)
	}

	res = e.ServerDo("POST", "/api/push/v2/users", a.Keys(), map[string]any{"userIds": []any{"u1"}, "title": "배송 안내", "content": "배송이 시작되었습니다"})
	plain := res.Header.Get("X-Push-Id")
	if got := e.bodyAt("footer-u1", plain); got != "배송이 시작되었습니다" {
		t.Errorf("plain push: got %q, want it as given", got)
	}
	if p := e.pushJSON(plain); p["adFooter"] != nil {
		t.Errorf("plain push JSON: got adFooter %#v, want null", p["adFooter"])
	} else if _, ok := p["adFooter"]; !ok {
		t.Errorf("plain push JSON: adFooter missing, want null")
	}

	// adPrefixCheck off: no prefix rule and no footer, even on a push the
	// request marks as an ad.
	e.PatchApp(a, map[string]any{"adPrefixCheck": false})
	var id string
	testenv.WaitFor(t, "the public API to see the setting", 5*time.Second, func() bool {
		res = e.ServerDo("POST", "/api/push/v2/users", a.Keys(), map[string]any{"userIds": []any{"u1"}, "title": "Sale", "content": "off",
			"options": map[string]any{"isMarketing": true}})
		id = res.Header.Get("X-Push-Id")
		return res.Status == http.StatusOK
	})
	if got := e.bodyAt("footer-u1", id); got != "off" {
		t.Errorf("adPrefixCheck off: got %q, want the body as given", got)
	}
	if p := e.pushJSON(id); p["adFooter"] != nil || p["marketing"] != true {
		t.Errorf("adPrefixCheck off: got adFooter %#v (marketing %v), want null on a marketing push", p["adFooter"], p["marketing"])
	}
}

// TestAdFooterFixedAtAccept: a scheduled ad is sent with the footer of the
// app's settings when it was accepted, though they change before it is
// sent (docs/consent.md). It waits for a real send time, about 75 s.
func TestAdFooterFixedAtAccept(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a scheduled send (about 15 s)")
	}
	t.Parallel()
	clk := &testenv.Clock{}
	sendAt, slot := nextSlot(clk)
	e := start(t, testenv.Clocked(clk))
	a := e.NewApp(optedIn())
	e.Register(a, "fixed-", "u1")
	res := e.ServerDo("POST", "/api/push/v2/users", a.Keys(), map[string]any{"userIds": []any{"u1"}, "title": "(광고) later", "content": "c",
		"options": map[string]any{"scheduleTime": slot}})
	if res.Status != http.StatusOK {
		t.Fatalf("scheduled ad: got %d %s", res.Status, res.Body)
	}
	id := res.Header.Get("X-Push-Id")
	e.PatchApp(a, map[string]any{"adSender": map[string]any{"name": "New Co.", "contact": "02-999"}, "adOptOut": "new text"})
	if p := e.pushJSON(id); p["adFooter"] != testenv.AdFooter {
		t.Errorf("scheduled push JSON after the change: got adFooter %#v, want %q", p["adFooter"], testenv.AdFooter)
	}
	startSlot(clk, sendAt)
	testenv.WaitFor(t, "the scheduled push", 90*time.Second, func() bool { return len(e.Received("fixed-u1")) == 1 })
	if got := e.bodyAt("fixed-u1", id); got != "c"+testenv.AdFooter {
		t.Errorf("sent: got %q, want the footer as of accept %q", got, "c"+testenv.AdFooter)
	}
}
