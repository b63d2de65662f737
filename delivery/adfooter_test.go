package delivery

import (
	"testing"
	"time"

	"github.com/heraldpush/herald"
)

// optedIn makes an app whose devices start with marketing and night
// consent, so that ads reach them at any hour.
func optedIn(a *herald.App) { a.DefaultConsent = herald.Consent{Marketing: true, MarketingNight: true} }

// TestAdFooterFixedAtAccept: a scheduled ad is sent with the footer of the
// app's settings when it was accepted, though they change before it is
// sent (docs/consent.md).
func TestAdFooterFixedAtAccept(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 1, 23, 0, 0, 0, seoul)
	h := newHarness(t, harnessOptions{now: at.Add(-61 * time.Second)})
	a := h.newApp(optedIn)
	h.register(a, "fixed-", "u1")
	id := h.push(a, map[string]any{"userIds": []any{"u1"}, "title": "(광고) later", "content": "c",
		"options": map[string]any{"scheduleTime": "2026-12-01T23:00"}})
	h.editApp(a, func(app *herald.App) {
		app.AdSenderName, app.AdSenderContact, app.AdOptOut = "New Co.", "02-999", "new text"
	})
	if p := h.view(id); p.AdFooter != adFooter {
		t.Errorf("scheduled push after the change: got adFooter %q, want %q", p.AdFooter, adFooter)
	}
	if n := len(h.messages("fixed-u1")); n != 0 {
		t.Fatalf("before its time: got %d messages, want none", n)
	}
	h.at(at)
	h.final(id)
	if got := h.bodyAt("fixed-u1", id); got != "c"+adFooter {
		t.Errorf("sent: got %q, want the footer as of accept %q", got, "c"+adFooter)
	}
}

// TestAdFooterSent: the footer reaches FCM byte for byte at the end of the
// body of every marketing message — on /users, and on /messages for the
// marketing message only — while a plain push is sent as given; the push
// keeps the content as sent and the footer apart (none on a plain push).
// The footer's own line breaks and spaces are kept verbatim.
func TestAdFooterSent(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{})
	a := h.newApp(optedIn) // the harness app's footer: adFooter
	h.register(a, "footer-", "u1", "u2", "u3")
	content := "주말 한정 20% 할인\n지금 확인하세요"
	users := h.push(a, map[string]any{"userIds": []any{"u1"}, "title": "(광고) 봄 세일", "content": content})
	h.final(users)
	if got, want := h.bodyAt("footer-u1", users), content+"\n(주)테스트 080-000-0000\n수신거부: 마이 > 설정 > 알림"; got != want {
		t.Errorf("/users body at the emulator: got %q, want %q", got, want)
	}
	if p := h.view(users); p.Content.Content != content || p.AdFooter != adFooter {
		t.Errorf("/users push: got content %q and adFooter %q, want %q and %q", p.Content.Content, p.AdFooter, content, adFooter)
	}

	mixed, err := h.accept(a, herald.KindMessages, map[string]any{"messages": []any{
		map[string]any{"userId": "u2", "title": "주문 확인", "content": "주문이 접수되었습니다"},
		map[string]any{"userId": "u3", "title": "(광고) 쿠폰", "content": "쿠폰이 도착했어요"},
	}})
	must(t, err)
	h.final(mixed)
	if got := h.bodyAt("footer-u2", mixed); got != "주문이 접수되었습니다" {
		t.Errorf("/messages plain message: got %q, want it as given", got)
	}
	if got, want := h.bodyAt("footer-u3", mixed), "쿠폰이 도착했어요"+adFooter; got != want {
		t.Errorf("/messages marketing message: got %q, want %q", got, want)
	}
	if p := h.view(mixed); p.AdFooter != adFooter {
		t.Errorf("/messages push: got adFooter %q, want %q", p.AdFooter, adFooter)
	}

	plain := h.push(a, map[string]any{"userIds": []any{"u1"}, "title": "배송 안내", "content": "배송이 시작되었습니다"})
	h.final(plain)
	if got := h.bodyAt("footer-u1", plain); got != "배송이 시작되었습니다" {
		t.Errorf("plain push: got %q, want it as given", got)
	}
	if p := h.view(plain); p.AdFooter != "" {
		t.Errorf("plain push: got adFooter %q, want none", p.AdFooter)
	}

	// adPrefixCheck off: no prefix rule and no footer, even on a push the
	// request marks as an ad.
	h.editApp(a, func(app *herald.App) { app.NoAdPrefixCheck = true })
	off := h.push(a, map[string]any{"userIds": []any{"u1"}, "title": "Sale", "content": "off", "options": map[string]any{"isMarketing": true}})
	h.final(off)
	if got := h.bodyAt("footer-u1", off); got != "off" {
		t.Errorf("adPrefixCheck off: got %q, want the body as given", got)
	}
	if p := h.view(off); p.AdFooter != "" || !p.Marketing {
		t.Errorf("adPrefixCheck off: got adFooter %q (marketing %v), want none on a marketing push", p.AdFooter, p.Marketing)
	}
}
