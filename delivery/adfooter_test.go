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
