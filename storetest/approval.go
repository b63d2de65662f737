package storetest

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/heraldpush/herald"
)

var approvalTests = []test{
	{"Approval/AcceptedUncharged", testApprovalAccepted},
	{"Approval/ApproveCharges", testApprovalApprove},
	{"Approval/ApproveScheduledKeepsTime", testApprovalScheduled},
	{"Approval/RejectUncharged", testApprovalReject},
	{"Approval/LapseAfterWindow", testApprovalLapse},
	{"Approval/CancelUncharged", testApprovalCancel},
	{"Approval/NeverTheComposer", testApprovalComposer},
	{"Approval/OneDecision", testApprovalRace},
}

// The approval's jobs, as delivery names them for the store: the lapse
// (the push's own job) and the webhook message.
func lapseJob(pushID string) job     { return job{"storetest.lapse." + pushID} }
func approvalHook(pushID string) job { return job{"storetest.approval_webhook." + pushID} }

// awaiting accepts a push to users that waits for approval, as
// herald.NewPush makes it for an app whose setting takes it, composed by
// composer ("" for the Server API), scheduled at at when given.
func (b *bundle) awaiting(composer string, at *time.Time, users ...string) herald.Push {
	b.t.Helper()
	app := b.app
	app.Approval = herald.ApprovalSetting{Mode: herald.ApprovalAll}
	req := herald.PushRequest{Kind: herald.KindUsers, Content: herald.Content{Title: "title", Content: "content"}, ScheduledAt: at}
	for _, u := range users {
		req.Recipients = append(req.Recipients, herald.Recipient{UserID: u})
	}
	p, err := herald.NewPush(app, req, b.now)
	must(b.t, "NewPush", err)
	if p.Status != herald.StatusAwaitingApproval || p.ServerActionsHalf != 0 || p.Ledger != nil {
		b.t.Fatalf("NewPush: got %s charged %d (ledger %v), want awaiting_approval uncharged", p.Status, p.ServerActionsHalf, p.Ledger)
	}
	p.SetComposer(composer)
	id, replayed, err := b.s.AcceptPush(b.ctx, p, req.Recipients, nil, lapseJob(p.ID), approvalHook(p.ID))
	if err != nil || replayed || id != p.ID {
		b.t.Fatalf("AcceptPush: got (%s, %v, %v), want (%s, false, nil)", id, replayed, err, p.ID)
	}
	return p
}

// decide approves (approve) or rejects p by by at the bundle's clock.
func (b *bundle) decide(p herald.Push, approve bool, by string) (herald.Push, error) {
	app := b.app
	st := herald.PushStep{Kind: herald.StepReject, At: b.now, By: by, Reason: "why"}
	if approve {
		st = herald.PushStep{Kind: herald.StepApprove, At: b.now, By: by, App: &app, Job: fanoutJob(p.ID)}
	}
	got, _, err := b.s.StepPush(b.ctx, p.ID, st)
	return got, err
}

// wantStates fails unless the jobs of kind are in states, oldest first.
func (b *bundle) wantStates(kind string, states ...string) {
	b.t.Helper()
	got := b.jobs(kind)
	if len(got) != len(states) {
		b.t.Errorf("jobs %s: got %v, want %v", kind, got, states)
		return
	}
	for i := range got {
		if (states[i] == "cancelled") != (got[i] == "cancelled") {
			b.t.Errorf("jobs %s: got %v, want %v (cancelled or not)", kind, got, states)
		}
	}
}

func testApprovalAccepted(t *testing.T, b *bundle) {
	p := b.awaiting("op_a", nil, "u1", "u2")
	got := b.pushOf(p.ID)
	if got.Status != herald.StatusAwaitingApproval || got.ServerActionsHalf != 0 || len(got.Approvals) != 1 ||
		got.Approvals[0].Action != herald.ApprovalRequested || got.Approvals[0].By != "op_a" || !got.Approvals[0].At.Equal(b.now) {
		t.Errorf("got %s charged %d, approvals %+v; want awaiting_approval, uncharged, requested by op_a now", got.Status, got.ServerActionsHalf, got.Approvals)
	}
	if half := b.usageOn(b.app.ID, today); half != 0 {
		t.Errorf("usage: got %d, want 0 until approved", half)
	}
	b.wantStates(lapseJob(p.ID).Kind(), "scheduled")
	b.wantStates(approvalHook(p.ID).Kind(), "available")
	ps, _, err := b.s.Pushes(b.ctx, b.app.ID, herald.PushFilter{Status: herald.StatusAwaitingApproval, Limit: 10})
	if must(t, "Pushes", err); len(ps) != 1 || ps[0].ID != p.ID || len(ps[0].Approvals) != 1 {
		t.Errorf("pushes awaiting approval: got %+v, want the one", ps)
	}
}

