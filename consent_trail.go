package herald

import (
	"context"
	"regexp"
	"strconv"
	"time"
)

// ConsentSource names who changed a consent pair (DESIGN section 7).
type ConsentSource string

// The sources of consent changes.
const (
	// SourceSDK: the app on the device (the in-app consent switch, or a
	// device mapped to a user taking the user's pair).
	SourceSDK ConsentSource = "sdk"
	// SourceServerAPI: the app's back end (PATCH /api/app-user/v2/marketing).
	SourceServerAPI ConsentSource = "server-api"
	// SourceAdmin: the platform operator (admin API or dashboard).
	SourceAdmin ConsentSource = "admin"
	// SourceWithdrawal: the user withdrew (DELETE /api/app-user/v2).
	SourceWithdrawal ConsentSource = "withdrawal"
	// SourceAppDefault: a new device starting with the app's default pair.
	SourceAppDefault ConsentSource = "app-default"
)

// ConsentRecord is one entry of the consent trail: a change of a user's or
// a device's pair, or a re-confirmation (the same pair set again).
type ConsentRecord struct {
	// ID is given by the store; it names the record's webhook event.
	ID    int64
	AppID string
	// UserID is the user whose pair changed, or the user the device was
	// mapped to; nil for a device mapped to no user.
	UserID *string
	// Seq numbers one user's records from 1, in the order they were made;
	// 0 for a record without a user.
	Seq int64
	// DeviceID is the device whose pair changed; nil for the user's own pair.
	DeviceID *string
	At       time.Time
	Source   ConsentSource
	From, To Consent
	// Notify is true for a decision about the user's consent (the in-app
	// switch, the Server API, the admin API, a withdrawal): its user is
	// sent a consent.changed event when the app has a webhook. A device
	// taking its user's pair or the app's default notifies nobody.
	Notify bool
	// Confirms is true when the record gives or confirms marketing
	// consent, which restarts the two-year clock (see ConsentDueAt).
	Confirms bool
}

// ConsentDecision records a decision about a pair: the in-app switch
// (SourceSDK), the Server API or the admin API. It is recorded even when
// the pair stays the same: setting the same value again is how consent is
// re-confirmed.
func ConsentDecision(src ConsentSource, from, to Consent, at time.Time) ConsentRecord {
	return ConsentRecord{At: at, Source: src, From: from, To: to, Notify: true, Confirms: to.Marketing}
}

// ConsentDefaulted records a new device starting with the app's default
// pair; ok is false when the default gives no consent (nothing changed).
func ConsentDefaulted(to Consent, at time.Time) (ConsentRecord, bool) {
	return ConsentRecord{At: at, Source: SourceAppDefault, To: to, Confirms: to.Marketing}, to != Consent{}
}

// ConsentAdopted records a device taking its user's pair: a device newly
// mapped to a user who was given a pair through the Server API or the
// admin API (src SourceSDK, the call that mapped it), or a device of a
// user whose pair is being set (src the setter's source). The user's own
// record, if any, is the decision: this one notifies nobody and confirms
// nothing (the device takes the user's clock). ok is false when the device
// already had that pair.
func ConsentAdopted(src ConsentSource, from, to Consent, at time.Time) (ConsentRecord, bool) {
	return ConsentRecord{At: at, Source: src, From: from, To: to}, from != to
}

// ConsentWithdrawn records a withdrawal: the user's pair reset. It is
// recorded (and notified) even when the user had no consent to lose.
func ConsentWithdrawn(from Consent, at time.Time) ConsentRecord {
	return ConsentRecord{At: at, Source: SourceWithdrawal, From: from, Notify: true}
}

// ConsentStanding is how long marketing consent stands before the sender
// must confirm it with the recipient again: two years (Information and
// Communications Network Act, art. 50(8); Enforcement Decree art. 62-3).
const ConsentStanding = 2

// ConsentDueAt returns when marketing consent given or confirmed at
// confirmed must be confirmed again: two calendar years later, on the
// calendar of loc (the app's time zone). Consent confirmed on 29 February
// is due on 1 March.
func ConsentDueAt(confirmed time.Time, loc *time.Location) time.Time {
	return confirmed.In(loc).AddDate(ConsentStanding, 0, 0).UTC()
}

