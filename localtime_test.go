package herald

import (
	"testing"
	"time"
)

// TestLocalAt: a wall-clock time in each zone, and the DST days of New
// York resolved as documented: a skipped reading is shifted by the gap,
// a repeated one is the first.
func TestLocalAt(t *testing.T) {
	t.Parallel()
	ny, _ := time.LoadLocation("America/New_York")
	seoul, _ := time.LoadLocation("Asia/Seoul")
	kiri, _ := time.LoadLocation("Pacific/Kiritimati")
	pago, _ := time.LoadLocation("Pacific/Pago_Pago")
	wall := func(y int, mo time.Month, d, h, mi int) time.Time { return time.Date(y, mo, d, h, mi, 0, 0, FirstZone) }
	utc := func(y int, mo time.Month, d, h, mi int) time.Time { return time.Date(y, mo, d, h, mi, 0, 0, time.UTC) }
	for _, tc := range []struct {
		name string
		wall time.Time
		loc  *time.Location
		want time.Time
	}{
		{"Seoul", wall(2026, 12, 5, 9, 0), seoul, utc(2026, 12, 5, 0, 0)},
		{"Kiritimati", wall(2026, 12, 5, 9, 0), kiri, utc(2026, 12, 4, 19, 0)},
		{"PagoPago", wall(2026, 12, 5, 9, 0), pago, utc(2026, 12, 5, 20, 0)},
		{"NewYorkWinter", wall(2026, 12, 5, 9, 0), ny, utc(2026, 12, 5, 14, 0)},
		{"NewYorkSummer", wall(2026, 7, 5, 9, 0), ny, utc(2026, 7, 5, 13, 0)},
		// 2026-03-08: 02:00 EST becomes 03:00 EDT; 02:30 does not exist.
		{"SpringGap", wall(2026, 3, 8, 2, 30), ny, utc(2026, 3, 8, 7, 30)}, // 03:30 EDT
		{"SpringAfter", wall(2026, 3, 8, 9, 0), ny, utc(2026, 3, 8, 13, 0)},
		{"SpringBefore", wall(2026, 3, 8, 1, 30), ny, utc(2026, 3, 8, 6, 30)},
		// 2026-11-01: 02:00 EDT becomes 01:00 EST; 01:30 happens twice.
		{"FallRepeat", wall(2026, 11, 1, 1, 30), ny, utc(2026, 11, 1, 5, 30)}, // the first, EDT
		{"FallAfter", wall(2026, 11, 1, 9, 0), ny, utc(2026, 11, 1, 14, 0)},
	} {
		if got := LocalAt(tc.wall, tc.loc); !got.Equal(tc.want) {
			t.Errorf("%s: got %v (%v there), want %v", tc.name, got.UTC(), got.In(tc.loc), tc.want)
		}
	}
	if got := LocalAt(wall(2026, 3, 8, 2, 30), ny).In(ny); got.Hour() != 3 || got.Minute() != 30 {
		t.Errorf("spring gap: reads %v in New York, want 03:30", got)
	}
}

// TestLocalStart: a local-time push starts when UTC+14 reaches its wall
// clock, read in the app's zone, and keeps that reading.
func TestLocalStart(t *testing.T) {
	t.Parallel()
	seoul, _ := time.LoadLocation("Asia/Seoul")
	at := time.Date(2026, 12, 5, 9, 0, 0, 0, seoul)
	start := LocalStart(at, seoul)
	if want := time.Date(2026, 12, 4, 19, 0, 0, 0, time.UTC); !start.Equal(want) {
		t.Fatalf("start: got %v, want %v", start.UTC(), want)
	}
	p := Push{ScheduledAt: &start, LocalTime: true}
	if got := p.LocalWall().Format(ScheduleLayout); got != "2026-12-05T09:00" {
		t.Errorf("wall: got %s", got)
	}
	if got := p.ScheduleReading(seoul); !got.Equal(at) {
		t.Errorf("reading in Seoul: got %v, want %v", got, at)
	}
}

// BenchmarkLocalAt: the cost of reading a wall time in a device's zone,
// once per device of a local-time push's fan-out.
func BenchmarkLocalAt(b *testing.B) {
	ny, _ := time.LoadLocation("America/New_York")
	wall := time.Date(2026, 12, 6, 9, 0, 0, 0, FirstZone)
	for b.Loop() {
		LocalAt(wall, ny)
	}
}