func testApprovalApprove(t *testing.T, b *bundle) {
	p := b.awaiting("op_a", nil, "u1", "u2")
	b.tick(time.Minute)
	got, err := b.decide(p, true, "op_b")
	must(t, "approve", err)
	if got.Status != herald.StatusSending || got.ServerActionsHalf != 2*herald.HalfPerUser {
		t.Errorf("approved: got %s charged %d, want sending charged %d", got.Status, got.ServerActionsHalf, 2*herald.HalfPerUser)
	}
	rec := b.pushOf(p.ID)
	if n := len(rec.Approvals); n != 2 || rec.Approvals[1].Action != herald.ApprovalApproved || rec.Approvals[1].By != "op_b" || !rec.Approvals[1].At.Equal(b.now) {
		t.Errorf("approvals: got %+v, want the request, then approved by op_b now", rec.Approvals)
	}
	if half := b.usageOn(b.app.ID, today); half != 2*herald.HalfPerUser {
		t.Errorf("usage: got %d, want %d, charged at the approval", half, 2*herald.HalfPerUser)
	}
	b.wantStates(lapseJob(p.ID).Kind(), "cancelled")
	b.wantStates(fanoutJob(p.ID).Kind(), "available")
	if _, err := b.decide(p, false, "op_c"); !errors.Is(err, herald.ErrNotAwaitingApproval) {
		t.Errorf("reject after the approval: got %v, want ErrNotAwaitingApproval", err)
	}
}

func testApprovalScheduled(t *testing.T, b *bundle) {
	p := b.awaiting("", &sendAt, "u1")
	got, err := b.decide(p, true, "op_b")
	must(t, "approve", err)
	if got.Status != herald.StatusScheduled || got.ScheduledAt == nil || !got.ScheduledAt.Equal(sendAt) {
		t.Errorf("approved: got %s at %v, want scheduled at %v", got.Status, got.ScheduledAt, sendAt)
	}
}

func testApprovalReject(t *testing.T, b *bundle) {
	p := b.awaiting("op_a", nil, "u1")
	got, err := b.decide(p, false, "op_b")
	must(t, "reject", err)
	rec := b.pushOf(p.ID)
	if got.Status != herald.StatusRejected || rec.Status != herald.StatusRejected || rec.FinishedAt == nil ||
		len(rec.Approvals) != 2 || rec.Approvals[1].Reason != "why" {
		t.Errorf("rejected: got %s (stored %+v), want rejected, finished, with its reason", got.Status, rec)
	}
	if half := b.usageOn(b.app.ID, today); half != 0 {
		t.Errorf("usage: got %d, want 0", half)
	}
	b.wantStates(lapseJob(p.ID).Kind(), "cancelled")
	if _, err := b.decide(p, true, "op_c"); !errors.Is(err, herald.ErrNotAwaitingApproval) {
		t.Errorf("approve after the rejection: got %v, want ErrNotAwaitingApproval", err)
	}
}

func testApprovalLapse(t *testing.T, b *bundle) {
	p := b.awaiting("op_a", nil, "u1")
	lapse := herald.PushStep{Kind: herald.StepApprovalExpiry, At: p.ApprovalDeadline().Add(-time.Millisecond)}
	if _, _, err := b.s.StepPush(b.ctx, p.ID, lapse); !errors.Is(err, herald.ErrApprovalOpen) {
		t.Errorf("lapse before the window ends: got %v, want ErrApprovalOpen", err)
	}
	b.setNow(p.ApprovalDeadline())
	if _, err := b.decide(p, true, "op_b"); !errors.Is(err, herald.ErrNotAwaitingApproval) {
		t.Errorf("approve as the window ends: got %v, want ErrNotAwaitingApproval", err)
	}
	lapse.At = p.ApprovalDeadline()
	got, _, err := b.s.StepPush(b.ctx, p.ID, lapse)
	must(t, "lapse", err)
	if got.Status != herald.StatusApprovalExpired || b.pushOf(p.ID).Status != herald.StatusApprovalExpired {
		t.Errorf("lapsed: got %s, want approval_expired", got.Status)
	}
	if _, _, err := b.s.StepPush(b.ctx, p.ID, lapse); !errors.Is(err, herald.ErrBadStep) {
		t.Errorf("lapse again: got %v, want ErrBadStep", err)
	}
	if half := b.usageOn(b.app.ID, today); half != 0 {
		t.Errorf("usage: got %d, want 0", half)
	}
}

