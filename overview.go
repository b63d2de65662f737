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
