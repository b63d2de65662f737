package herald_test

import (
	"errors"
	"testing"
	"time"

	"github.com/heraldpush/herald"
)

func TestConsentChangeShape(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change herald.ConsentChange
		// wantField is the problem's field when the pair is the member
		// "state" (PATCH marketing); wantTop when the pair is the body
		// itself (the SDK's consent switch). "" when the shape is valid.
		wantField, wantTop string
	}{
		{"ATrue", herald.ConsentChange{Marketing: new(true)}, "", ""},
		{"ATrueNightTrue", herald.ConsentChange{Marketing: new(true), MarketingNight: new(true)}, "", ""},
		{"ATrueNightFalse", herald.ConsentChange{Marketing: new(true), MarketingNight: new(false)}, "", ""},
		{"BFalse", herald.ConsentChange{Marketing: new(false)}, "", ""},
		{"BFalseNightFalse", herald.ConsentChange{Marketing: new(false), MarketingNight: new(false)}, "", ""},
		{"CNightTrue", herald.ConsentChange{MarketingNight: new(true)}, "", ""},
		{"CNightFalse", herald.ConsentChange{MarketingNight: new(false)}, "", ""},
		{"ErrBothAbsent", herald.ConsentChange{}, "state", "body"},
		{"ErrFalseWithNightTrue", herald.ConsentChange{Marketing: new(false), MarketingNight: new(true)}, "state.marketingNight", "marketingNight"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for prefix, want := range map[string]string{"state": tt.wantField, "": tt.wantTop} {
				got := tt.change.Shape(prefix)
				switch {
				case want == "" && got != nil:
					t.Errorf("Shape(%q): got %+v, want no problem", prefix, got)
				case want != "" && (len(got) != 1 || got[0].Field != want || got[0].Reason == ""):
					t.Errorf("Shape(%q): got %+v, want one problem on %q", prefix, got, want)
				}
			}
		})
	}
}

func TestConsentChangeApply(t *testing.T) {
	t.Parallel()
	var (
		off     = herald.Consent{}
		day     = herald.Consent{Marketing: true}
		allDay  = herald.Consent{Marketing: true, MarketingNight: true}
		tr, fls = new(true), new(false)
	)
	tests := []struct {
		name    string
		cur     herald.Consent
		change  herald.ConsentChange
		want    herald.Consent
		wantErr bool
	}{
		{"ATrueKeepsNightOff", off, herald.ConsentChange{Marketing: tr}, day, false},
		{"ATrueKeepsNightOn", allDay, herald.ConsentChange{Marketing: tr}, allDay, false},
		{"ATrueNightTrue", off, herald.ConsentChange{Marketing: tr, MarketingNight: tr}, allDay, false},
		{"ATrueNightFalse", allDay, herald.ConsentChange{Marketing: tr, MarketingNight: fls}, day, false},
		{"BFalseTurnsNightOff", allDay, herald.ConsentChange{Marketing: fls}, off, false},
		{"BFalseNightFalse", allDay, herald.ConsentChange{Marketing: fls, MarketingNight: fls}, off, false},
		{"CNightTrueWithMarketing", day, herald.ConsentChange{MarketingNight: tr}, allDay, false},
		{"CNightFalse", allDay, herald.ConsentChange{MarketingNight: fls}, day, false},
		{"CNightFalseWithoutMarketing", off, herald.ConsentChange{MarketingNight: fls}, off, false},
		{"ErrCNightTrueWithoutMarketing", off, herald.ConsentChange{MarketingNight: tr}, off, true},
		{"ErrBothAbsent", day, herald.ConsentChange{}, day, true},
		{"ErrBFalseNightTrue", allDay, herald.ConsentChange{Marketing: fls, MarketingNight: tr}, allDay, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := tt.change.Apply(tt.cur, "state")
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if tt.wantErr {
				if !errors.Is(err, herald.ErrInvalidRequest) {
					t.Fatalf("error: got %v, want ERR-AB-VAL-00", err)
				}
				if e := herald.AsError(err); len(e.Details) == 0 {
					t.Errorf("details: got none, want the problem named")
				}
				return
			}
			if err != nil {
				t.Errorf("error: got %v, want nil", err)
			}
			if got.MarketingNight && !got.Marketing {
				t.Errorf("got %+v, which breaks the invariant night ⇒ marketing", got)
			}
		})
	}
}

