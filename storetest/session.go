package storetest

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/identity"
)

var sessionTests = []test{
	{"CreateSession/Session", testSessionRoundTrip},
	{"DeleteSession", testDeleteSession},
	{"EndedForgotten", testEndedSessionsForgotten},
	{"TouchSession", testTouchSession},
	{"DisabledOperator", testSessionOfDisabledOperator},
	{"AttemptBurst", testAttemptBurst},
	{"TOTPStepOnce", testTOTPStepOnce},
}

func ownerSession(id string, at time.Time) identity.Session {
	return identity.Session{ID: id, OperatorID: herald.OwnerID, Started: at, LastSeen: at}
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
	for at := start.Add(20 * time.Minute); at.Before(start.Add(identity.SessionLifetime)); at = at.Add(20 * time.Minute) {
		must(t, "TouchSession", b.s.TouchSession(b.ctx, "old", at, false))
	}
	b.setNow(start.Add(identity.SessionIdle))
	must(t, "CreateSession", b.s.CreateSession(b.ctx, ownerSession("new", b.now)))
	if _, _, err := b.s.Session(b.ctx, "idle"); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("idle session after a new one: got %v, want ErrNotFound (forgotten)", err)
	}
	if _, _, err := b.s.Session(b.ctx, "old"); err != nil {
		t.Errorf("active session: %v", err)
	}
	b.setNow(start.Add(identity.SessionLifetime))
	must(t, "CreateSession", b.s.CreateSession(b.ctx, ownerSession("newer", b.now)))
	if _, _, err := b.s.Session(b.ctx, "old"); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("a session 12 hours old after a new one: got %v, want ErrNotFound (forgotten)", err)
	}
}

func testTouchSession(t *testing.T, b *bundle) {
	op := newOperator(t, b, "touch@example.com", herald.RoleViewer)
	s := identity.Session{ID: "s1", OperatorID: op.ID, Started: b.now, LastSeen: b.now, AwaitingTOTP: true}
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
	must(t, "CreateSession", b.s.CreateSession(b.ctx, identity.Session{ID: "s1", OperatorID: op.ID, Started: b.now, LastSeen: b.now}))
	disabled := true
	if _, err := b.s.UpdateOperator(b.ctx, op.ID, identity.OperatorChange{Disabled: &disabled}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.s.Session(b.ctx, "s1"); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("the session of a disabled operator: got %v, want ErrNotFound", err)
	}
}

