package herald

import (
	"strings"
	"testing"
)

func TestUserOutcome(t *testing.T) {
	d := func(s DeliveryState, resent bool) Delivery { return Delivery{State: s, Resent: resent} }
	for _, c := range []struct {
		name string
		ds   []Delivery
		want Outcome
	}{
		{"none", nil, OutcomeUnreachable},
		{"sent", []Delivery{d(DeliverySent, false)}, OutcomeSent},
		{"resent", []Delivery{d(DeliverySent, true)}, OutcomeResent},
		{"sent on one device beats resent", []Delivery{d(DeliverySent, true), d(DeliverySent, false)}, OutcomeSent},
		{"sent beats failed", []Delivery{d(DeliveryFailed, false), d(DeliverySent, false)}, OutcomeSent},
		{"pending", []Delivery{d(DeliveryPending, false), d(DeliveryFailed, false)}, OutcomePending},
		{"in flight is pending", []Delivery{d(DeliveryInflight, false)}, OutcomePending},
		{"retry is pending", []Delivery{d(DeliveryRetry, false)}, OutcomePending},
		{"failed", []Delivery{d(DeliveryUndeliverable, false), d(DeliveryFailed, false)}, OutcomeFailed},
		{"night", []Delivery{d(DeliverySuppressedConsent, false), d(DeliverySuppressedNight, false)}, OutcomeSuppressedNight},
		{"consent", []Delivery{d(DeliverySuppressedConsent, false)}, OutcomeSuppressedConsent},
		{"undeliverable", []Delivery{d(DeliveryUndeliverable, false)}, OutcomeUnreachable},
	} {
		if got := UserOutcome(c.ds); got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
}

func TestDownloadReasonProblem(t *testing.T) {
	for _, c := range []struct {
		reason string
		ok     bool
	}{
		{"", false}, {"   ", false}, {"\t\n", false}, {"\xff", false},
		{strings.Repeat("가", MaxDownloadReason), true}, {strings.Repeat("x", MaxDownloadReason+1), false},
		{"user's request of 2026-05-01", true},
	} {
		p := DownloadReasonProblem(c.reason)
		if (p == nil) != c.ok || p != nil && p.Field != "reason" {
			t.Errorf("%q: got %+v, want ok %v (a problem names reason)", c.reason, p, c.ok)
		}
	}
}
