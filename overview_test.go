package herald

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Skipf("no zone %s: %v", name, err)
	}
	return loc
}

// TestOverviewBucketsDays: a 7-day window touches 8 local days, the first
// and last in part; each quarter is summed into its local day, zeros
// elsewhere; a quarter outside the window's days counts nowhere.
func TestOverviewBucketsDays(t *testing.T) {
	seoul := zone(t, "Asia/Seoul")
	to := time.Date(2026, 12, 3, 14, 20, 0, 0, seoul)
	from := to.Add(-7 * 24 * time.Hour)
	qs := []QuarterCounts{
		{Start: time.Date(2026, 11, 26, 5, 15, 0, 0, time.UTC), Sent: 1},                            // 14:15 on Nov 26 in Seoul
		{Start: time.Date(2026, 12, 2, 14, 45, 0, 0, time.UTC), Sent: 2, Received: 1},               // 23:45 on Dec 2
		{Start: time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC), Sent: 4, Received: 3, Opened: 2},     // 00:00 on Dec 3
		{Start: time.Date(2026, 12, 3, 5, 15, 0, 0, time.UTC), Sent: 8, Received: 8, Opened: 8},     // 14:15 on Dec 3
		{Start: time.Date(2026, 12, 10, 0, 0, 0, 0, time.UTC), Sent: 100, Received: 100, Opened: 1}, // a week later
	}
	bs := OverviewBuckets(qs, from, to, false, seoul)
	if len(bs) != 8 {
		t.Fatalf("got %d buckets, want 8: %+v", len(bs), bs)
	}
	want := map[string]ChartBucket{"2026-11-26": {Sent: 1}, "2026-12-02": {Sent: 2, Received: 1}, "2026-12-03": {Sent: 12, Received: 11, Opened: 10}}
	for i, b := range bs {
		day := b.Start.Format(time.DateOnly)
		if wantDay := time.Date(2026, 11, 26+i, 0, 0, 0, 0, seoul); !b.Start.Equal(wantDay) {
			t.Errorf("bucket %d starts %v, want %v", i, b.Start, wantDay)
		}
		w := want[day]
		if b.Sent != w.Sent || b.Received != w.Received || b.Opened != w.Opened {
			t.Errorf("%s: got %+v, want %+v", day, b, w)
		}
	}
}

// TestOverviewBucketsHours: the last 24 hours touch 25 local hours (a
// window from the hour to the hour too: its end instant is in the window);
// in a zone half an hour off UTC, a quarter counts in the local hour it
// lies in.
func TestOverviewBucketsHours(t *testing.T) {
	kolkata := zone(t, "Asia/Kolkata") // UTC+05:30
	to := time.Date(2026, 12, 3, 14, 20, 0, 0, kolkata)
	qs := []QuarterCounts{
		{Start: time.Date(2026, 12, 3, 8, 15, 0, 0, time.UTC), Sent: 1}, // 13:45 local
		{Start: time.Date(2026, 12, 3, 8, 30, 0, 0, time.UTC), Sent: 2}, // 14:00 local
		{Start: time.Date(2026, 12, 3, 8, 45, 0, 0, time.UTC), Sent: 4}, // 14:15 local
	}
	bs := OverviewBuckets(qs, to.Add(-24*time.Hour), to, true, kolkata)
	if len(bs) != 25 || !bs[0].Start.Equal(time.Date(2026, 12, 2, 14, 0, 0, 0, kolkata)) || !bs[24].Start.Equal(time.Date(2026, 12, 3, 14, 0, 0, 0, kolkata)) {
		t.Fatalf("got %d buckets from %v to %v, want 25 from 14:00 yesterday to 14:00 today", len(bs), bs[0].Start, bs[len(bs)-1].Start)
	}
	if bs[23].Sent != 1 || bs[24].Sent != 6 {
		t.Errorf("13:00 and 14:00: got %d and %d sent, want 1 and 6", bs[23].Sent, bs[24].Sent)
	}
	onHour := time.Date(2026, 12, 3, 14, 0, 0, 0, kolkata)
	if n := len(OverviewBuckets(nil, onHour.Add(-24*time.Hour), onHour, true, kolkata)); n != 25 {
		t.Errorf("a window from and to the hour: got %d buckets, want 25 (its last instant is in the hour it ends on)", n)
	}
}

// TestOverviewBucketsClockChange: the night a clock is set back has 25
// hours, the repeated hour two buckets each with its own sends; the day
// holds them all.
func TestOverviewBucketsClockChange(t *testing.T) {
	ny := zone(t, "America/New_York") // 2026-11-01 02:00 EDT → 01:00 EST
	to := time.Date(2026, 11, 1, 12, 0, 0, 0, ny)
	from := to.Add(-24 * time.Hour)
	first := time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC)  // 01:30 EDT
	second := time.Date(2026, 11, 1, 6, 30, 0, 0, time.UTC) // 01:30 EST
	qs := []QuarterCounts{{Start: first, Sent: 1}, {Start: second, Sent: 2}}
	bs := OverviewBuckets(qs, from, to, true, ny)
	var ones []string
	for _, b := range bs {
		if b.Start.Hour() == 1 {
			ones = append(ones, fmt.Sprintf("%s %d", b.Start.Format("MST"), b.Sent))
		}
	}
	if strings.Join(ones, ", ") != "EDT 1, EST 2" || len(bs) != 25 {
		t.Errorf("got %d buckets, at 01:00 %v; want 25, 01:00 EDT with 1 sent and 01:00 EST with 2", len(bs), ones)
	}
	days := OverviewBuckets(qs, from, to, false, ny)
	if len(days) != 2 || days[1].Sent != 3 {
		t.Errorf("days: got %+v, want Oct 31 and Nov 1 with 3 sent", days)
	}
}
