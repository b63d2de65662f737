package herald_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/heraldpush/herald"
)

func TestEventsRetry(t *testing.T) {
	for failures, want := range map[int]time.Duration{0: 0, 1: time.Second, 2: 2 * time.Second, 5: 16 * time.Second,
		6: 30 * time.Second, 7: 30 * time.Second, 1000: 30 * time.Second} {
		if got := herald.EventsRetry(failures); got != want {
			t.Errorf("EventsRetry(%d): got %s, want %s", failures, got, want)
		}
	}
}

func TestWebhookEventsProblems(t *testing.T) {
	for _, tc := range []struct {
		list []string
		want string
	}{
		{nil, "[]"},
		{[]string{"push.sent", "push.failed", "push.received", "push.opened", "push.undeliverable", "consent.changed"}, "[]"},
		{[]string{"push.sent", "push.clicked"}, "[{webhookEvents[1] must be one of push.undeliverable, consent.changed, push.sent, push.failed, push.received, push.opened, push.approval_requested}]"},
		{[]string{"push.sent", "push.sent"}, "[{webhookEvents[1] repeats push.sent}]"},
		{[]string{""}, "[{webhookEvents[0] must be one of push.undeliverable, consent.changed, push.sent, push.failed, push.received, push.opened, push.approval_requested}]"},
	} {
		if got := fmt.Sprint(herald.WebhookEventsProblems("webhookEvents", tc.list)); got != tc.want {
			t.Errorf("%v: got %s, want %s", tc.list, got, tc.want)
		}
	}
}

func TestAppTakes(t *testing.T) {
	def := herald.App{WebhookURL: "https://h.example"}
	none := herald.App{WebhookURL: "https://h.example", WebhookEvents: []herald.WebhookEvent{}}
	sent := herald.App{WebhookURL: "https://h.example", WebhookEvents: []herald.WebhookEvent{herald.WebhookSent}}
	// approval on: push.approval_requested joins the default list, not a list the app set
	approving := herald.App{WebhookURL: "https://h.example", Approval: herald.ApprovalSetting{Mode: herald.ApprovalAll}}
	approvingSent := approving
	approvingSent.WebhookEvents = sent.WebhookEvents
	for _, tc := range []struct {
		app  herald.App
		e    herald.WebhookEvent
		want bool
	}{
		{def, herald.WebhookUndeliverable, true}, {def, herald.WebhookConsent, true}, {def, herald.WebhookSent, false},
		{none, herald.WebhookUndeliverable, false}, {sent, herald.WebhookSent, true}, {sent, herald.WebhookOpened, false},
		{herald.App{WebhookEvents: sent.WebhookEvents}, herald.WebhookSent, false}, // no webhook
		{def, herald.WebhookApproval, false}, {approving, herald.WebhookApproval, true}, {approving, herald.WebhookConsent, true},
		{approvingSent, herald.WebhookApproval, false},
	} {
		if got := tc.app.Takes(tc.e); got != tc.want {
			t.Errorf("%v with %q takes %s: got %v, want %v", tc.app.WebhookEvents, tc.app.WebhookURL, tc.e, got, tc.want)
		}
	}
}

func TestEventsMessageID(t *testing.T) {
	a := []herald.DeliveryEvent{{ID: 1}, {ID: 2}}
	b := []herald.DeliveryEvent{{ID: 1}, {ID: 3}}
	if herald.EventsMessageID("app", a) != herald.EventsMessageID("app", a) || herald.EventsMessageID("app", a) == herald.EventsMessageID("app", b) {
		t.Errorf("ids: got %s %s, want the same batch's equal and another's different", herald.EventsMessageID("app", a), herald.EventsMessageID("app", b))
	}
}
