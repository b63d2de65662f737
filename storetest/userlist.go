package storetest

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/audience"
	"github.com/heraldpush/herald/sendstore"
)

// userListTests are the UserStore cases of the users list.
var userListTests = []test{
	{"Users/PagedByUserID", testUsersPaged},
	{"Users/Prefix", testUsersPrefix},
	{"Users/UpdatedAt", testUsersUpdatedAt},
	{"Users/ErrInvalidRequest", testUsersInvalid},
	{"CountTargets", testCountTargets},
}

// userPages reads every page of f and returns the user ids page by page,
// and every user listed by id.
func (b *bundle) userPages(f herald.UserFilter) ([][]string, map[string]herald.UserSummary) {
	b.t.Helper()
	var out [][]string
	all := map[string]herald.UserSummary{}
	for range 100 {
		us, next, err := b.s.Users(b.ctx, b.app.ID, f)
		if err != nil {
			b.t.Fatalf("Users %+v: %v", f, err)
		}
		ids := []string{}
		for _, u := range us {
			ids, all[u.ID] = append(ids, u.ID), u
		}
		out = append(out, ids)
		if next == "" {
			return out, all
		}
		f.Cursor = next
	}
	b.t.Fatalf("Users: more than 100 pages")
	return nil, nil
}

func testUsersPaged(t *testing.T, b *bundle) {
	b.register("d-bob-1", "t-bob-1", "bob")
	b.register("d-bob-2", "t-bob-2", "bob")
	b.register("d-alice", "t-alice", "alice")
	b.register("d-carol", "t-carol", "carol")
	b.register("d-dave", "t-dave", "dave")
	b.register("d-erin", "t-erin", "erin")
	b.register("d-none", "t-none", "")
	must(t, "WithdrawUser carol", b.s.WithdrawUser(b.ctx, b.app.ID, "carol"))
	must(t, "DeleteDevice d-dave", b.s.DeleteDevice(b.ctx, b.app.ID, "d-dave"))
	other := b.newApp("other")
	_, err := b.s.RegisterDevice(b.ctx, other.ID, registration("d-x", "t-x", "aaron"))
	must(t, "RegisterDevice other app", err)

	pages, all := b.userPages(herald.UserFilter{Limit: 2})
	want := [][]string{{"alice", "bob"}, {"carol", "dave"}, {"erin"}}
	if !pagesEqual(pages, want) {
		t.Fatalf("pages of 2: got %v, want %v", pages, want)
	}
	for id, w := range map[string]struct {
		state   herald.UserState
		devices int
	}{"alice": {herald.UserRegistered, 1}, "bob": {herald.UserRegistered, 2}, "carol": {herald.UserWithdrawn, 0},
		"dave": {herald.UserRegistered, 0}, "erin": {herald.UserRegistered, 1}} {
		if u := all[id]; u.State != w.state || u.Devices != w.devices {
			t.Errorf("%s: got %s with %d devices, want %s with %d", id, u.State, u.Devices, w.state, w.devices)
		}
	}
	if pages, _ := b.userPages(herald.UserFilter{Limit: 5}); !pagesEqual(pages, [][]string{{"alice", "bob", "carol", "dave", "erin"}}) {
		t.Errorf("a page of exactly all: got %v, want one page and no cursor", pages)
	}
}

func testUsersPrefix(t *testing.T, b *bundle) {
	for _, u := range []string{"bo", "bob", "bob-2", "bob1", "boba", "boc", "abob", "Bob", "밥", "밥1"} {
		b.register("d-"+u, "t-"+u, u)
	}
	for _, tc := range []struct {
		prefix string
		want   [][]string
	}{
		{"bob", [][]string{{"bob", "bob-2"}, {"bob1", "boba"}}},
		{"bo", [][]string{{"bo", "bob"}, {"bob-2", "bob1"}, {"boba", "boc"}}},
		{"B", [][]string{{"Bob"}}},
		{"밥", [][]string{{"밥", "밥1"}}},
		{"bobb", [][]string{{}}},
	} {
		if pages, _ := b.userPages(herald.UserFilter{Prefix: tc.prefix, Limit: 2}); !pagesEqual(pages, tc.want) {
			t.Errorf("prefix %q: got %v, want %v", tc.prefix, pages, tc.want)
		}
	}
}

