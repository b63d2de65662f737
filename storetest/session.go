package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/heraldpush/herald"
)

var sessionTests = []test{
	{"CreateSession/Session", testSessionRoundTrip},
	{"DeleteSession", testDeleteSession},
	{"EndedForgotten", testEndedSessionsForgotten},
	{"TouchSession", testTouchSession},
	{"DisabledOperator", testSessionOfDisabledOperator},
	{"SignInFailures", testSignInFailures},
}

func ownerSession(id string, at time.Time) herald.Session {
	return herald.Session{ID: id, OperatorID: herald.OwnerID, Started: at, LastSeen: at}
}

func testSessionRoundTrip(t *testing.T, b *bundle) {
	must(t, "CreateSession", b.s.CreateSession(b.ctx, ownerSession("s1", b.now)))
	got, op, err := b.s.Session(b.ctx, "s1")
	if err != nil || !got.Started.Equal(b.now) || !got.LastSeen.Equal(b.now) || got.OperatorID != herald.OwnerID || got.AwaitingTOTP {
		t.Errorf("Session: got %+v, %v", got, err)
	}
	if op.ID != herald.OwnerID || op.Role != herald.RoleAdmin || !op.EveryApp() {
		t.Errorf("the owner's session: operator %+v, want the owner", op)
	}
	if _, _, err := b.s.Session(b.ctx, "never"); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("unknown session: got %v, want ErrNotFound", err)
	}
}

func testDeleteSession(t *testing.T, b *bundle) {
	must(t, "CreateSession", b.s.CreateSession(b.ctx, ownerSession("s1", b.now)))
	must(t, "DeleteSession", b.s.DeleteSession(b.ctx, "s1"))
	if _, _, err := b.s.Session(b.ctx, "s1"); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("after sign-out: got %v, want ErrNotFound", err)
	}
	must(t, "DeleteSession of an unknown session", b.s.DeleteSession(b.ctx, "s1"))
}

func testEndedSessionsForgotten(t *testing.T, b *bundle) {
	start := b.now
	must(t, "CreateSession", b.s.CreateSession(b.ctx, ownerSession("idle", start)))
	must(t, "CreateSession", b.s.CreateSession(b.ctx, ownerSession("old", start)))
	// "old" stays active, so only its age ends it.
	for at := start.Add(20 * time.Minute); at.Before(start.Add(herald.SessionLifetime)); at = at.Add(20 * time.Minute) {
		must(t, "TouchSession", b.s.TouchSession(b.ctx, "old", at, false))
	}
	b.setNow(start.Add(herald.SessionIdle))
	must(t, "CreateSession", b.s.CreateSession(b.ctx, ownerSession("new", b.now)))
	if _, _, err := b.s.Session(b.ctx, "idle"); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("idle session after a new one: got %v, want ErrNotFound (forgotten)", err)
	}
	if _, _, err := b.s.Session(b.ctx, "old"); err != nil {
		t.Errorf("active session: %v", err)
	}
	b.setNow(start.Add(herald.SessionLifetime))
	must(t, "CreateSession", b.s.CreateSession(b.ctx, ownerSession("newer", b.now)))
	if _, _, err := b.s.Session(b.ctx, "old"); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("a session 12 hours old after a new one: got %v, want ErrNotFound (forgotten)", err)
	}
}

func testTouchSession(t *testing.T, b *bundle) {
	op := newOperator(t, b, "touch@example.com", herald.RoleViewer)
	s := herald.Session{ID: "s1", OperatorID: op.ID, Started: b.now, LastSeen: b.now, AwaitingTOTP: true}
	must(t, "CreateSession", b.s.CreateSession(b.ctx, s))
	later := b.now.Add(5 * time.Minute)
	must(t, "TouchSession", b.s.TouchSession(b.ctx, "s1", later, false))
	got, gotOp, err := b.s.Session(b.ctx, "s1")
	if err != nil || !got.LastSeen.Equal(later) || !got.AwaitingTOTP || gotOp.ID != op.ID || !gotOp.LastSeenAt.Equal(later) {
		t.Errorf("after a touch: %+v %+v %v; want seen at %v, still awaiting TOTP", got, gotOp, err, later)
	}
	must(t, "TouchSession verified", b.s.TouchSession(b.ctx, "s1", later, true))
	if got, _, _ := b.s.Session(b.ctx, "s1"); got.AwaitingTOTP {
		t.Error("a verified touch left the session awaiting TOTP")
	}
	if err := b.s.TouchSession(b.ctx, "never", later, false); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("touching an unknown session: got %v, want ErrNotFound", err)
	}
}

func testSessionOfDisabledOperator(t *testing.T, b *bundle) {
	op := newOperator(t, b, "gone@example.com", herald.RoleOperator)
	must(t, "CreateSession", b.s.CreateSession(b.ctx, herald.Session{ID: "s1", OperatorID: op.ID, Started: b.now, LastSeen: b.now}))
	disabled := true
	if _, err := b.s.UpdateOperator(b.ctx, op.ID, herald.OperatorChange{Disabled: &disabled}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.s.Session(b.ctx, "s1"); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("the session of a disabled operator: got %v, want ErrNotFound", err)
	}
}

func testSignInFailures(t *testing.T, b *bundle) {
	start := b.now
	for i := range 3 {
		must(t, "SignInFailed", b.s.SignInFailed(b.ctx, []string{"addr:1", "email:a"}, start.Add(time.Duration(i)*time.Minute), start.Add(-time.Hour)))
	}
	n, oldest, err := b.s.SignInFailures(b.ctx, "addr:1", start)
	if err != nil || n != 3 || !oldest.Equal(start) {
		t.Errorf("SignInFailures: %d, %v, %v; want 3 since %v", n, oldest, err, start)
	}
	if n, _, _ := b.s.SignInFailures(b.ctx, "email:a", start.Add(time.Minute)); n != 2 {
		t.Errorf("failures since the second: %d, want 2", n)
	}
	if n, oldest, err := b.s.SignInFailures(b.ctx, "addr:2", start); err != nil || n != 0 || !oldest.IsZero() {
		t.Errorf("a key that never failed: %d, %v, %v", n, oldest, err)
	}
	// A later failure forgets those before its forget time.
	must(t, "SignInFailed", b.s.SignInFailed(b.ctx, []string{"addr:2"}, start.Add(time.Hour), start.Add(90*time.Second)))
	if n, _, _ := b.s.SignInFailures(b.ctx, "addr:1", start); n != 1 {
		t.Errorf("after forgetting: %d failures of addr:1, want 1", n)
	}
}