// testAttemptBurst: a burst of attempts under one key, at once, gets
// exactly the limit admitted, whatever their interleaving (H1); a refused
// attempt is not counted under the keys that admitted it; a forgiven
// attempt frees its place; a window that ended starts again.
func testAttemptBurst(t *testing.T, b *bundle) {
	const burst = 60
	var wg sync.WaitGroup
	var e errs
	var admitted atomic.Int32
	start := make(chan struct{})
	for i := range burst {
		wg.Go(func() {
			<-start
			a, err := b.s.CountAttempt(b.ctx, []string{identity.TypedEmailKey("lee@example.com"), identity.AddressKey(fmt.Sprint("192.0.2.", i))},
				identity.AttemptLimit, b.now)
			e.add(err)
			if err == nil && !a.Refused() {
				admitted.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	e.report(t, "CountAttempt")
	if n := admitted.Load(); n != identity.AttemptLimit {
		t.Errorf("a burst of %d attempts: %d admitted, want %d", burst, n, identity.AttemptLimit)
	}
	a, err := b.s.CountAttempt(b.ctx, []string{identity.TypedEmailKey("LEE@example.com")}, identity.AttemptLimit, b.now.Add(time.Minute))
	if err != nil || !a.Refused() || a.Wait != identity.AttemptWindow-time.Minute {
		t.Errorf("the email after the burst: %+v, %v; want refused for 14m", a, err)
	}
	// Each address was refused with the email: none counted it.
	for i := range 3 {
		a, err := b.s.CountAttempt(b.ctx, []string{identity.AddressKey(fmt.Sprint("192.0.2.", i))}, identity.AttemptLimit, b.now)
		if err != nil || a.Refused() {
			t.Errorf("an address of the burst alone: %+v, %v; want admitted", a, err)
		}
	}
	// Forgiven attempts do not count.
	key := []string{identity.AddressKey("198.51.100.1")}
	for range identity.AttemptLimit + 5 {
		a, err := b.s.CountAttempt(b.ctx, key, identity.AttemptLimit, b.now)
		if err != nil || a.Refused() {
			t.Fatalf("a forgiven attempt's next: %+v, %v; want admitted", a, err)
		}
		must(t, "Forgive", b.s.Forgive(b.ctx, a))
	}
	// The window ends AttemptWindow after its first attempt.
	a, err = b.s.CountAttempt(b.ctx, []string{identity.TypedEmailKey("lee@example.com")}, identity.AttemptLimit, b.now.Add(identity.AttemptWindow))
	if err != nil || a.Refused() || !a.Windows[0].Equal(b.now.Add(identity.AttemptWindow).Truncate(time.Millisecond)) {
		t.Errorf("after the window: %+v, %v; want admitted in a new window", a, err)
	}
}

// testTOTPStepOnce: one TOTP step sent on many sessions at once signs in
// exactly one (H2); a used step stays used; a session whose wait ended
// does not spend a step.
func testTOTPStepOnce(t *testing.T, b *bundle) {
	o := herald.Operator{ID: "op_totp", Email: "totp@example.com", Name: "T", Role: herald.RoleViewer, CreatedAt: b.now}
	must(t, "CreateOperator", b.s.CreateOperator(b.ctx, o, identity.SetupLink{OperatorID: o.ID, TokenHash: identity.TokenHash("t"), Expires: b.now.Add(time.Hour)}))
	const sessions = 12
	for i := range sessions {
		must(t, "CreateSession", b.s.CreateSession(b.ctx, identity.Session{ID: fmt.Sprint("s", i), OperatorID: o.ID, Started: b.now, LastSeen: b.now, AwaitingTOTP: true}))
	}
	var wg sync.WaitGroup
	var e errs
	var used atomic.Int32
	start := make(chan struct{})
	for i := range sessions {
		wg.Go(func() {
			<-start
			ok, err := b.s.UseTOTPStep(b.ctx, fmt.Sprint("s", i), o.ID, 1000, b.now)
			e.add(err)
			if ok {
				used.Add(1)
			}
		})
	}
	close(start)
	wg.Wait()
	e.report(t, "UseTOTPStep")
	if n := used.Load(); n != 1 {
		t.Fatalf("one step on %d sessions at once: %d signed in, want 1", sessions, n)
	}
	waiting := 0
	for i := range sessions {
		sess, _, err := b.s.Session(b.ctx, fmt.Sprint("s", i))
		must(t, "Session", err)
		if sess.AwaitingTOTP {
			waiting++
		}
	}
	if waiting != sessions-1 {
		t.Errorf("sessions still waiting: %d, want %d", waiting, sessions-1)
	}
	// A session that signed in does not spend another step.
	var done string
	for i := range sessions {
		if sess, _, _ := b.s.Session(b.ctx, fmt.Sprint("s", i)); !sess.AwaitingTOTP {
			done = sess.ID
		}
	}
	if ok, err := b.s.UseTOTPStep(b.ctx, done, o.ID, 1001, b.now); err != nil || ok {
		t.Errorf("a step on a session that no longer waits: %t, %v; want false", ok, err)
	}
	if ok, err := b.s.UseTOTPStep(b.ctx, "s0", o.ID, 1001, b.now); err != nil || !ok && done != "s0" {
		t.Errorf("the step a refused use left unspent: %t, %v; want true", ok, err)
	}
}
