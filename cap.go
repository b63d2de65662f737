package herald

import (
	"fmt"
	"math"
	"time"
)

// Frequency caps (DESIGN 14): an app may bound how many marketing pushes
// one user receives, in the app's local day (PerDay) and in the last
// 7×24 hours (PerWeek). A user counts a push once, when a device of theirs
// was really sent it: the send path claims a receipt for the user as it
// marks the user's first send in flight, in the same transaction, and the
// claim is refused (the delivery suppressed, DeliverySuppressedCap) once
// the user holds as many receipts in either window. A push whose
// deliveries to the user all ended unsent gives its receipt back when it
// finishes. Notices, test pushes and pushes that are not marketing are
// neither counted nor capped.

// MaxMarketingCap bounds each member of MarketingCap.
const MaxMarketingCap = 100

// CapWeek is the rolling window of MarketingCap.PerWeek.
const CapWeek = 7 * 24 * time.Hour

// CapRetention is how long a receipt is kept: longer than either window.
const CapRetention = 8 * 24 * time.Hour

// ReasonMarketingCap is the problem of a member of marketingCap.
const ReasonMarketingCap = "must be null or a whole number from 1 to 100"

// MarketingCap is an app's frequency cap; a nil member is no cap, and the
// zero value caps nothing.
type MarketingCap struct {
	PerDay, PerWeek *int
}

// On reports whether either window caps.
func (c MarketingCap) On() bool { return c.PerDay != nil || c.PerWeek != nil }

// Problems judges the setting; field is its JSON path ("marketingCap").
func (c MarketingCap) Problems(field string) []Detail {
	var d []Detail
	for _, m := range []struct {
		name string
		v    *int
	}{{"perDay", c.PerDay}, {"perWeek", c.PerWeek}} {
		if m.v != nil && (*m.v < 1 || *m.v > MaxMarketingCap) {
			d = append(d, Detail{field + "." + m.name, ReasonMarketingCap})
		}
	}
	return d
}

// CapMember reads one member of marketingCap given as a JSON number: a
// whole number is kept, anything else becomes 0, out of bounds, so that
// Problems names it.
func CapMember(v *float64) *int {
	if v == nil {
		return nil
	}
	n := 0
	if *v == math.Trunc(*v) && math.Abs(*v) <= MaxMarketingCap+1 {
		n = int(*v)
	}
	return &n
}

// String shows the setting as the dashboard and the CLI do: "no cap",
// or "3 marketing pushes a day and 5 a week".
func (c MarketingCap) String() string {
	pushes := func(n int) string {
		if n == 1 {
			return "1 marketing push"
		}
		return fmt.Sprintf("%d marketing pushes", n)
	}
	switch {
	case c.PerDay != nil && c.PerWeek != nil:
		return fmt.Sprintf("%s a day and %d a week", pushes(*c.PerDay), *c.PerWeek)
	case c.PerDay != nil:
		return pushes(*c.PerDay) + " a day"
	case c.PerWeek != nil:
		return pushes(*c.PerWeek) + " a week"
	}
	return "no cap"
}

// CapClaim is what the send path's claim of a receipt checks, judged at
// At: the limits (math.MaxInt32 for a window without one) and where each
// window begins, DayStart the app's local midnight and WeekStart 7×24 h
// before At.
type CapClaim struct {
	PerDay, PerWeek     int
	DayStart, WeekStart time.Time
	At                  time.Time
}

// Claim returns the claim of the cap at now in loc, the app's zone; nil
// when the app caps nothing.
func (c MarketingCap) Claim(now time.Time, loc *time.Location) *CapClaim {
	if !c.On() {
		return nil
	}
	limit := func(v *int) int {
		if v == nil {
			return math.MaxInt32
		}
		return *v
	}
	local := now.In(loc)
	day := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, loc)
	return &CapClaim{PerDay: limit(c.PerDay), PerWeek: limit(c.PerWeek), DayStart: day, WeekStart: now.Add(-CapWeek), At: now}
}

// CappedFor reports whether a delivery of p to a recipient is subject to
// its app's cap: p is charged (not a test push or a notice) and its
// message to the recipient is marketing.
func (p Push) CappedFor(r Recipient) bool {
	return p.Rule().Charged && p.MarketingFor(r)
}

// Refuses reports whether a user holding day receipts of other pushes
// since DayStart and week since WeekStart is at the cap.
func (c CapClaim) Refuses(day, week int) bool { return day >= c.PerDay || week >= c.PerWeek }
