package herald_test

import (
	"slices"
	"testing"
	"time"

	"github.com/heraldpush/herald"
)

func TestEventTimely(t *testing.T) {
	now := time.Date(2025, 6, 11, 13, 4, 30, 0, time.UTC)
	for _, c := range []struct {
		name string
		at   time.Time
		want bool
	}{
		{"Now", now, true},
		{"FiveMinutesAhead", now.Add(5 * time.Minute), true},
		{"JustPastFiveMinutesAhead", now.Add(5*time.Minute + time.Millisecond), false},
		{"ThirtyDaysOld", now.Add(-30 * 24 * time.Hour), true},
		{"JustOverThirtyDaysOld", now.Add(-30*24*time.Hour - time.Millisecond), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := (herald.Event{At: c.at}).Timely(now); got != c.want {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestPlanEvents(t *testing.T) {
	now := time.Date(2025, 6, 11, 13, 4, 30, 0, time.UTC)
	old := now.Add(-31 * 24 * time.Hour)
	events := []herald.Event{
		{PushID: "p1", Type: herald.EventOpened, At: now},
		{PushID: "p2", Type: herald.EventReceived, At: old},
		{PushID: "p2", Type: herald.EventReceived, At: now},
	}
	plan := herald.PlanEvents(events, now)
	want := []herald.EventMark{
		{PushID: "p1", Type: herald.EventReceived, At: now}, {PushID: "p1", Type: herald.EventOpened, At: now},
		{PushID: "p2", Type: herald.EventReceived, At: now},
	}
	if !slices.Equal(plan.Marks, want) {
		t.Fatalf("marks: got %+v, want %+v", plan.Marks, want)
	}
	// The opened event counts by its own mark, not its received one.
	if got := plan.Accepted([]bool{true, false, true}); !slices.Equal(got, []bool{false, false, true}) {
		t.Errorf("accepted: got %v, want [false false true]", got)
	}
	if got := plan.Accepted([]bool{false, true, false}); !slices.Equal(got, []bool{true, false, false}) {
		t.Errorf("accepted: got %v, want [true false false]", got)
	}
}
