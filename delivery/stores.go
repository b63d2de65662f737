package delivery

import (
	"context"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/audience"
	"github.com/heraldpush/herald/sendstore"
)

// Each worker reaches the store through the narrow interface of what it
// reads and writes. Store, all of them and what accepting, editing and
// cancelling pushes need, is what Config takes, as the Service runs every
// worker.

// SendStore is what a send job's run uses (send.go, window.go): the push
// and its app, the devices a wave is judged on, and the chunk's steps.
type SendStore interface {
	App(ctx context.Context, id string) (herald.App, error)
	SetFCMWarning(ctx context.Context, id, warning string, at time.Time) error
	PushRecord(ctx context.Context, id string) (herald.Push, error)
	Recipients(ctx context.Context, pushID string) ([]herald.Recipient, error)
	DevicesByID(ctx context.Context, appID string, deviceIDs []string) (map[string]herald.Device, error)
	DevicesOfUsers(ctx context.Context, appID string, userIDs []string) (map[string][]herald.Device, error)
	TagsOfUsers(ctx context.Context, appID string, userIDs, names []string) (map[string]audience.Tags, error)
	ResumeChunk(ctx context.Context, pushID string, chunk int) (sendstore.ChunkWork, error)
	AdvanceChunk(ctx context.Context, appID, pushID string, step sendstore.ChunkStep) (marked int, stopped bool, err error)
	CompleteChunk(ctx context.Context, pushID string, chunk int) (bool, error)
	FailPush(ctx context.Context, pushID, reason string, finish herald.Job) error
	CappedUsers(ctx context.Context, appID, pushID string, userIDs []string, claim herald.CapClaim) (map[string]bool, error)
}

// FanoutStore is what a push's fan-out uses (fanout.go): the push, its
// app and recipients, the devices they resolve to, and its pages.
type FanoutStore interface {
	App(ctx context.Context, id string) (herald.App, error)
	PushRecord(ctx context.Context, id string) (herald.Push, error)
	Recipients(ctx context.Context, pushID string) ([]herald.Recipient, error)
	DevicePage(ctx context.Context, appID string, sel sendstore.Selection, after sendstore.DeviceCursor, limit int) ([]herald.Device, sendstore.DeviceCursor, error)
	CountSelected(ctx context.Context, appID string, sel sendstore.Selection) (int, error)
	DevicesOfUsers(ctx context.Context, appID string, userIDs []string) (map[string][]herald.Device, error)
	DeviceByToken(ctx context.Context, appID, token string) (herald.Device, error)
	FanoutProgress(ctx context.Context, pushID string) (sendstore.FanoutCursor, bool, error)
	StartSending(ctx context.Context, pushID string, f sendstore.Fanout) (bool, error)
}

// FinishStore is what a push's finish and its webhook jobs use
// (finish.go).
type FinishStore interface {
	App(ctx context.Context, id string) (herald.App, error)
	Push(ctx context.Context, id string) (herald.Push, error)
	Recipients(ctx context.Context, pushID string) ([]herald.Recipient, error)
	DeliveriesOf(ctx context.Context, pushID string, userIDs []string) ([]herald.Delivery, error)
	UndeliverableUsers(ctx context.Context, pushID string) ([]string, error)
	FinishPush(ctx context.Context, pushID string, unreachable []herald.Unreachable, follow []herald.Job) (bool, error)
	ReceiptUsers(ctx context.Context, pushID string) ([]string, error)
	ReleaseReceipts(ctx context.Context, pushID string, userIDs []string) error
}

// NoticeStore is what the consent notices and the daily re-confirmation
// runs use (notice.go): the apps, the consent records and due users they
// read, the devices they reach, and the claims and confirmations that make
// each notice once.
type NoticeStore interface {
	App(ctx context.Context, id string) (herald.App, error)
	ListApps(ctx context.Context) ([]herald.App, error)
	PushRecord(ctx context.Context, id string) (herald.Push, error)
	Deliveries(ctx context.Context, pushID string) ([]herald.Delivery, error)
	DevicesByID(ctx context.Context, appID string, deviceIDs []string) (map[string]herald.Device, error)
	DevicesOfUsers(ctx context.Context, appID string, userIDs []string) (map[string][]herald.Device, error)
	ConsentRecord(ctx context.Context, appID string, id int64) (herald.ConsentRecord, error)
	ConsentDue(ctx context.Context, appID string, until time.Time, limit int, cursor string) ([]herald.ConsentDue, string, error)
	ReconfirmingUsers(ctx context.Context, appID string) (map[string]bool, error)
	ReconfirmationClaimed(ctx context.Context, appID, day string) (bool, error)
	ClaimReconfirmation(ctx context.Context, appID, day string, until time.Time, p *herald.Push, rs []herald.Recipient, job herald.Job) (int, bool, error)
	RecordReconfirmed(ctx context.Context, appID, pushID string, userIDs []string, at time.Time) (bool, error)
}

// ConsentEventStore is what a consent.changed event's job uses
// (consent.go).
type ConsentEventStore interface {
	App(ctx context.Context, id string) (herald.App, error)
	ConsentEvent(ctx context.Context, appID, userID string, seq int64) (herald.ConsentRecord, herald.ConsentEventState, error)
	EndConsentEvent(ctx context.Context, appID, userID string, seq int64, end herald.ConsentEventState) (bool, error)
}
