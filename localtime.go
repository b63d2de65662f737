package herald

import "time"

// Location returns the device's own time zone when it reported a valid
// one (DeviceRegistration.TimeZone), else app, the app's zone: where its
// night window (21:00–08:00) and a local-time push's wall clock are read
// (DESIGN 14).
func (d Device) Location(app *time.Location) *time.Location {
	if d.TimeZone == "" || d.TimeZone == "Local" {
		return app
	}
	if loc, err := loadLocation(d.TimeZone); err == nil {
		return loc
	}
	return app
}

// A local-time push (options.localTime with scheduleTime, DESIGN 14) is
// sent to each device when the wall clock of its own zone reads the push's
// scheduleTime. Its ScheduledAt is when the first zone on earth reaches
// that reading (FirstZone, UTC+14): its fan-out starts then, each device's
// part waiting for its own zone (LocalAt).

// FirstZone is the zone whose clock is furthest ahead (UTC+14, as
// Pacific/Kiritimati): a wall-clock time comes there first.
var FirstZone = time.FixedZone("UTC+14", 14*3600)

// LocalStart returns when the first zone reaches the wall-clock reading of
// at in loc (the app's zone): a local-time push's ScheduledAt.
func LocalStart(at time.Time, loc *time.Location) time.Time {
	return LocalAt(at.In(loc), FirstZone)
}

// LocalWall returns the wall-clock time of a local-time push: its
// ScheduledAt read in FirstZone (zero for a push not scheduled).
func (p Push) LocalWall() time.Time {
	if p.ScheduledAt == nil {
		return time.Time{}
	}
	return p.ScheduledAt.In(FirstZone)
}

// ScheduleReading is the push's scheduled time as its scheduleTime was
// written, read in the app's zone loc: for a local-time push, its wall
// clock (LocalWall) in loc; nil when not scheduled.
func (p Push) ScheduleReading(loc *time.Location) *time.Time {
	if p.ScheduledAt == nil {
		return nil
	}
	t := p.ScheduledAt.In(loc)
	if p.LocalTime {
		t = LocalAt(p.LocalWall(), loc)
	}
	return &t
}

// LocalAt returns when the clock of loc reads wall's wall-clock time (its
// date, hour, minute and second; wall's own zone is ignored). On a day
// whose clock change skips that reading (spring forward: 02:30 in New
// York on 2026-03-08) it is the instant the reading would have had
// without the change, which the clock shows as the reading plus the gap
// (03:30); on one whose change repeats it (fall back: 01:30 on
// 2026-11-01) it is the first of the two (before the change).
func LocalAt(wall time.Time, loc *time.Location) time.Time {
	naive := time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second(), 0, time.UTC)
	// Every instant that reads the wall time in loc lies within 14 hours
	// of naive; one clock change at most falls in that span.
	var first, skipped time.Time
	for _, probe := range []time.Duration{-14 * time.Hour, 0, 14 * time.Hour} {
		_, off := naive.Add(probe).In(loc).Zone()
		c := naive.Add(-time.Duration(off) * time.Second)
		if sameWall(c.In(loc), naive) {
			if first.IsZero() || c.Before(first) {
				first = c
			}
		} else if c.After(skipped) {
			skipped = c
		}
	}
	if !first.IsZero() {
		return first
	}
	return skipped
}

// sameWall reports whether t reads the wall-clock time of naive (a UTC
// time standing for a reading).
func sameWall(t, naive time.Time) bool {
	y, mo, d := t.Date()
	ny, nmo, nd := naive.Date()
	return y == ny && mo == nmo && d == nd && t.Hour() == naive.Hour() && t.Minute() == naive.Minute() && t.Second() == naive.Second()
}
