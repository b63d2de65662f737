package delivery

import (
	"fmt"
	"testing"
	"time"

	"github.com/heraldpush/herald"
)

// TestPagedFanout sends an all-users and a topic push whose fan-out reads
// the devices in pages of 7: users with three devices each straddle the
// pages. Every device is reached once, each user is counted and charged
// once, and a user is reported unreachable only when all of its devices,
// read on two pages, were dead.
func TestPagedFanout(t *testing.T) {
	t.Parallel()
	h := newHarness(t, harnessOptions{fanoutPage: 7})
	a := h.newApp(func(a *herald.App) { a.AppUserEnabled = true })
	var users []string
	tokens := map[string]bool{}
	for u := range 15 {
		user := fmt.Sprintf("user%02d", u)
		users = append(users, user)
		for d := range 3 {
			token := fmt.Sprintf("tok-%s-%d", user, d)
			switch {
			case u == 4: // every device dead: unreachable
				token = "unregistered-" + token
			case u == 9 && d < 2: // two of three dead: reached
				token = "unregistered-" + token
			default:
				tokens[token] = true
			}
			h.device(a, fmt.Sprintf("dev-%s-%d", user, d), token, "android", user)
		}
	}
	for d := range 4 {
		token := fmt.Sprintf("tok-anon-%d", d)
		if d == 0 {
			token = "unregistered-" + token // no user to report
		} else {
			tokens[token] = true
		}
		h.device(a, fmt.Sprintf("anon-%d", d), token, "android", "")
	}

	all, err := h.accept(a, herald.KindAll, map[string]any{"title": "All", "content": "everyone"})
	must(t, err)
	p := h.final(all)
	got := h.sentTo(all)
	for token := range tokens {
		if got[token] != 1 {
			t.Errorf("token %s got %d messages, want 1", token, got[token])
		}
	}
	if len(got) != len(tokens) {
		t.Errorf("reached %d tokens, want %d", len(got), len(tokens))
	}
	// 15 users and 4 devices without one: 19 × 0.5.
	if p.Status != herald.StatusDone || p.Counts.RequestedUsers != 19 || p.serverActions() != 9.5 || p.Counts.Tokens != 49 ||
		p.Counts.Sent != len(tokens) || p.Counts.Unreachable != 1 {
		t.Errorf("all push: got %s, %d users, %v SA, counts %+v; want done, 19, 9.5, 49 tokens, %d sent, 1 unreachable",
			p.Status, p.Counts.RequestedUsers, p.serverActions(), p.Counts, len(tokens))
	}
	if len(p.Unreachable) != 1 || p.Unreachable[0].UserID != "user04" {
		t.Errorf("unreachable: got %+v, want user04 only", p.Unreachable)
	}
	if u := h.usage(a); u != 9.5 {
		t.Errorf("usage: got %v, want 9.5", u)
	}

	// A topic of ten users: 28 devices (the all-users push dropped
	// user09's two dead ones), four pages.
	if _, err := h.store.SubscribeTopic(h.ctx, a.ID, "news", users[5:]); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	topic, err := h.accept(a, herald.KindTopic, map[string]any{"topic": "news", "title": "Hi", "content": "topic"})
	must(t, err)
	p = h.final(topic)
	got = h.sentTo(topic)
	if len(got) != 28 || p.Counts.RequestedUsers != 10 || p.serverActions() != 5 || p.Counts.Tokens != 28 || p.Counts.Unreachable != 0 {
		t.Errorf("topic push: reached %d tokens, %d users, %v SA, counts %+v; want 28, 10, 5, 28 tokens, none unreachable",
			len(got), p.Counts.RequestedUsers, p.serverActions(), p.Counts)
	}
	for token, n := range got {
		if n != 1 || !tokens[token] {
			t.Errorf("topic push: %s got %d messages", token, n)
		}
	}
}

// TestUnregisteredOldTokenIsExpired: FCM's UNREGISTERED for a token last
// refreshed more than 270 days ago is reported as TOKEN_EXPIRED, a fresh
// one as APP_DELETED.
func TestUnregisteredOldTokenIsExpired(t *testing.T) {
	t.Parallel()
	now := time.Now()
	h := newHarness(t, harnessOptions{now: now.Add(-271 * 24 * time.Hour)})
	a := h.newApp(nil)
	h.register(a, "unregistered-", "old")
	h.at(now)
	h.register(a, "unregistered-", "fresh")
	got := h.final(h.pushUsers(a, "old", "fresh")).unreachable()
	if got["old"] != "TOKEN_EXPIRED" || got["fresh"] != "APP_DELETED" {
		t.Fatalf("reasons: got %v, want old TOKEN_EXPIRED and fresh APP_DELETED", got)
	}
}