func testUsersUpdatedAt(t *testing.T, b *bundle) {
	t0 := b.now.Truncate(time.Millisecond)
	b.register("d1", "t1", "u1")
	b.register("d2", "t2", "u2")
	b.tick(time.Hour)
	yes := true
	b.setUserConsent("u1", change(&yes, nil))
	t1 := b.now.Truncate(time.Millisecond)
	b.tick(time.Hour)
	must(t, "WithdrawUser u2", b.s.WithdrawUser(b.ctx, b.app.ID, "u2"))
	t2 := b.now.Truncate(time.Millisecond)
	b.tick(time.Hour)
	b.register("d3", "t3", "u2") // registered again
	t3 := b.now.Truncate(time.Millisecond)

	_, all := b.userPages(herald.UserFilter{Limit: 10})
	if got := all["u1"].UpdatedAt; !got.Equal(t1) {
		t.Errorf("u1 after a consent change: got updatedAt %v, want %v (registered %v)", got, t1, t0)
	}
	if got := all["u2"]; !got.UpdatedAt.Equal(t3) || got.State != herald.UserRegistered {
		t.Errorf("u2 registered again: got %+v, want registered at %v (withdrawn %v)", got, t3, t2)
	}
	if !all["u1"].Consent.Marketing || all["u2"].Consent.Marketing {
		t.Errorf("consent: got u1 %+v, u2 %+v, want u1 marketing only", all["u1"].Consent, all["u2"].Consent)
	}
}

func testUsersInvalid(t *testing.T, b *bundle) {
	b.register("d1", "t1", "u1")
	for _, f := range []herald.UserFilter{{Limit: 0}, {Limit: 10, Cursor: "not base64!"}, {Limit: 10, Cursor: "_-8"}} {
		us, _, err := b.s.Users(b.ctx, b.app.ID, f)
		if !errors.Is(err, herald.ErrInvalidRequest) || len(us) != 0 {
			t.Errorf("%+v: got (%v, %v), want ErrInvalidRequest", f, us, err)
		}
	}
	if us, next, err := b.s.Users(b.ctx, "app_missing", herald.UserFilter{Limit: 10}); err != nil || len(us) != 0 || next != "" {
		t.Errorf("unknown app: got (%v, %q, %v), want an empty page", us, next, err)
	}
}

func testCountTargets(t *testing.T, b *bundle) {
	b.register("d1", "t1", "u1")
	b.register("d2", "t2", "u1")
	b.register("d3", "t3", "u2")
	b.register("d4", "t4", "")
	b.register("d5", "t5", "")
	_, err := b.s.SubscribeTopic(b.ctx, b.app.ID, "news", []string{"u1"})
	must(t, "SubscribeTopic", err)
	other := b.newApp("other")
	_, err = b.s.RegisterDevice(b.ctx, other.ID, registration("d9", "t9", "u9"))
	must(t, "RegisterDevice other app", err)
	for _, tc := range []struct {
		topic           string
		users, unmapped int
	}{{"", 2, 2}, {"news", 1, 0}, {"none", 0, 0}} {
		users, unmapped, err := b.s.CountTargets(b.ctx, b.app.ID, tc.topic)
		if err != nil || users != tc.users || unmapped != tc.unmapped {
			t.Errorf("topic %q: got (%d, %d, %v), want (%d, %d)", tc.topic, users, unmapped, err, tc.users, tc.unmapped)
		}
		// A spread push's fan-out counts its users as its cursor will:
		// each mapped user once, each unmapped device as one.
		n, err := b.s.CountSelected(b.ctx, b.app.ID, sendstore.Selection{Topic: tc.topic})
		if err != nil || n != tc.users+tc.unmapped {
			t.Errorf("CountSelected topic %q: got (%d, %v), want %d", tc.topic, n, err, tc.users+tc.unmapped)
		}
	}
	f, details := audience.Parse(json.RawMessage(`{"field": "platform", "eq": "android"}`))
	if len(details) > 0 {
		t.Fatalf("filter: %v", details)
	}
	n, err := b.s.CountSelected(b.ctx, b.app.ID, sendstore.Selection{Filter: &f, Now: b.now})
	if err != nil || n != 4 {
		t.Errorf("CountSelected filter: got (%d, %v), want 4 (u1, u2 and two unmapped devices)", n, err)
	}
}
