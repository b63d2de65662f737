package herald

import (
	"fmt"
	"time"
)

// MaxSpreadMinutes is the longest options.spreadMinutes: a day.
const MaxSpreadMinutes = 1440

// SpreadProblem returns why minutes is no options.spreadMinutes, "" when
// it is one (DESIGN.md section 14 "Pacing of one push").
func SpreadProblem(minutes int64) string {
	if minutes < 1 || minutes > MaxSpreadMinutes {
		return fmt.Sprintf("must be a whole number of minutes from 1 to %d", MaxSpreadMinutes)
	}
	return ""
}

// SpreadHighReason is why options.spreadMinutes is refused on a
// high-priority push: a one-time code is sent at once, never spread.
const SpreadHighReason = `must not be given with options.priority "high": a one-time code is sent at once, not spread`

// SpreadDeferReason is why options.spreadMinutes is refused with
// options.nightPolicy "defer": each part of a spread push is judged
// against the night window when it is sent, where a marketing part
// without night consent is suppressed (suppressedNight), never deferred.
const SpreadDeferReason = `must not be given with options.nightPolicy "defer": each part of a spread push is judged ` +
	`against the night window (21:00-08:00) when it is sent, and a part that falls in it is suppressed, not deferred`

// SpreadLocalReason is why options.spreadMinutes is refused with
// options.localTime: a local-time push sends each zone's devices at its
// own time, which a spread from one start would move.
const SpreadLocalReason = `must not be given with options.localTime: a local-time push sends each device when its own zone's ` +
	`clock reads scheduleTime, not spread from one start`

// Spread reports whether the push's sends are spread over its
// SpreadMinutes.
func (p Push) Spread() bool { return p.SpreadMinutes > 0 }

// SpreadDue returns when a spread push's sends to its user at place idx
// (a delivery's RecipientIdx: the users in the order its fan-out reads
// them, counting each device no user is mapped to as one) are due: the
// push's start plus idx/SpreadUsers of its SpreadMinutes, so that its
// users are sent evenly over them, each user's devices together. A user
// at or past SpreadUsers (one who joined the audience after the count)
// is due at the spread's end. It is a function of what the push keeps,
// so every run of every node, before a restart or after, keeps one
// schedule. The zero time for a push not spread or not yet started.
func (p Push) SpreadDue(idx int) time.Time {
	if !p.Spread() || p.StartedAt == nil {
		return time.Time{}
	}
	span := time.Duration(p.SpreadMinutes) * time.Minute
	if idx >= p.SpreadUsers {
		return p.StartedAt.Add(span)
	}
	return p.StartedAt.Add(time.Duration(int64(span) * int64(idx) / int64(p.SpreadUsers)))
}

// SpreadEnd returns when a spread push's last user is due; the zero time
// for a push not spread or not yet started.
func (p Push) SpreadEnd() time.Time { return p.SpreadDue(p.SpreadUsers) }
