package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/heraldpush/herald"
)

// adBodies are marketing requests of every push endpoint: marked by
// options.isMarketing or by a (광고) title.
var adBodies = []struct{ name, path, body string }{
	{"Users/Title", "/api/push/v2/users", `{"userIds":["u1"],"title":"(광고) sale","content":"c"}`},
	{"Users/Option", "/api/push/v2/users", `{"userIds":["u1"],"title":"(광고) sale","content":"c","options":{"isMarketing":true}}`},
	{"Users/Scheduled", "/api/push/v2/users", `{"userIds":["u1"],"title":"(광고) sale","content":"c","options":{"scheduleTime":"2025-06-11T23:00"}}`},
	{"Messages/OneOfTwo", "/api/push/v2/messages", `{"messages":[{"userId":"u1","title":"hi","content":"c"},{"userId":"u2","title":"(광고) sale","content":"c"}]}`},
	{"Messages/Option", "/api/push/v2/messages", `{"messages":[{"userId":"u1","title":"(광고) hi","content":"c"}],"options":{"isMarketing":true}}`},
	{"Topics", "/api/push/v2/topics", `{"topic":"news","title":"(광고) sale","content":"c"}`},
	{"All", "/api/push/v2/all", `{"title":"(광고) sale","content":"c"}`},
}

// adLeaves are the details of a marketing request of an app with no ad
// footer settings: one per leaf, in this order.
var adLeaves = []string{"app.adSender.name", "app.adSender.contact", "app.adOptOut"}

// TestAdFooterRefused: on every push endpoint, a marketing request of an
// app under the (광고) rule is refused 400 with details naming each unset
// setting, each citing art. 50(4), and nothing is accepted.
func TestAdFooterRefused(t *testing.T) {
	t.Parallel()
	for _, settings := range []struct {
		name         string
		sender, cont string
		optOut       string
		want         []string
	}{
		{"NoneSet", "", "", "", adLeaves},
		{"OnlyOptOut", "", "", "수신거부: 설정", adLeaves[:2]},
		{"NoContact", "Co", "", "off", adLeaves[1:2]},
		{"NoOptOut", "Co", "080", "", adLeaves[2:]},
	} {
		for _, tc := range adBodies {
			t.Run(settings.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				a := newFakeAPI()
				a.app.AdSenderName, a.app.AdSenderContact, a.app.AdOptOut = settings.sender, settings.cont, settings.optOut
				res := a.do(http.MethodPost, tc.path, tc.body)
				if res.Status != http.StatusBadRequest || res.Err.Code != herald.ErrInvalidRequest.Code {
					t.Fatalf("got %d %s, want 400 %s", res.Status, res.Body, herald.ErrInvalidRequest.Code)
				}
				var fields []string
				for _, d := range res.Err.Details {
					fields = append(fields, d.Field)
					if !strings.Contains(d.Reason, "art. 50(4)") {
						t.Errorf("reason of %s: got %q, want it to cite art. 50(4)", d.Field, d.Reason)
					}
					// the fix: the call and the member to set, as the app-user gate's 403 says
					member := strings.TrimPrefix(d.Field, "app.")
					if !strings.Contains(d.Reason, "PATCH /admin/v1/apps/{appId}") || !strings.Contains(d.Reason, "Set "+member+" ") {
						t.Errorf("reason of %s: got %q, want it to name PATCH /admin/v1/apps/{appId} and %s", d.Field, d.Reason, member)
					}
				}
				if strings.Join(fields, " ") != strings.Join(settings.want, " ") {
					t.Errorf("details: got %v, want %v", fields, settings.want)
				}
				if calls := a.take(); len(calls) > 0 {
					t.Errorf("a refused push asked for %+v, want nothing", calls)
				}
			})
		}
	}
}

