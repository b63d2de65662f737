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
}

// UserStore keeps app users and their devices (token mappings).
type UserStore interface {
	// RegisterDevice upserts a device; a token another device holds moves
	// to this one. With a user ID it maps the device, registering the user
	// (again, when withdrawn).
	RegisterDevice(ctx context.Context, appID string, reg DeviceRegistration) (Device, error)
	// SetDeviceUser maps a device to a user (registering the user) or, with
	// nil, unmaps it. ErrNotFound when the device is unknown.
	SetDeviceUser(ctx context.Context, appID, deviceID string, userID *string) (Device, error)
	// SetDeviceConsent applies the in-app consent switch to one device.
	// ErrNotFound when the device is unknown; ErrInvalidRequest on a change
	// the device's pair cannot take.
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
}

// Job is a unit of durable work, stored in the same transaction as the data
// it acts on (River's JobArgs has the same shape).
type Job interface{ Kind() string }

// Idempotency is the Idempotency-Key of a request and a hash of its body.
type Idempotency struct {
	Key  string
	Hash []byte
}

// Fanout is one page of a push's fan-out: its deliveries (seq and chunk
// numbers continue From's; the pending ones become their chunks' slots, in
// order of seq, the final ones rows) and one job per chunk. A page is
// recorded only where the fan-out still stands at From, and leaves it at
// To; the last page (More false) ends the fan-out, and Finish is queued
// with it when no chunk is left open. A topic or all-users push also
// records the users it targets (To.Users in all), and its charge for this
// page's new ones.
type Fanout struct {
	From, To   FanoutCursor
	More       bool
	Deliveries []Delivery
	Jobs       []Job
	Finish     Job
	ChargeHalf int64
	// Deferred are the page's chunks that wait for the morning (see
	// NightDefer); their jobs are among Jobs.
	Deferred []DeferredChunk
}

// FanoutCursor is how far a push's fan-out has gone: the devices read, and
// the seqs, chunks and targeted users (topic and all-users pushes: each
// user, and each device no user is mapped to) recorded so far.
type FanoutCursor struct {
	After      DeviceCursor
	Seq, Chunk int
	Users      int
}

// Start reports whether the cursor is the fan-out's start.
func (c FanoutCursor) Start() bool {
	return c.After == (DeviceCursor{}) && c.Seq == 0 && c.Chunk == 0
}

// DeviceCursor is a position in the order in which a topic or all-users
// push reads an app's devices: first those no user is mapped to, by id,
// then the mapped ones by user and id, so that a user's devices follow
// each other. The zero cursor is before the first device.
type DeviceCursor struct {
	Mapped   bool
	UserID   string
	DeviceID string
}

// PushStore keeps pushes and their recipients: what accepting a push and
// reading one need. Every method that takes jobs inserts them in the same
// transaction as its writes.
type PushStore interface {
	// AcceptPush stores a push, its recipients, its charge and job at once.
	// With an idempotency key used before it stores nothing and returns the
	// first push's id and replayed; ErrIdempotencyReuse when the body differs.
	AcceptPush(ctx context.Context, p Push, rs []Recipient, idem *Idempotency, job Job) (id string, replayed bool, err error)
	// IdempotentPush returns the push an idempotency key, used within the
	// last 24 hours, stands for: found is false when there is none;
	// ErrIdempotencyReuse when the key came with another body.
	IdempotentPush(ctx context.Context, appID string, idem Idempotency, now time.Time) (p Push, found bool, err error)
	// Push returns a push with its counts. ErrNotFound.
	Push(ctx context.Context, id string) (Push, error)
	// PushRecord returns a push without its counts, which cost a pass over
	// its deliveries. ErrNotFound.
	PushRecord(ctx context.Context, id string) (Push, error)
	// PushStatus returns only a push's status. ErrNotFound.
	PushStatus(ctx context.Context, id string) (PushStatus, error)
	// Recipients returns a push's requested users in request order; none
	// for an unknown push.
	Recipients(ctx context.Context, pushID string) ([]Recipient, error)
}

