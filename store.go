package herald

import (
	"context"
	"time"
)

// AppStore keeps apps. Lookups of a missing app return ErrNotFound.
type AppStore interface {
	CreateApp(ctx context.Context, app App) error
	App(ctx context.Context, id string) (App, error)
	AppByAPIKey(ctx context.Context, apiKey string) (App, error)
	ListApps(ctx context.Context) ([]App, error)
	// UpdateApp writes the settings of app: name, tier, features, time zone
	// and default consent. Keys and credentials have their own methods.
	UpdateApp(ctx context.Context, app App) error
	DeleteApp(ctx context.Context, id string) error
	SetSecretHash(ctx context.Context, id string, hash []byte) error
	// SetFCMCredentials stores the sealed service-account file, noting when
	// (App.FCMCredentialsAt), and clears the FCM warning; nil removes it.
	SetFCMCredentials(ctx context.Context, id string, sealed []byte) error
	// SetFCMWarning records a refusal by FCM of the app's credentials, for
	// the operator's app page. SetFCMCredentials clears it.
	SetFCMWarning(ctx context.Context, id, warning string, at time.Time) error
	// SetWebhook stores the URL and sealed secret; an empty URL removes both.
	SetWebhook(ctx context.Context, id, url string, sealedSecret []byte) error
	// SetIdentitySecret replaces the sealed identity secret; the old one
	// stops verifying at once. ErrNotFound.
	SetIdentitySecret(ctx context.Context, id string, sealed []byte) error
	// CountIdentityRefusal adds one to the app's IdentityRefusals, in one
	// statement, so that calls refused together all count. ErrNotFound.
	CountIdentityRefusal(ctx context.Context, id string) error
}

// UserStore keeps app users and their devices (token mappings).
type UserStore interface {
	// RegisterDevice upserts a device; a token another device holds moves
	// to this one. With a user ID it maps the device, registering the user
	// (again, when withdrawn). ErrIdentityRefused when reg.Identity does
	// not allow it (DeviceRegistration.IdentityRefused).
	RegisterDevice(ctx context.Context, appID string, reg DeviceRegistration) (Device, error)
	// SetDeviceUser maps a device to a user (registering the user) or, with
	// nil, unmaps it. ErrNotFound when the device is unknown.
	SetDeviceUser(ctx context.Context, appID, deviceID string, userID *string) (Device, error)
	// SetDeviceConsent applies the in-app consent switch to one device.
	// ErrNotFound when the device is unknown; ErrInvalidRequest on a change
	// the device's pair cannot take; ErrIdentityRefused when change.Identity
	// is set and does not verify the user the device is mapped to (an
	// unmapped device needs none).
	SetDeviceConsent(ctx context.Context, appID, deviceID string, change ConsentChange) (Device, error)
	// DeleteDevice removes a device and its token. ErrNotFound when unknown.
	DeleteDevice(ctx context.Context, appID, deviceID string) error
	// DeleteToken removes the device holding token. ErrNotFound when none.
	DeleteToken(ctx context.Context, appID, token string) error
	// SetUserConsent applies change to the user and every device mapped to
	// it. ErrUserNotFound, ErrUserWithdrawn, or ErrInvalidRequest.
	SetUserConsent(ctx context.Context, appID, userID string, change ConsentChange) (Consent, error)
	// WithdrawUser removes every device of the user and resets its consent.
	// ErrUserNotFound or ErrUserWithdrawn.
	WithdrawUser(ctx context.Context, appID, userID string) error
	// SubscribeTopic adds the topic to every device of the users and
	// returns how many devices it was added to (0 on a repeat); unknown
	// users are skipped.
	SubscribeTopic(ctx context.Context, appID, topic string, userIDs []string) (int, error)
	// UnsubscribeTopic removes the topic from every device of the users and
	// returns how many devices had it.
	UnsubscribeTopic(ctx context.Context, appID, topic string, userIDs []string) (int, error)
	// User returns a user and its devices. ErrUserNotFound when the user was
	// never registered.
	User(ctx context.Context, appID, userID string) (User, []Device, error)
	// Users returns a page of the app's users, withdrawn ones included, and
	// the cursor of the next page ("" at the end). ErrInvalidRequest for a
	// malformed cursor or a limit below 1.
	Users(ctx context.Context, appID string, f UserFilter) ([]UserSummary, string, error)
	// CountTargets counts whom a topic push (all-users with topic "")
	// would reach now: the distinct users of the devices, and the devices
	// no user is mapped to.
	CountTargets(ctx context.Context, appID, topic string) (users, unmapped int, err error)
}

// Job is a unit of durable work, stored in the same transaction as the data
// it acts on (River's JobArgs has the same shape).
type Job interface{ Kind() string }

// Idempotency is the Idempotency-Key of a request and a hash of its body.
type Idempotency struct {
	Key  string
	Hash []byte
}

