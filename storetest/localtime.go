package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sendstore"
)

// The local-time subtests (herald.Push.LocalTime): a push's zone parts,
// its nextLocalAt and lateLocal, kept apart from the night's deferred
// part.
var localTimeTests = []test{
	{"StartSending/ZoneParts", testZoneParts},
}

// testZoneParts: a local-time push fanned out with d1 sent at once, late,
// d2 in a zone part at the morning and d3 in a later one keeps its flag
// and wall time, shows lateLocal and its next zone part's time moving on
// as each part completes, and none of it as deferred to the morning nor
// cancellable as such.
func testZoneParts(t *testing.T, b *bundle) {
	d1, d2, d3 := b.register("d1", "t1", "u1"), b.register("d2", "t2", "u2"), b.register("d3", "t3", "u3")
	p, rs := b.newPush("u1", "u2", "u3")
	start := b.now
	p.LocalTime, p.ScheduledAt = true, &start
	b.accept(p, rs)
	ds := plan([]herald.Device{d1, d2, d3}, 10)
	ds[1].Chunk, ds[2].Chunk = 1, 2
	f := fanout(p.ID, ds)
	later := morning.Add(3 * time.Hour)
	f.Deferred = []sendstore.DeferredChunk{{Chunk: 1, Until: morning, ZonePart: true}, {Chunk: 2, Until: later, ZonePart: true}}
	f.LateLocal = 1
	b.start(p.ID, f)

	got := b.pushOf(p.ID)
	if !got.LocalTime || !got.LocalWall().Equal(start) || got.Counts.LateLocal != 1 || got.NextLocalAt == nil || !got.NextLocalAt.Equal(morning) ||
		got.Counts.DeferredNight != 0 || got.DeferredUntil != nil {
		t.Fatalf("after the fan-out: got local %v, lateLocal %d, next %v, deferred %d until %v; want local, 1 late, next %v, nothing deferred",
			got.LocalTime, got.Counts.LateLocal, got.NextLocalAt, got.Counts.DeferredNight, got.DeferredUntil, morning)
	}
	if _, _, err := b.s.StepPush(b.ctx, p.ID, herald.PushStep{Kind: herald.StepCancel, At: b.now, Job: finishJob(p.ID)}); !errors.Is(err, herald.ErrScheduleLocked) {
		t.Errorf("cancel of a sending local-time push: got %v, want ErrScheduleLocked", err)
	}
	w, err := b.s.ResumeChunk(b.ctx, p.ID, 1)
	if err != nil || len(w.Slots) != 1 || w.Slots[0].DeviceID != "d2" {
		t.Fatalf("zone part 1: got (%+v, %v), want d2 to send", w, err)
	}
	b.advance(p.ID, sendstore.ChunkStep{Chunk: 1, New: rng(0, 1), Targets: slotTargets(0, w.Slots...)}, 1)
	b.advance(p.ID, sendstore.ChunkStep{Chunk: 1, Old: rng(0, 1), New: rng(1, 1)}, 1)
	b.complete(p.ID, 1, false)
	if got := b.pushOf(p.ID); got.NextLocalAt == nil || !got.NextLocalAt.Equal(later) {
		t.Errorf("after the first zone part: next %v, want %v", got.NextLocalAt, later)
	}
	if other := b.acceptUsers("u1"); b.pushOf(other.ID).LocalTime || b.pushOf(other.ID).Counts.LateLocal != 0 {
		t.Errorf("a push without the option: got %+v", b.pushOf(other.ID))
	}
}