// TestAdFooterFixed: with the settings, a marketing push is accepted with
// the footer fixed on it and its content as sent; a plain push, and any
// push of an app whose adPrefixCheck is off, has none.
func TestAdFooterFixed(t *testing.T) {
	t.Parallel()
	const footer = "\n(주)헤럴드 080-123-4567\n수신거부: 마이 > 설정"
	withSettings := func(a fakeAPI) {
		a.app.AdSenderName, a.app.AdSenderContact, a.app.AdOptOut = "(주)헤럴드", "080-123-4567", "수신거부: 마이 > 설정"
	}
	for _, tc := range adBodies {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := newFakeAPI()
			withSettings(a)
			res := a.do(http.MethodPost, tc.path, tc.body)
			calls := a.take()
			if res.Status != http.StatusOK || len(calls) != 1 {
				t.Fatalf("got %d %s, want 200 and one push", res.Status, res.Body)
			}
			p := calls[0].Push
			if p.AdFooter != footer || !p.Marketing {
				t.Errorf("footer: got %q (marketing %v), want %q", p.AdFooter, p.Marketing, footer)
			}
			if strings.Contains(p.Content.Content, "수신거부") {
				t.Errorf("content: got %q, want it as sent", p.Content.Content)
			}
		})
	}
	plain := []struct{ path, body string }{
		{"/api/push/v2/users", `{"userIds":["u1"],"title":"hi","content":"c"}`},
		{"/api/push/v2/messages", `{"messages":[{"userId":"u1","title":"hi","content":"c"}]}`},
	}
	for _, tc := range plain {
		a := newFakeAPI()
		withSettings(a)
		if res := a.do(http.MethodPost, tc.path, tc.body); res.Status != http.StatusOK {
			t.Fatalf("plain %s: got %d %s, want 200", tc.path, res.Status, res.Body)
		}
		if p := a.take()[0].Push; p.AdFooter != "" {
			t.Errorf("plain %s: got footer %q, want none", tc.path, p.AdFooter)
		}
	}
	off := newFakeAPI()
	off.app.NoAdPrefixCheck = true // no settings either: not under the rule
	res := off.do(http.MethodPost, "/api/push/v2/users", `{"userIds":["u1"],"title":"sale","content":"c","options":{"isMarketing":true}}`)
	if res.Status != http.StatusOK {
		t.Fatalf("adPrefixCheck off: got %d %s, want 200", res.Status, res.Body)
	}
	if p := off.take()[0].Push; p.AdFooter != "" || !p.Marketing {
		t.Errorf("adPrefixCheck off: got footer %q, want none on a marketing push", p.AdFooter)
	}
}

// TestAdFooterPayload: the footer counts in FCM's 4 KB: a marketing message
// that fits alone but not with the footer is refused by its field (on
// /messages by its index), the same text without the prefix is accepted.
func TestAdFooterPayload(t *testing.T) {
	t.Parallel()
	a := newFakeAPI()
	a.app.AdSenderName, a.app.AdSenderContact, a.app.AdOptOut = "Co", "080", strings.Repeat("x", 150)
	// The footer is 1+2+1+3+1+150 = 158 bytes.
	plain := herald.Content{Title: "(광고) t", Content: "c"}
	room := herald.MaxFCMPayload - plain.FCMPayloadSize()
	content := "c" + strings.Repeat("y", room-100) // fits alone, 58 bytes over with the footer
	if (herald.Content{Title: plain.Title, Content: content}).FCMPayloadSize() > herald.MaxFCMPayload {
		t.Fatal("the content does not fit alone")
	}
	res := a.do(http.MethodPost, "/api/push/v2/users", `{"userIds":["u1"],"title":"(광고) t","content":"`+content+`"}`)
	if res.Status != http.StatusBadRequest || len(res.Err.Details) != 1 || res.Err.Details[0].Field != "content" ||
		!strings.Contains(res.Err.Details[0].Reason, "ad footer") {
		t.Errorf("users: got %d %s, want 400 naming content with the ad footer", res.Status, res.Body)
	}
	res = a.do(http.MethodPost, "/api/push/v2/messages", `{"messages":[{"userId":"u1","title":"t0","content":"`+content+
		`"},{"userId":"u2","title":"(광고) t","content":"`+content+`"}]}`)
	if res.Status != http.StatusBadRequest || len(res.Err.Details) != 1 || res.Err.Details[0].Field != "messages[1]" {
		t.Errorf("messages: got %d %s, want 400 naming messages[1] only", res.Status, res.Body)
	}
	if calls := a.take(); len(calls) > 0 {
		t.Errorf("refused pushes asked for %+v, want nothing", calls)
	}
	res = a.do(http.MethodPost, "/api/push/v2/users", `{"userIds":["u1"],"title":"t","content":"`+content+`"}`)
	if res.Status != http.StatusOK {
		t.Errorf("plain: got %d %s, want 200", res.Status, res.Body)
	}
}
