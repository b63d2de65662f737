package herald

import "time"

// UsageEntry is one line of an app's usage ledger: a charge (positive) or a
// refund (negative) in half Server Actions, on a day of the app's time zone.
type UsageEntry struct {
	AppID  string
	PushID string
	// Day is the app's local date, YYYY-MM-DD.
	Day  string
	Half int64
	At   time.Time
}

// Charge is what one step of a push (its accept, or a page of a topic's
// or all-users fan-out) costs: Half, added to the push's cost
// (Push.ServerActionsHalf), and the usage ledger's entries, which the
// store writes as given.
type Charge struct {
	Half   int64
	Ledger []UsageEntry
}

// PushCharge is what the app owes for p reaching users more of its users
// at at: their cost (Push.Cost), written to the ledger on the app's local
// day; a sandbox's ledger gets nothing, though the push shows its cost.
func (a App) PushCharge(p Push, users int, at time.Time) Charge {
	half := p.Cost(users)
	return Charge{Half: half, Ledger: a.Charge(p.ID, half, at)}
}

// Charge is the ledger entry charging the app half units for a push at at,
// on the app's local day; none when there is nothing to charge. A sandbox
// app is charged nothing: its pushes only show their cost.
func (a App) Charge(pushID string, half int64, at time.Time) []UsageEntry {
	if half == 0 || a.Sandbox {
		return nil
	}
	return []UsageEntry{{AppID: a.ID, PushID: pushID, Day: at.In(a.Location()).Format(time.DateOnly), Half: half, At: at}}
}

// Refund returns the entries that cancel a push's charges, each on the day
// it was charged, at at.
func Refund(charges []UsageEntry, at time.Time) []UsageEntry {
	var out []UsageEntry
	for _, c := range charges {
		if c.Half > 0 {
			out = append(out, UsageEntry{AppID: c.AppID, PushID: c.PushID, Day: c.Day, Half: -c.Half, At: at})
		}
	}
	return out
}
