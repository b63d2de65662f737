package delivery

import (
	"fmt"
	"testing"
	"time"

	"github.com/heraldpush/herald"
)

// The night deferral (options.nightPolicy "defer") on the harness: the
// service's clock is set shortly before 08:00 in Seoul and moved to the
// morning, River's with it.

// nightApp is an app in Seoul whose bodies carry the (광고) prefix
// themselves (adPrefixCheck off, so options.isMarketing alone marks a
// plain title), with users of different consent: "none" (the default,
// no marketing), "day" (marketing, not at night), "all" (marketing at any
// hour: night consent through the in-app switch of its device), and two
// more of marketing by day only, "late" and "quit".
func nightApp(t *testing.T, h *harness) harnessApp {
	t.Helper()
	a := h.newApp(func(a *herald.App) { a.AppUserEnabled, a.TimeZone, a.NoAdPrefixCheck = true, "Asia/Seoul", true })
	h.register(a, "cons-", "none", "day", "all", "late", "quit")
	on, off := true, false
	for _, u := range []string{"day", "late", "quit"} {
		h.consent(a, u, herald.ConsentChange{Marketing: &on})
	}
	h.consent(a, "all", herald.ConsentChange{Marketing: &on, MarketingNight: &off})
	if _, err := h.store.SetDeviceConsent(h.ctx, a.ID, "dev-cons-all", herald.ConsentChange{MarketingNight: &on, Source: herald.SourceSDK}); err != nil {
		t.Fatalf("SDK consent for all: %v", err)
	}
	for user, want := range map[string]herald.Consent{"none": {}, "day": {Marketing: true}, "all": {Marketing: true, MarketingNight: true}} {
		ds := h.devices(a, user)
		if len(ds) != 1 || ds[0].Consent.Marketing != want.Marketing || ds[0].Consent.MarketingNight != want.MarketingNight {
			t.Fatalf("device consent of %s: got %+v, want %+v", user, ds, want)
		}
	}
	return a
}

// consent changes a user's consent as PATCH marketing does.
func (h *harness) consent(a harnessApp, user string, c herald.ConsentChange) {
	h.t.Helper()
	if _, err := h.store.SetUserConsent(h.ctx, a.ID, user, c); err != nil {
		h.t.Fatalf("consent of %s: %v", user, err)
	}
}

// pushDefer accepts a marketing push with nightPolicy defer to users and
// runs its jobs.
func (h *harness) pushDefer(a harnessApp, users ...any) string {
	h.t.Helper()
	return h.push(a, map[string]any{"userIds": users, "title": "Night sale", "content": "50% off",
		"options": map[string]any{"isMarketing": true, "nightPolicy": "defer"}})
}

// wantDelivered checks which of the users' tokens received push id.
func (h *harness) wantDelivered(a harnessApp, id string, users ...string) {
	h.t.Helper()
	want := map[string]int{}
	for _, u := range users {
		want["cons-"+u] = 1
	}
	if got := h.sentTo(id); fmt.Sprint(got) != fmt.Sprint(want) {
		h.t.Errorf("messages by token: got %v, want %v", got, want)
	}
}

// wantDeferredPush checks that the night-consent device ("all") got the
// push at once and that n tokens wait for the morning.
func (h *harness) wantDeferredPush(a harnessApp, id string, morning time.Time, n int) pushView {
	h.t.Helper()
	h.wantDelivered(a, id, "all")
	v := h.view(id)
	if v.Status != herald.StatusSending || v.NightPolicy != herald.NightDefer || v.Counts.DeferredNight != n || v.DeferredUntil == nil ||
		!v.DeferredUntil.Equal(morning) || v.Counts.SuppressedConsent != 1 || v.Counts.SuppressedNight != 0 {
		h.t.Fatalf("before the morning: got %+v (until %v), want sending, %d deferred until %v, 1 suppressed by consent", v.Push,
			v.DeferredUntil, n, morning)
	}
	return v
}

// TestNightDeferralAtEight: a marketing push with nightPolicy defer at
// 07:50 in Seoul goes at once to the device with night consent, counts
// the day-only ones as deferred until 08:00, and sends them at 08:00 of
// the service's clock, their consent judged again then: "late" gave night
// consent and "quit" withdrew marketing consent before the morning.
func TestNightDeferralAtEight(t *testing.T) {
	t.Parallel()
	morning := time.Date(2026, 12, 2, 8, 0, 0, 0, seoul)
	h := newHarness(t, harnessOptions{now: morning.Add(-time.Hour)})
	a := nightApp(t, h)
	// Not within schedulerSlack of the morning: the deferred job would
	// then wait for it in process, on the real clock.
	h.at(morning.Add(-10 * time.Minute))
	id := h.pushDefer(a, "none", "day", "all", "late", "quit")
	h.wantDeferredPush(a, id, morning, 3)

	on, off := true, false
	h.consent(a, "late", herald.ConsentChange{Marketing: &on, MarketingNight: &on})
	h.consent(a, "quit", herald.ConsentChange{Marketing: &off})

	h.at(morning)
	v := h.final(id)
	h.wantDelivered(a, id, "all", "day", "late")
	if v.Status != herald.StatusDone || v.Counts.Tokens != 5 || v.Counts.Sent != 3 || v.Counts.SuppressedConsent != 2 ||
		v.Counts.SuppressedNight != 0 || v.Counts.DeferredNight != 0 || v.DeferredUntil != nil || v.serverActions() != 2.5 {
		t.Errorf("after the morning: got %s %+v (until %v, %v Server Actions), want done, 5 tokens, 3 sent, 2 suppressed by consent, 2.5 Server Actions",
			v.Status, v.Counts, v.DeferredUntil, v.serverActions())
	}
	for _, u := range []string{"day", "late"} {
		at := h.sendTimes("cons-" + u)
		if len(at) != 1 {
			t.Fatalf("%s: got %d messages, want 1", u, len(at))
		}
		if at[0].Before(morning) {
			t.Errorf("%s: sent at %v, before the morning %v", u, at[0], morning)
		}
	}
	if got := h.usage(a); got != 2.5 {
		t.Errorf("usage: got %v Server Actions, want 2.5 (charged once)", got)
	}
}
