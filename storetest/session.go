package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/heraldpush/herald"
)

var sessionTests = []test{
	{"CreateSession/SessionExpires", testSessionRoundTrip},
	{"DeleteSession", testDeleteSession},
	{"ExpiredForgotten", testExpiredSessionsForgotten},
}

func testSessionRoundTrip(t *testing.T, b *bundle) {
	exp := b.now.Add(12 * time.Hour)
	must(t, "CreateSession", b.s.CreateSession(b.ctx, "s1", exp))
	got, err := b.s.SessionExpires(b.ctx, "s1")
	if err != nil || !got.Equal(exp) {
		t.Errorf("SessionExpires: got %v, %v; want %v", got, err, exp)
	}
	if _, err := b.s.SessionExpires(b.ctx, "never"); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("unknown session: got %v, want ErrNotFound", err)
	}
}

func testDeleteSession(t *testing.T, b *bundle) {
	must(t, "CreateSession", b.s.CreateSession(b.ctx, "s1", b.now.Add(time.Hour)))
	must(t, "DeleteSession", b.s.DeleteSession(b.ctx, "s1"))
	if _, err := b.s.SessionExpires(b.ctx, "s1"); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("after sign-out: got %v, want ErrNotFound", err)
	}
	must(t, "DeleteSession of an unknown session", b.s.DeleteSession(b.ctx, "s1"))
}

func testExpiredSessionsForgotten(t *testing.T, b *bundle) {
	must(t, "CreateSession", b.s.CreateSession(b.ctx, "old", b.now.Add(time.Minute)))
	b.setNow(b.now.Add(time.Hour))
	must(t, "CreateSession", b.s.CreateSession(b.ctx, "new", b.now.Add(time.Hour)))
	if _, err := b.s.SessionExpires(b.ctx, "old"); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("ended session after a new one: got %v, want ErrNotFound (forgotten)", err)
	}
}
