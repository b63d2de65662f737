package herald_test

import (
	"errors"
	"testing"
	"time"

	"github.com/heraldpush/herald"
)

func TestParseNightPolicy(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want herald.NightPolicy
		ok   bool
	}{{"skip", herald.NightSkip, true}, {"defer", herald.NightDefer, true}, {"", "", false}, {"Defer", "", false}, {"later", "", false}} {
		got, ok := herald.ParseNightPolicy(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%q: got %q %v, want %q %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestJudgeNight is the fan-out's decision for one device: around 21:00
// and 08:00 in Asia/Seoul (UTC+9) and America/New_York (UTC-5 in January),
// for every consent pair, marketing or not, skip or defer.
func TestJudgeNight(t *testing.T) {
	t.Parallel()
	seoul, _ := time.LoadLocation("Asia/Seoul")
	ny, _ := time.LoadLocation("America/New_York")
	all := herald.Consent{Marketing: true, MarketingNight: true}
	day := herald.Consent{Marketing: true}
	none := herald.Consent{}
	times := []struct {
		name  string
		at    time.Time
		loc   *time.Location
		night bool
	}{
		{"Seoul 20:59:59", time.Date(2027, 1, 5, 20, 59, 59, 0, seoul), seoul, false},
		{"Seoul 21:00", time.Date(2027, 1, 5, 21, 0, 0, 0, seoul), seoul, true},
		{"Seoul 07:59:59", time.Date(2027, 1, 6, 7, 59, 59, 0, seoul), seoul, true},
		{"Seoul 08:00", time.Date(2027, 1, 6, 8, 0, 0, 0, seoul), seoul, false},
		// 12:30 UTC is 21:30 in Seoul and 07:30 in New York: night in both.
		{"New York 07:30", time.Date(2027, 1, 6, 12, 30, 0, 0, time.UTC), ny, true},
		{"New York 08:00", time.Date(2027, 1, 6, 13, 0, 0, 0, time.UTC), ny, false},
		{"New York 20:59", time.Date(2027, 1, 7, 1, 59, 0, 0, time.UTC), ny, false},
		{"New York 21:00", time.Date(2027, 1, 7, 2, 0, 0, 0, time.UTC), ny, true},
	}
	for _, tm := range times {
		night := herald.IsNight(tm.at, tm.loc)
		if night != tm.night {
			t.Fatalf("%s: IsNight %v, want %v", tm.name, night, tm.night)
		}
		for _, tc := range []struct {
			marketing bool
			c         herald.Consent
			policy    herald.NightPolicy
			atNight   herald.Night // the outcome in the night; by day a marketing device with consent is sent
		}{
			{true, all, herald.NightDefer, herald.SendNow},
			{true, day, herald.NightDefer, herald.DeferToMorning},
			{true, day, herald.NightSkip, herald.SuppressNight},
			{true, day, "", herald.SuppressNight},
			{true, none, herald.NightDefer, herald.SuppressConsent},
			{true, none, herald.NightSkip, herald.SuppressConsent},
			{false, none, herald.NightDefer, herald.SendNow},
			{false, day, herald.NightDefer, herald.SendNow},
		} {
			want := tc.atNight
			if !night && want == herald.DeferToMorning || !night && want == herald.SuppressNight {
				want = herald.SendNow
			}
			if got := herald.JudgeNight(tc.marketing, tc.c, night, tc.policy); got != want {
				t.Errorf("%s, marketing %v, consent %+v, policy %q: got %v, want %v", tm.name, tc.marketing, tc.c, tc.policy, got, want)
			}
		}
	}
}

func TestNextMorning(t *testing.T) {
	t.Parallel()
	seoul, _ := time.LoadLocation("Asia/Seoul")
	ny, _ := time.LoadLocation("America/New_York")
	for _, tc := range []struct {
		at   time.Time
		loc  *time.Location
		want time.Time
	}{
		{time.Date(2027, 1, 5, 21, 0, 0, 0, seoul), seoul, time.Date(2027, 1, 6, 8, 0, 0, 0, seoul)},
		{time.Date(2027, 1, 5, 23, 59, 59, 0, seoul), seoul, time.Date(2027, 1, 6, 8, 0, 0, 0, seoul)},
		{time.Date(2027, 1, 6, 0, 0, 0, 0, seoul), seoul, time.Date(2027, 1, 6, 8, 0, 0, 0, seoul)},
		{time.Date(2027, 1, 6, 7, 59, 59, 0, seoul), seoul, time.Date(2027, 1, 6, 8, 0, 0, 0, seoul)},
		{time.Date(2027, 1, 6, 8, 0, 0, 0, seoul), seoul, time.Date(2027, 1, 6, 8, 0, 0, 0, seoul)},
		{time.Date(2027, 1, 6, 8, 0, 1, 0, seoul), seoul, time.Date(2027, 1, 7, 8, 0, 0, 0, seoul)},
		// Asked in UTC, answered for the app's zone.
		{time.Date(2027, 1, 6, 12, 30, 0, 0, time.UTC), ny, time.Date(2027, 1, 6, 8, 0, 0, 0, ny)},
		{time.Date(2027, 1, 7, 2, 0, 0, 0, time.UTC), ny, time.Date(2027, 1, 7, 8, 0, 0, 0, ny)},
		// The night of a DST change: 2027-03-14 02:00 EST -> 03:00 EDT.
		{time.Date(2027, 3, 13, 22, 0, 0, 0, ny), ny, time.Date(2027, 3, 14, 8, 0, 0, 0, ny)},
	} {
		if got := herald.NextMorning(tc.at, tc.loc); !got.Equal(tc.want) {
			t.Errorf("%v in %v: got %v, want %v", tc.at, tc.loc, got, tc.want)
		}
	}
}

func TestCheckDeferCancel(t *testing.T) {
	t.Parallel()
	until := time.Date(2027, 1, 6, 8, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		before time.Duration
		locked bool
	}{{10 * time.Hour, false}, {5 * time.Minute, false}, {5*time.Minute - time.Millisecond, true}, {0, true}, {-time.Minute, true}} {
		err := herald.CheckDeferCancel(until, until.Add(-tc.before))
		if errors.Is(err, herald.ErrScheduleLocked) != tc.locked {
			t.Errorf("%v before: got %v, want locked %v", tc.before, err, tc.locked)
		}
	}
}

func TestDeferRefund(t *testing.T) {
	t.Parallel()
	at := time.Date(2027, 1, 6, 1, 0, 0, 0, time.UTC)
	charges := []herald.UsageEntry{{AppID: "a", PushID: "p", Day: "2027-01-05", Half: 3}, {AppID: "a", PushID: "p", Day: "2027-01-06", Half: 4}}
	got := herald.DeferRefund(charges, 5, at)
	if len(got) != 2 || got[0].Half != -3 || got[0].Day != "2027-01-05" || got[1].Half != -2 || got[1].Day != "2027-01-06" {
		t.Fatalf("got %+v, want -3 on 01-05 and -2 on 01-06", got)
	}
	if got := herald.DeferRefund(charges, 100, at); len(got) != 2 || got[0].Half+got[1].Half != -7 {
		t.Fatalf("over-refund: got %+v, want at most the charges", got)
	}
	if got := herald.DeferRefund(charges, 0, at); len(got) != 0 {
		t.Fatalf("nothing to refund: got %+v", got)
	}
}

// TestDeferRefundAfterRefund: a second cancel, after later pages were
// charged on the next day, takes from what each day has left, not again
// from what the first cancel refunded.
func TestDeferRefundAfterRefund(t *testing.T) {
	t.Parallel()
	at := time.Date(2027, 1, 6, 1, 0, 0, 0, time.UTC)
	ledger := []herald.UsageEntry{
		{AppID: "a", PushID: "p", Day: "2027-01-05", Half: 10},
		{AppID: "a", PushID: "p", Day: "2027-01-05", Half: -4}, // the first cancel
		{AppID: "a", PushID: "p", Day: "2027-01-06", Half: 6},  // a later page, after midnight
	}
	got := herald.DeferRefund(ledger, 8, at)
	net := map[string]int64{}
	for _, e := range append(ledger, got...) {
		net[e.Day] += e.Half
	}
	if net["2027-01-05"] != 0 || net["2027-01-06"] != 4 || len(got) != 2 {
		t.Fatalf("got %+v, net %v; want 6 from 01-05 (what it has left) and 2 from 01-06", got, net)
	}
	if got := herald.DeferRefund(ledger, 100, at); len(got) != 2 || got[0].Half+got[1].Half != -12 {
		t.Fatalf("over-refund: got %+v, want at most the 12 left", got)
	}
}