func testApprovalCancel(t *testing.T, b *bundle) {
	p := b.awaiting("op_a", &sendAt, "u1")
	got, err := b.cancel(p.ID)
	must(t, "cancel", err)
	if got.Status != herald.StatusCancelled {
		t.Errorf("cancelled: got %s, want cancelled", got.Status)
	}
	b.wantStates(lapseJob(p.ID).Kind(), "cancelled")
	if half := b.usageOn(b.app.ID, today); half != 0 {
		t.Errorf("usage: got %d, want 0", half)
	}
}

func testApprovalComposer(t *testing.T, b *bundle) {
	p := b.awaiting("op_a", nil, "u1")
	for _, approve := range []bool{true, false} {
		if _, err := b.decide(p, approve, "op_a"); !errors.Is(err, herald.ErrForbidden) {
			t.Errorf("decided (approve %v) by its composer: got %v, want ErrForbidden", approve, err)
		}
	}
	if st := b.pushOf(p.ID).Status; st != herald.StatusAwaitingApproval {
		t.Errorf("after the composer's refusals: got %s, want awaiting_approval", st)
	}
	own := b.awaiting(herald.OwnerID, nil, "u1")
	if _, err := b.decide(own, true, herald.OwnerID); err != nil {
		t.Errorf("the owner approving a push the owner composed: got %v, want allowed", err)
	}
}

// testApprovalRace: approvals, rejections, cancels and lapses of one push
// released at once: exactly one wins, the push ends as the winner left
// it, and it is charged exactly when an approval won.
func testApprovalRace(t *testing.T, b *bundle) {
	p := b.awaiting("op_a", nil, "u1", "u2", "u3")
	var approved, rejected, cancelled, lapsed atomic.Int32
	var failed errs
	app := b.app
	concurrently(4*writers, func(i int) {
		var err error
		var won *atomic.Int32
		switch i % 4 {
		case 0:
			_, _, err = b.s.StepPush(b.ctx, p.ID, herald.PushStep{Kind: herald.StepApprove, At: b.now, By: "op_" + itoa(i), App: &app, Job: fanoutJob(p.ID)})
			won = &approved
		case 1:
			_, _, err = b.s.StepPush(b.ctx, p.ID, herald.PushStep{Kind: herald.StepReject, At: b.now, By: "op_" + itoa(i), Reason: "no"})
			won = &rejected
		case 2:
			_, err = b.cancel(p.ID)
			won = &cancelled
		default: // a lapse whose node reads the window's end
			_, _, err = b.s.StepPush(b.ctx, p.ID, herald.PushStep{Kind: herald.StepApprovalExpiry, At: p.ApprovalDeadline()})
			won = &lapsed
		}
		switch {
		case err == nil:
			won.Add(1)
		case !errors.Is(err, herald.ErrNotAwaitingApproval) && !errors.Is(err, herald.ErrBadStep) && !errors.Is(err, herald.ErrScheduleLocked):
			failed.add(err)
		}
	})
	failed.report(t, "decide, cancel or lapse")
	a, r, c, l := approved.Load(), rejected.Load(), cancelled.Load(), lapsed.Load()
	if a+r+c+l != 1 {
		t.Fatalf("winners: got %d approved, %d rejected, %d cancelled, %d lapsed; want exactly one in all", a, r, c, l)
	}
	rec := b.pushOf(p.ID)
	want, charged := herald.StatusApprovalExpired, int64(0)
	switch {
	case a == 1:
		want, charged = herald.StatusSending, 3*herald.HalfPerUser
	case r == 1:
		want = herald.StatusRejected
	case c == 1:
		want = herald.StatusCancelled
	}
	if rec.Status != want || len(rec.Approvals) > 2 {
		t.Errorf("push: got %s with approvals %+v, want %s with at most the winner's step", rec.Status, rec.Approvals, want)
	}
	if half := b.usageOn(b.app.ID, today); half != charged {
		t.Errorf("usage: got %d, want %d", half, charged)
	}
	if jobs := b.jobs(fanoutJob(p.ID).Kind()); len(jobs) != int(a) {
		t.Errorf("fan-out jobs: got %v, want %d (one per approval taken)", jobs, a)
	}
}
