package herald

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestRequestGroupIDProblem(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in string
		ok bool
	}{
		{"abcd", false},
		{"abcde", true},
		{"a1234", true},
		{strings.Repeat("a", 20), true},
		{strings.Repeat("a", 21), false},
		{"12345", false},
		{"!@#$%", false},
		{"ab-c_d.e~f", true},
		{"abc'd", false},
		{`abc"d`, false},
		{`abc\d`, false},
		{"abc`d", false},
		{"abc d", false},
		{"가나다라마", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := RequestGroupIDProblem(tt.in) == ""; got != tt.ok {
			t.Errorf("RequestGroupIDProblem(%q) ok: got %v, want %v", tt.in, got, tt.ok)
		}
	}
}

func TestParseScheduleTime(t *testing.T) {
	t.Parallel()
	seoul, _ := time.LoadLocation("Asia/Seoul")
	ny, _ := time.LoadLocation("America/New_York")
	received := time.Date(2026, 12, 1, 22, 4, 30, 0, seoul)
	tests := []struct {
		name string
		in   string
		loc  *time.Location
		at   time.Time
		ok   bool
	}{
		{"SpecRefused", "2026-12-01T22:05", seoul, received, false},
		{"SpecAccepted", "2026-12-01T22:06", seoul, received, true},
		{"Exactly60s", "2026-12-01T22:06", seoul, time.Date(2026, 12, 1, 22, 5, 0, 0, seoul), true},
		{"Just under 60s", "2026-12-01T22:06", seoul, time.Date(2026, 12, 1, 22, 5, 0, 1, seoul), false},
		{"February30", "2027-02-30T10:00", seoul, received, false},
		{"Hour24", "2027-01-01T24:00", seoul, received, false},
		{"Seconds", "2027-01-01T10:00:00", seoul, received, false},
		{"Space", "2027-01-01 10:00", seoul, received, false},
		{"DSTGap", "2027-03-14T02:30", ny, received, false},
		{"DSTOverlap", "2027-11-07T01:30", ny, received, true},
		{"PastYear", "2025-01-01T10:00", seoul, received, false},
		{"BeyondHorizon", "2028-01-01T10:00", seoul, received, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, reason := ParseScheduleTime(tt.in, tt.loc, tt.at)
			if got := reason == ""; got != tt.ok {
				t.Errorf("ParseScheduleTime(%q) ok: got %v (%s), want %v", tt.in, got, reason, tt.ok)
			}
		})
	}
}

func TestPushChangeApply(t *testing.T) {
	t.Parallel()
	sendAt := time.Date(2026, 12, 1, 23, 0, 0, 0, time.UTC)
	scheduled := func() Push {
		at := sendAt
		return Push{Status: StatusScheduled, ScheduledAt: &at, Content: Content{Title: "t", Content: "c"}}
	}
	title, later := "(광고) sale", sendAt.Add(time.Hour)
	t.Run("AtDeadline", func(t *testing.T) {
		p := scheduled()
		moved, err := PushChange{Title: &title, ScheduledAt: &later}.Apply(&p, sendAt.Add(-EditDeadline))
		if err != nil || !moved {
			t.Fatalf("got moved=%v err=%v, want moved and no error", moved, err)
		}
		if !p.Marketing || p.Content.Title != title || !p.ScheduledAt.Equal(later) || len(p.Edits) != 1 {
			t.Fatalf("got %+v, want the new title (marketing), time and one edit", p)
		}
	})
	t.Run("PastDeadline", func(t *testing.T) {
		p := scheduled()
		_, err := PushChange{Title: &title}.Apply(&p, sendAt.Add(-EditDeadline+time.Nanosecond))
		if !errors.Is(err, ErrScheduleLocked) {
			t.Fatalf("got %v, want ErrScheduleLocked", err)
		}
	})
	t.Run("NotScheduled", func(t *testing.T) {
		p := scheduled()
		p.Status = StatusCancelled
		if err := p.CheckEditable(sendAt.Add(-time.Hour)); !errors.Is(err, ErrScheduleLocked) {
			t.Fatalf("got %v, want ErrScheduleLocked", err)
		}
	})
}

func TestUnreachableUsers(t *testing.T) {
	t.Parallel()
	d := func(user string, state DeliveryState, reason string) Delivery {
		return Delivery{UserID: user, State: state, Reason: reason}
	}
	got := UnreachableUsers([]string{"none", "dead", "mixed", "quiet", "failed", "none"}, []Delivery{
		d("dead", DeliveryUndeliverable, ReasonAppDeleted),
		d("dead", DeliveryUndeliverable, ReasonTokenExpired),
		d("mixed", DeliveryUndeliverable, ReasonAppDeleted),
		d("mixed", DeliverySent, ""),
		d("quiet", DeliverySuppressedNight, ""),
		d("failed", DeliveryFailed, ""),
	})
	want := []Unreachable{{"none", ReasonNoToken}, {"dead", ReasonAppDeleted}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}