// DeliveryStore is what the send path needs: the devices a push goes to,
// and every transition of its fan-out, chunks, deliveries and end. Each
// transition is a guarded write, correct with several writers at once.
type DeliveryStore interface {
	// DevicesByID returns those of the devices that still exist.
	DevicesByID(ctx context.Context, appID string, deviceIDs []string) (map[string]Device, error)
	// DevicePage returns, in DeviceCursor's order, at most limit of the
	// app's devices after the cursor (with a topic, those subscribed to
	// it), and the cursor after the last one returned. Fewer than limit
	// means there are no more.
	DevicePage(ctx context.Context, appID, topic string, after DeviceCursor, limit int) ([]Device, DeviceCursor, error)
	// DevicesOfUsers returns the devices mapped to each of the users.
	DevicesOfUsers(ctx context.Context, appID string, userIDs []string) (map[string][]Device, error)
	// DeviceByToken returns the app's device that holds the token now.
	// ErrNotFound when none does.
	DeviceByToken(ctx context.Context, appID, token string) (Device, error)
	// FanoutProgress returns where a push's fan-out stands, and whether it
	// has ended. ErrNotFound.
	FanoutProgress(ctx context.Context, pushID string) (FanoutCursor, bool, error)
	// StartSending records a page of a push's fan-out. The first page
	// (From the zero cursor) starts a push still waiting for its fan-out
	// (AwaitingFanout); the others continue a sending push whose fan-out
	// has not ended and stands at From. It returns false when the push was
	// not there, so of several fan-outs at once exactly one records each
	// page; ErrNotFound for an unknown push. The push's finish is queued
	// once its last page is recorded and every chunk completed.
	StartSending(ctx context.Context, pushID string, f Fanout) (bool, error)
	// ResumeChunk returns the chunk's work. Slots a run marked in flight
	// and never settled (it died) first become open rows in flight: sent
	// again, they are recorded as resent. A chunk that was never recorded
	// has no work.
	ResumeChunk(ctx context.Context, pushID string, chunk int) (ChunkWork, error)
	// AdvanceChunk writes one step of a chunk's progress and returns where
	// its in-flight range now ends: step.Marked+step.Mark, or the position
	// of the first target whose device no longer holds that token (or is
	// no longer mapped to its Owner), the slots before it marked and the
	// rest left to be judged again. Once the push failed nothing more is
	// marked. ErrChunkMoved, writing nothing, when the chunk's cursor or
	// range is no longer step.Settled and step.Marked.
	AdvanceChunk(ctx context.Context, appID, pushID string, step ChunkStep) (int, error)
	// MarkInflight records that open rows (ChunkWork.Open) are about to be
	// sent, each to the device and token it was resolved to now, and
	// returns the seqs it marked: a target whose device no longer holds
	// that token (or is no longer mapped to its Owner) is left as it was,
	// to be judged again; one in flight already is marked resent.
	MarkInflight(ctx context.Context, appID, pushID string, ts []SendTarget) ([]int, error)
	// RecordOutcomes records the send results of rows and drops dead
	// tokens.
	RecordOutcomes(ctx context.Context, appID, pushID string, os []Outcome) error
	// CompleteChunk marks a chunk finished and, when it was the last one,
	// inserts finish: once, however many complete at once.
	CompleteChunk(ctx context.Context, pushID string, chunk int, finish Job) error
	// FailPush ends a push that cannot be sent: its open deliveries fail
	// with the reason, and finish is inserted.
	FailPush(ctx context.Context, pushID, reason string, finish Job) error
	// Deliveries returns every delivery of a push.
	Deliveries(ctx context.Context, pushID string) ([]Delivery, error)
	// DeliveriesOf returns the deliveries of a push to the users, by seq.
	DeliveriesOf(ctx context.Context, pushID string, userIDs []string) ([]Delivery, error)
	// UndeliverableUsers returns the users with a delivery of the push
	// that is undeliverable, each once.
	UndeliverableUsers(ctx context.Context, pushID string) ([]string, error)
	// FinishPush records the unreachable users and the push's end (done,
	// unless it already failed), with the follow-up jobs. It returns false
	// when the push had already finished: exactly one finish records.
	FinishPush(ctx context.Context, pushID string, unreachable []Unreachable, follow []Job) (bool, error)
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
}

// ScheduleStore changes scheduled pushes. Both methods run check (and edit)
// inside the transaction, so the deadline is judged on the stored push.
type ScheduleStore interface {
	// EditScheduled applies edit to the push and stores the result; when
	// edit returns a job (the send time moved) the old job is cancelled and
	// the new one inserted. ErrNotFound, or edit's error.
	EditScheduled(ctx context.Context, pushID string, edit func(p *Push) (Job, error)) (Push, error)
	// CancelScheduled cancels the push after check passes and refunds its
	// charge. ErrNotFound, or check's error.
	CancelScheduled(ctx context.Context, pushID string, check func(p Push) error) (Push, error)
	// CancelDeferred cancels the deferred part of a sending push (see
	// NightDefer) after check passes on its time: its deliveries become
	// suppressed by the night, their users are refunded, and finish is
	// queued when nothing else is open. ErrScheduleLocked when there is no
	// deferred part left that has not begun; check's error.
	CancelDeferred(ctx context.Context, pushID string, check func(until time.Time) error, finish Job) (Push, error)
}

// SessionStore keeps the dashboard's sessions, so that a session made on
// one node works on every node and signing out ends it everywhere. IDs are
// hashes of the cookie's nonce, never the cookie itself.
type SessionStore interface {
	// CreateSession records a session that ends at expires.
	CreateSession(ctx context.Context, id string, expires time.Time) error
	// SessionExpires returns when a session ends; ErrNotFound when there is
	// none (never made, or signed out).
	SessionExpires(ctx context.Context, id string) (time.Time, error)
	// DeleteSession ends a session; ending an unknown one is no error.
	DeleteSession(ctx context.Context, id string) error
}