// ConsentDue is a user whose marketing consent is due for re-confirmation.
// Consent is the user's consent as a push sees it: marketing (or night)
// is true when the user's own pair or any of the user's devices has it.
type ConsentDue struct {
	UserID      string
	Consent     Consent
	ConfirmedAt time.Time
	DueAt       time.Time
}

// MaxDueWithin bounds the window of the consent-due list, in days.
const MaxDueWithin = 3660

var withinPattern = regexp.MustCompile(`^[0-9]{1,4}d$`)

// ParseDueWithin reads the window of the consent-due list: a number of
// days such as "30d", from 0 to MaxDueWithin; "" is 0 (due now). The second
// result is the problem, or "".
func ParseDueWithin(s string) (time.Duration, string) {
	if s == "" {
		return 0, ""
	}
	reason := "must be a number of days from 0d to " + strconv.Itoa(MaxDueWithin) + "d, such as 30d"
	if !withinPattern.MatchString(s) {
		return 0, reason
	}
	n, _ := strconv.Atoi(s[:len(s)-1])
	if n > MaxDueWithin {
		return 0, reason
	}
	return time.Duration(n) * 24 * time.Hour, ""
}

// EventConsentChanged is the type of the webhook event telling an app
// that a user's consent changed (or was confirmed again).
const EventConsentChanged = "consent.changed"

// ConsentEventState is where a record's consent.changed event stands.
type ConsentEventState string

// The event states: a record made without an event (no webhook, or
// nothing to notify) has EventNone.
const (
	EventNone    ConsentEventState = ""
	EventPending ConsentEventState = "pending"
	EventSent    ConsentEventState = "sent"
	// EventDropped: given up after the last retry, refused for good, or
	// the app's webhook was removed before it was sent.
	EventDropped ConsentEventState = "dropped"
)

// ConsentEventJob sends one consent.changed event: that of the record
// numbered Seq of the user. A user has at most one such job at a time, for
// the oldest of the user's events not yet sent; when it ends (sent, or
// given up) the store queues the next one, so one user's events arrive in
// the order they were made.
type ConsentEventJob struct {
	AppID  string `json:"appId"`
	UserID string `json:"userId"`
	Seq    int64  `json:"seq"`
}

// Kind names the job.
func (ConsentEventJob) Kind() string { return "herald.consent_event" }

// ConsentEventID is the webhook-id of the event of a record: the same on
// every retry, so receivers can drop a repeat.
func ConsentEventID(appID string, recordID int64) string {
	return "msg_" + appID + "_consent_" + strconv.FormatInt(recordID, 10)
}

// ConsentStore keeps the consent trail, the two-year re-confirmation
// clock and the queue of consent.changed events. The UserStore methods
// that change a pair (RegisterDevice, SetDeviceUser, SetDeviceConsent,
// SetUserConsent, WithdrawUser) record it in their own transaction, with
// the job of the user's event when the app has a webhook.
type ConsentStore interface {
	// ConsentHistory returns the records of a user (the user's own pair
	// and the pairs of devices while mapped to the user), oldest first,
	// withdrawal included. ErrUserNotFound when the user was never
	// registered.
	ConsentHistory(ctx context.Context, appID, userID string) ([]ConsentRecord, error)
	// ConsentDue returns a page of the registered users with marketing
	// consent due for re-confirmation at or before until, soonest due
	// first, and the cursor of the next page ("" at the end).
	// ErrInvalidRequest for a malformed cursor.
	ConsentDue(ctx context.Context, appID string, until time.Time, limit int, cursor string) ([]ConsentDue, string, error)
	// CountConsentDue counts the users ConsentDue lists.
	CountConsentDue(ctx context.Context, appID string, until time.Time) (int, error)
	// ConsentEvent returns the user's record numbered seq and the state of
	// its event. ErrNotFound.
	ConsentEvent(ctx context.Context, appID, userID string, seq int64) (ConsentRecord, ConsentEventState, error)
	// ConsentRecord returns the app's trail record numbered id (its ID).
	// ErrNotFound.
	ConsentRecord(ctx context.Context, appID string, id int64) (ConsentRecord, error)
	// EndConsentEvent records that the pending event of the user's record
	// seq was sent or dropped, and queues the job of the user's next
	// pending event. It returns false when the event was not pending (an
	// earlier run ended it), and then queues nothing.
	EndConsentEvent(ctx context.Context, appID, userID string, seq int64, end ConsentEventState) (bool, error)
}
