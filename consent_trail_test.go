package herald

import (
	"testing"
	"time"
)

func TestConsentDueAt(t *testing.T) {
	t.Parallel()
	seoul := time.FixedZone("KST", 9*3600)
	tests := []struct {
		name      string
		confirmed time.Time
		loc       *time.Location
		want      time.Time
	}{
		{"TwoCalendarYears", time.Date(2025, 6, 11, 13, 4, 30, 0, time.UTC), time.UTC, time.Date(2027, 6, 11, 13, 4, 30, 0, time.UTC)},
		{"LeapDayIsDueOnFirstOfMarch", time.Date(2024, 2, 29, 12, 0, 0, 0, time.UTC), time.UTC, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)},
		// 29 February 20:00 UTC is 1 March 05:00 in Seoul: the app's
		// calendar decides.
		{"AppCalendar", time.Date(2024, 2, 29, 20, 0, 0, 0, time.UTC), seoul, time.Date(2026, 2, 28, 20, 0, 0, 0, time.UTC)},
		{"UTCCalendar", time.Date(2024, 2, 29, 20, 0, 0, 0, time.UTC), time.UTC, time.Date(2026, 3, 1, 20, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		if got := ConsentDueAt(tt.confirmed, tt.loc); !got.Equal(tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestReconfirmationDueBy(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	confirmed := time.Date(2024, 3, 20, 10, 0, 0, 0, time.UTC) // due 2026-03-20
	tests := []struct {
		name  string
		lead  int
		want  time.Time
		isDue bool
	}{
		{"DefaultLead", 0, now.AddDate(0, 0, DefaultLeadDays), true},
		{"ShortLead", 7, now.AddDate(0, 0, 7), false},
		{"LeadReachesDueDay", 19, now.AddDate(0, 0, 19), true},
		{"LeadEndsBeforeIt", 18, now.AddDate(0, 0, 18), false},
	}
	for _, tt := range tests {
		got := Reconfirmation{LeadDays: tt.lead}.DueBy(now)
		if !got.Equal(tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
		if due := !ConsentDueAt(confirmed, time.UTC).After(got); due != tt.isDue {
			t.Errorf("%s: due by %v: got %v, want %v", tt.name, got, due, tt.isDue)
		}
	}
}

func TestParseDueWithin(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     string
		want   time.Duration
		reason bool
	}{
		{"", 0, false},
		{"0d", 0, false},
		{"30d", 30 * 24 * time.Hour, false},
		{"3660d", 3660 * 24 * time.Hour, false},
		{"3661d", 0, true},
		{"30", 0, true},
		{"-1d", 0, true},
		{"1.5d", 0, true},
		{"30h", 0, true},
		{"12345d", 0, true},
	}
	for _, tt := range tests {
		got, reason := ParseDueWithin(tt.in)
		if got != tt.want || (reason != "") != tt.reason {
			t.Errorf("ParseDueWithin(%q): got %v, %q; want %v, a reason %v", tt.in, got, reason, tt.want, tt.reason)
		}
	}
}

func TestConsentRecords(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 6, 11, 0, 0, 0, 0, time.UTC)
	on, off := Consent{Marketing: true}, Consent{}
	if r := ConsentDecision(SourceSDK, on, on, at); !r.Notify || !r.Confirms || r.Source != SourceSDK {
		t.Errorf("decision setting the same pair again: got %+v, want it to notify and confirm", r)
	}
	if r := ConsentDecision(SourceServerAPI, on, off, at); !r.Notify || r.Confirms {
		t.Errorf("decision refusing: got %+v, want it to notify, not confirm", r)
	}
	if _, ok := ConsentDefaulted(off, at); ok {
		t.Error("default without consent: got a record, want none")
	}
	if r, ok := ConsentDefaulted(on, at); !ok || r.Notify || !r.Confirms || r.Source != SourceAppDefault || r.From != off {
		t.Errorf("default with consent: got %+v %v, want a record that confirms without notifying", r, ok)
	}
	if _, ok := ConsentAdopted(SourceSDK, on, on, at); ok {
		t.Error("adopting the pair it has: got a record, want none")
	}
	if r, ok := ConsentAdopted(SourceAdmin, off, on, at); !ok || r.Notify || r.Confirms || r.Source != SourceAdmin {
		t.Errorf("adopting: got %+v %v, want a record that neither notifies nor confirms", r, ok)
	}
	if r := ConsentWithdrawn(off, at); !r.Notify || r.Confirms || r.To != off || r.Source != SourceWithdrawal {
		t.Errorf("withdrawal: got %+v, want a notified reset", r)
	}
}