func TestIsNight(t *testing.T) {
	t.Parallel()
	seoul, err := time.LoadLocation("Asia/Seoul")
	if err != nil {
		t.Fatal(err)
	}
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		loc  *time.Location
		at   time.Time
		want bool
	}{
		{"Seoul2059", seoul, time.Date(2025, 6, 11, 20, 59, 59, 999999999, seoul), false},
		{"Seoul2100", seoul, time.Date(2025, 6, 11, 21, 0, 0, 0, seoul), true},
		{"Seoul0000", seoul, time.Date(2025, 6, 12, 0, 0, 0, 0, seoul), true},
		{"Seoul0759", seoul, time.Date(2025, 6, 12, 7, 59, 59, 0, seoul), true},
		{"Seoul0800", seoul, time.Date(2025, 6, 12, 8, 0, 0, 0, seoul), false},
		{"Seoul1200", seoul, time.Date(2025, 6, 12, 12, 0, 0, 0, seoul), false},
		// The same instants read in UTC: the zone, not the instant's own
		// location, decides.
		{"Seoul2100GivenInUTC", seoul, time.Date(2025, 6, 11, 12, 0, 0, 0, time.UTC), true},
		{"Seoul0800GivenInUTC", seoul, time.Date(2025, 6, 11, 23, 0, 0, 0, time.UTC), false},
		// New York in summer (UTC-4) and winter (UTC-5).
		{"NewYork2059Summer", ny, time.Date(2025, 7, 1, 20, 59, 0, 0, ny), false},
		{"NewYork2100Summer", ny, time.Date(2025, 7, 1, 21, 0, 0, 0, ny), true},
		{"NewYork0759Winter", ny, time.Date(2025, 1, 15, 7, 59, 0, 0, ny), true},
		{"NewYork0800Winter", ny, time.Date(2025, 1, 15, 8, 0, 0, 0, ny), false},
		{"NewYork2100GivenInSeoul", ny, time.Date(2025, 7, 2, 10, 0, 0, 0, seoul), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := herald.IsNight(tt.at, tt.loc); got != tt.want {
				t.Errorf("IsNight(%s in %s): got %v, want %v", tt.at.In(tt.loc).Format(time.TimeOnly), tt.loc, got, tt.want)
			}
		})
	}
}

func TestSuppress(t *testing.T) {
	t.Parallel()
	var (
		off    = herald.Consent{}
		day    = herald.Consent{Marketing: true}
		allDay = herald.Consent{Marketing: true, MarketingNight: true}
	)
	tests := []struct {
		name      string
		marketing bool
		consent   herald.Consent
		night     bool
		want      herald.Suppression
	}{
		{"InfoNoConsentDay", false, off, false, herald.NotSuppressed},
		{"InfoNoConsentNight", false, off, true, herald.NotSuppressed},
		{"AdNoConsentDay", true, off, false, herald.SuppressedConsent},
		{"AdNoConsentNight", true, off, true, herald.SuppressedConsent},
		{"AdDayConsentDay", true, day, false, herald.NotSuppressed},
		{"AdDayConsentNight", true, day, true, herald.SuppressedNight},
		{"AdAllConsentNight", true, allDay, true, herald.NotSuppressed},
		{"AdAllConsentDay", true, allDay, false, herald.NotSuppressed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := herald.Suppress(tt.marketing, tt.consent, tt.night); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestIsMarketingTitle(t *testing.T) {
	t.Parallel()
	tests := map[string]bool{
		"(광고) 세일":   true,
		" (광고)세일":   true,
		"세일 (광고)":   false,
		"(광고":       false,
		"":          false,
		"(AD) sale": false,
	}
	for title, want := range tests {
		if got := herald.IsMarketingTitle(title); got != want {
			t.Errorf("IsMarketingTitle(%q): got %v, want %v", title, got, want)
		}
	}
}

func TestConsentChangeApplyTopLevelField(t *testing.T) {
	t.Parallel()
	_, err := herald.ConsentChange{MarketingNight: new(true)}.Apply(herald.Consent{}, "")
	e := herald.AsError(err)
	if e == nil || len(e.Details) != 1 || e.Details[0].Field != "marketingNight" {
		t.Errorf("got %v, want ERR-AB-VAL-00 on marketingNight", err)
	}
}
