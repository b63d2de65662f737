package storetest

import (
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
)

var exportTests = []test{
	{"UserPushes/OutcomeByChunk", testUserPushesOutcomes},
	{"UserPushes/Unreachable", testUserPushesUnreachable},
}

// outcomes returns each user's pushes as pushId → outcome.
func (b *bundle) outcomes(userID string) map[string]herald.Outcome {
	b.t.Helper()
	ps, err := b.s.UserPushes(b.ctx, b.app.ID, userID)
	must(b.t, "UserPushes", err)
	out := map[string]herald.Outcome{}
	for _, p := range ps {
		out[p.PushID] = p.Outcome
	}
	return out
}

// testUserPushesOutcomes: each user's outcome of a push is read from the
// chunks that hold the user's slots: sent, failed (a row), pending (not
// begun, or moved into a retry chunk), then sent from the retry chunk;
// the events the user's device reported come with it.
func testUserPushesOutcomes(t *testing.T, b *bundle) {
	p, ds := b.sending(4, 2) // chunk 0: u1 u2; chunk 1: u3 u4
	b.advance(p.ID, sendstore.ChunkStep{Chunk: 0, New: rng(0, 2), Targets: slotTargets(0, ds[:2]...)}, 2)
	retry := ds[1]
	retry.Attempts, retry.Error = 1, "UNAVAILABLE"
	b.advance(p.ID, sendstore.ChunkStep{Chunk: 0, Old: rng(0, 2), New: rng(2, 2), Retry: retryChunk(p.ID, retry)}, 2)
	b.advance(p.ID, sendstore.ChunkStep{Chunk: 1, New: rng(0, 2), Targets: slotTargets(0, ds[2:]...)}, 2)
	failed := ds[3]
	failed.State, failed.Error = herald.DeliveryFailed, "INVALID_ARGUMENT"
	b.advance(p.ID, sendstore.ChunkStep{Chunk: 1, Old: rng(0, 2), New: rng(2, 2), Rows: []herald.Delivery{failed}}, 2)
	b.tick(time.Second)
	b.record("d1", b.mark(p.ID, herald.EventReceived))

	for user, want := range map[string]herald.Outcome{"u1": herald.OutcomeSent, "u2": herald.OutcomePending,
		"u3": herald.OutcomeSent, "u4": herald.OutcomeFailed} {
		if got := b.outcomes(user); len(got) != 1 || got[p.ID] != want {
			t.Errorf("%s: got %v, want %s of %s", user, got, want, p.ID)
		}
	}
	b.sendChunk(p.ID, -1)
	if got := b.outcomes("u2"); got[p.ID] != herald.OutcomeSent {
		t.Errorf("u2 once its retry chunk sent: got %v, want sent", got)
	}
	ps, err := b.s.UserPushes(b.ctx, b.app.ID, "u1")
	must(t, "UserPushes", err)
	if len(ps) != 1 || ps[0].ReceivedAt == nil || !ps[0].ReceivedAt.Equal(b.now) || ps[0].OpenedAt != nil || ps[0].Title == nil {
		t.Errorf("u1: got %+v, want received at %v, not opened, with its title", ps, b.now)
	}
	if got := b.outcomes("nobody"); len(got) != 0 {
		t.Errorf("a user no push was meant for: got %v, want none", got)
	}
	other := b.app
	b.app = b.newApp("other")
	if got := b.outcomes("u1"); len(got) != 0 {
		t.Errorf("u1 of another app: got %v, want none", got)
	}
	b.app = other
}

// testUserPushesUnreachable: a user a push found no device of is listed
// unreachable, newest push first.
func testUserPushesUnreachable(t *testing.T, b *bundle) {
	old, _ := b.sent(1, 1) // u1 sent
	b.tick(time.Minute)
	p := b.acceptUsers("u1", "u9")
	if _, err := b.s.FinishPush(b.ctx, p.ID, []herald.Unreachable{{UserID: "u9", Reason: herald.ReasonNoToken}}, nil); err != nil {
		t.Fatal(err)
	}
	if got := b.outcomes("u9"); len(got) != 1 || got[p.ID] != herald.OutcomeUnreachable {
		t.Errorf("u9: got %v, want unreachable of %s", got, p.ID)
	}
	ps, err := b.s.UserPushes(b.ctx, b.app.ID, "u1")
	must(t, "UserPushes", err)
	if len(ps) != 1 || ps[0].PushID != old.ID {
		t.Errorf("u1: got %+v, want only %s (the second push never fanned out to it)", ps, old.ID)
	}
}