// PushStore keeps pushes and their recipients: what accepting a push and
// reading one need. Every method that takes jobs inserts them in the same
// transaction as its writes.
type PushStore interface {
	// AcceptPush stores a push, its recipients, its jobs (the first is
	// the push's own: its fan-out, or the lapse of its approval window)
	// and its charge's ledger entries (p.Ledger, written as given: the
	// domain decides the charge) at once.
	// With an idempotency key used before it stores nothing and returns the
	// first push's id and replayed; ErrIdempotencyReuse when the body differs.
	AcceptPush(ctx context.Context, p Push, rs []Recipient, idem *Idempotency, jobs ...Job) (id string, replayed bool, err error)
	// IdempotentPush returns the push an idempotency key, used within the
	// last 24 hours, stands for: found is false when there is none;
	// ErrIdempotencyReuse when the key came with another body.
	IdempotentPush(ctx context.Context, appID string, idem Idempotency, now time.Time) (p Push, found bool, err error)
	// Push returns a push with its counts. ErrNotFound.
	Push(ctx context.Context, id string) (Push, error)
	// PushRecord returns a push without its counts, which cost a pass over
	// its deliveries. ErrNotFound.
	PushRecord(ctx context.Context, id string) (Push, error)
	// Recipients returns a push's requested users in request order; none
	// for an unknown push.
	Recipients(ctx context.Context, pushID string) ([]Recipient, error)
}

// PushFilter selects a page of an app's pushes.
type PushFilter struct {
	RequestGroupID string
	Status         PushStatus
	// Scheduled lists scheduled pushes, soonest first, instead of all
	// pushes newest first.
	Scheduled bool
	Limit     int
	// Cursor continues after the last push of the previous page.
	Cursor string
}

// DayUsage is the Server Actions charged to an app on one day (in its time
// zone), in half units, refunds deducted.
type DayUsage struct {
	Date string
	Half int64
}

// HistoryStore reads push history and usage.
type HistoryStore interface {
	// Pushes returns a page of pushes with counts, and the cursor of the
	// next page ("" at the end). ErrInvalidRequest for a malformed cursor
	// or a limit below 1;
	// an app without pushes gives an empty page.
	Pushes(ctx context.Context, appID string, f PushFilter) ([]Push, string, error)
	// PushGroup returns the pushes sharing a requestGroupId, with counts;
	// none when the group is unknown.
	PushGroup(ctx context.Context, appID, requestGroupID string) ([]Push, error)
	// UnreachableUsersOf returns the users a push could not reach; none for
	// an unknown push.
	UnreachableUsersOf(ctx context.Context, pushID string) ([]Unreachable, error)
	// Failures returns a push's failed deliveries; none for an unknown push.
	Failures(ctx context.Context, pushID string) ([]Failure, error)
	// Usage returns the days from..to (YYYY-MM-DD, inclusive) with charges;
	// none for an unknown app.
	Usage(ctx context.Context, appID, from, to string) ([]DayUsage, error)
	// PushTotals sums the app's pushes created from from (inclusive) to to
	// (inclusive); zero totals for an unknown app.
	PushTotals(ctx context.Context, appID string, from, to time.Time) (PushTotals, error)
	// PushQuarters sums the same pushes' sent, received and opened by the
	// quarter of an hour they were created in, oldest first, the quarters
	// without pushes left out; they add up to PushTotals' counts.
	PushQuarters(ctx context.Context, appID string, from, to time.Time) ([]QuarterCounts, error)
}

// ScheduleStore changes pushes step by step and lists the work due.
type ScheduleStore interface {
	// StepPush applies st to the push as stored (Push.Apply, which
	// judges it on the stored push and decides its charge, refunds and
	// jobs) and writes the push and the step's effects in one
	// transaction guarded on the push as read: of steps at once, each is
	// judged on what the one before it left. ErrNotFound; Apply's errors:
	// ErrScheduleLocked (an edit or cancel too late, of a push not
	// scheduled, or of a sending push without a deferred part left,
	// ErrNothingDeferred), NotHeld (a release of a push not held),
	// ErrInvalidRequest (an edit whose content cannot be sent).
	StepPush(ctx context.Context, pushID string, st PushStep) (Push, PushEffects, error)
	// DueWork lists the send work a node's schedule watch fires (see
	// WatchQuery), soonest first, at most q.Limit of each kind.
	DueWork(ctx context.Context, q WatchQuery) ([]DueWork, error)
}

// WatchQuery asks for the send work the schedule watch fires: work not
// yet begun whose time falls in [From, Until] (a scheduled push not fanned
// out, a chunk deferred to the morning not begun), and work begun that a
// run left part-way: a sending push's fan-out unfinished whose last page
// was recorded before FanoutStalled, and a deferred chunk begun and not
// completed whose range last moved before ChunkStalled.
type WatchQuery struct {
	From, Until                 time.Time
	FanoutStalled, ChunkStalled time.Time
	Limit                       int
}

// DueWork is one piece of send work the schedule watch fires at At: a
// push's fan-out, or, when Deferred, chunk Chunk of its sends, deferred
// to the morning At.
type DueWork struct {
	PushID   string
	At       time.Time
	Deferred bool
	Chunk    int
}
