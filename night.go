package herald

import (
	"fmt"
	"strconv"
	"time"
)

// NightPolicy is what a marketing push sent in the night window does with
// the devices that have marketing consent but no night consent
// (options.nightPolicy, DESIGN.md section 6 "Night deferral").
type NightPolicy string

// The night policies.
const (
	// NightSkip suppresses them (suppressedNight): the default.
	NightSkip NightPolicy = "skip"
	// NightDefer sends them at the next 08:00 in the app's time zone,
	// their consent judged again then.
	NightDefer NightPolicy = "defer"
)

// ParseNightPolicy reads options.nightPolicy; ok is false for any other
// value.
func ParseNightPolicy(s string) (NightPolicy, bool) {
	switch p := NightPolicy(s); p {
	case NightSkip, NightDefer:
		return p, true
	}
	return "", false
}

// NightPolicyReason is why a value of options.nightPolicy is refused.
const NightPolicyReason = `must be "skip" or "defer"`

// Night is the outcome of the consent and night rules for one device at
// fan-out: sent now, suppressed, or deferred to the morning.
type Night int

// The night outcomes.
const (
	SendNow Night = iota
	SuppressConsent
	SuppressNight
	DeferToMorning
)

// JudgeNight decides a device's outcome for a push at fan-out: Suppress's
// rule, except that with NightDefer a device it would suppress for the
// night is deferred to the morning instead.
func JudgeNight(marketing bool, c Consent, night bool, policy NightPolicy) Night {
	switch Suppress(marketing, c, night) {
	case SuppressedConsent:
		return SuppressConsent
	case SuppressedNight:
		if policy == NightDefer {
			return DeferToMorning
		}
		return SuppressNight
	}
	return SendNow
}

// NextMorning returns the first 08:00 in loc after t (t itself when it is
// 08:00 sharp): when the night window that t falls in ends. A day whose
// 08:00 a time-zone change skips ends at the instant time.Date normalizes
// it to.
func NextMorning(t time.Time, loc *time.Location) time.Time {
	l := t.In(loc)
	m := time.Date(l.Year(), l.Month(), l.Day(), nightEndHour, 0, 0, 0, loc)
	if m.Before(t) {
		m = time.Date(l.Year(), l.Month(), l.Day()+1, nightEndHour, 0, 0, 0, loc)
	}
	return m
}

// DeferCancelDeadline is how long before its morning a deferred part may
// still be cancelled, as a scheduled push may (EditDeadline).
const DeferCancelDeadline = EditDeadline

// CheckDeferCancel tells whether the deferred part of a push, due at until,
// may still be cancelled at now: until 5 minutes before (exactly 5 minutes
// before is still allowed); ErrScheduleLocked after.
func CheckDeferCancel(until, now time.Time) error {
	if until.Sub(now) < DeferCancelDeadline {
		return ErrScheduleLocked.With(Detail{Field: "deferredUntil", Reason: fmt.Sprintf("is %s: the part deferred to the morning "+
			"can be cancelled until 5 minutes before it starts", until.UTC().Format(time.RFC3339))})
	}
	return nil
}

// ErrNothingDeferred refuses to cancel a sending push with no part waiting
// for the morning that has not begun: it was sent at once, so only such a
// part could have been cancelled.
var ErrNothingDeferred = ErrScheduleLocked.With(Detail{Field: "status", Reason: "is sending: this push was not scheduled, " +
	"it was sent at once and has no part waiting for the morning (08:00) left to cancel; only a scheduled push can be " +
	"edited or cancelled, until 5 minutes before its send time"})

// DeferRefund returns the ledger entries that refund half units of a
// push's ledger entries at at: taken from what each day it was charged
// has left after the refunds before (an earlier cancel), in the order of
// the days, never more than that.
func DeferRefund(ledger []UsageEntry, half int64, at time.Time) []UsageEntry {
	left := map[string]int64{}
	var days []UsageEntry // the first entry of each day, in order
	for _, e := range ledger {
		if _, seen := left[e.Day]; !seen {
			days = append(days, e)
		}
		left[e.Day] += e.Half
	}
	var out []UsageEntry
	for _, d := range days {
		if half <= 0 {
			break
		}
		if left[d.Day] <= 0 {
			continue
		}
		n := min(left[d.Day], half)
		out = append(out, UsageEntry{AppID: d.AppID, PushID: d.PushID, Day: d.Day, Half: -n, At: at})
		half -= n
	}
	return out
}

// DeferredCancel is what cancelling a push's deferred part did: the tokens
// (of how many users) that were to be sent at DeferredUntil, now counted
// as suppressed by the night, and the Server Actions refunded for the
// users among them who were sent nothing else.
type DeferredCancel struct {
	DeferredUntil         time.Time `json:"deferredUntil"`
	Tokens                int       `json:"tokens"`
	Users                 int       `json:"users"`
	RefundedServerActions float64   `json:"refundedServerActions"`
}

// DeferCancelEdit is the trail entry of a deferred part cancelled at at,
// of a push charged chargedHalf before the cancel refunded refundHalf:
// its deferred tokens and its charge before and after, and what the
// cancel did.
func DeferCancelEdit(at, until time.Time, tokens, users int, refundHalf, chargedHalf int64) Edit {
	actions := func(half int64) string { return strconv.FormatFloat(ServerActions(half), 'f', -1, 64) }
	return Edit{
		At:      at.UTC(),
		Changes: map[string]string{"deferredNight": "0", "serverActions": actions(chargedHalf - refundHalf)},
		From:    map[string]string{"deferredNight": strconv.Itoa(tokens), "serverActions": actions(chargedHalf)},
		DeferredCancelled: &DeferredCancel{DeferredUntil: until.UTC(), Tokens: tokens, Users: users,
			RefundedServerActions: ServerActions(refundHalf)},
	}
}
