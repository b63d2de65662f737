package herald

import "time"

// PushTotals sums the pushes an app created in a window, for the
// operator's overview: how many, and their counts and charge added up.
type PushTotals struct {
	From, To time.Time
	Pushes   int
	// Counts holds the summed counters; RequestedUsers is the users the
	// pushes asked for (or, for a topic or all-users push, found).
	Counts Counts
	// ServerActionsHalf is what the pushes were charged, refunds deducted,
	// in half Server Actions.
	ServerActionsHalf int64
}

// OverviewDays are the windows the overview offers, in days back from now.
var OverviewDays = []int{1, 7, 30}

// DefaultOverviewDays is the window of an overview asked for none.
const DefaultOverviewDays = 7

// OverviewWindow returns the window of days back from now, or false when
// days is not one of OverviewDays.
func OverviewWindow(days int, now time.Time) (from, to time.Time, ok bool) {
	for _, d := range OverviewDays {
		if d == days {
			to = now.UTC().Truncate(time.Millisecond)
			return to.Add(-time.Duration(days) * 24 * time.Hour), to, true
		}
	}
	return time.Time{}, time.Time{}, false
}

// HalfPerUser is what a push is charged for each user it goes to, in half
// Server Actions (0.5): on /users and /messages for each requested user when
// accepted, on a topic or all-users push for each user (or device without
// a user) found as it fans out. The compose page shows it before sending.
const HalfPerUser = 1

// Quarter is the span of the overview's stored buckets: every time zone's
// offset from UTC is a multiple of 15 minutes, so a quarter of an hour
// counted from the epoch lies in one local hour and one local day,
// whatever the app's zone.
const Quarter = 15 * time.Minute

// QuarterCounts sums the pushes an app created in the quarter of an hour
// from Start (UTC): their sent messages and the devices that reported
// them received and opened.
type QuarterCounts struct {
	Start                  time.Time
	Sent, Received, Opened int
}

// ChartBucket is one local hour or day of the overview's chart: the sums
// of the pushes created in it.
type ChartBucket struct {
	// Start is where the hour or day begins, in the app's zone; the
	// window's first and last buckets hold only its part of them.
	Start                  time.Time
	Sent, Received, Opened int
}

// OverviewBuckets spreads quarters over every local hour (hourly) or day
// of loc that the window from..to touches, zeros where no push was
// created, so the buckets add up to the window's totals.
func OverviewBuckets(qs []QuarterCounts, from, to time.Time, hourly bool, loc *time.Location) []ChartBucket {
	key := func(t time.Time) string { return t.In(loc).Format(time.DateOnly) }
	var out []ChartBucket
	if hourly {
		key = func(t time.Time) string { return hourStart(t, loc).Format(time.RFC3339) }
		for h := hourStart(from, loc); !h.After(to); h = hourStart(h.Add(time.Hour), loc) {
			out = append(out, ChartBucket{Start: h})
		}
	} else {
		f, l := from.In(loc), to.In(loc)
		for d := time.Date(f.Year(), f.Month(), f.Day(), 0, 0, 0, 0, loc); key(d) <= key(l); {
			out = append(out, ChartBucket{Start: d})
			d = time.Date(d.Year(), d.Month(), d.Day()+1, 0, 0, 0, 0, loc)
		}
	}
	at := make(map[string]int, len(out))
	for i, b := range out {
		at[key(b.Start)] = i
	}
	for _, q := range qs {
		if i, ok := at[key(q.Start)]; ok {
			out[i].Sent += q.Sent
			out[i].Received += q.Received
			out[i].Opened += q.Opened
		}
	}
	return out
}

// hourStart is the instant the local hour holding t began: the two hours
// a clock set back repeats are two hours.
func hourStart(t time.Time, loc *time.Location) time.Time {
	l := t.In(loc)
	return l.Add(-time.Duration(l.Minute())*time.Minute - time.Duration(l.Second())*time.Second - time.Duration(l.Nanosecond()))
}
