package audience

import (
	"context"
	"fmt"
	"time"

	"github.com/heraldpush/herald"
)

// ErrTooManyTags refuses a tag update that would leave the user more than
// MaxTags tags: an invalid request naming tags.
var ErrTooManyTags = herald.Invalid(herald.Detail{Field: "tags",
	Reason: fmt.Sprintf("a user may have at most %d tags: delete some (a tag set to null) or set fewer", MaxTags)})

// Store is what Herald keeps for audiences: the users' tags, and what a
// filter selects.
type Store interface {
	// SetTags applies a tag update to a registered user (each named tag
	// set, or deleted when nil; the others kept) and returns the user's
	// tags after it. The limit of MaxTags is judged in the transaction
	// that writes them (ErrTooManyTags). herald.ErrUserNotFound, herald.ErrUserWithdrawn.
	SetTags(ctx context.Context, appID, userID string, set map[string]*Value) (Tags, error)
	// SetDeviceTags is SetTags for the user the device is mapped to, and
	// returns that user: herald.ErrNotFound for an unknown device,
	// herald.ErrDeviceUnmapped for one no user is mapped to,
	// herald.ErrIdentityRefused when identity (nil with verification off)
	// does not verify that user.
	SetDeviceTags(ctx context.Context, appID, deviceID string, set map[string]*Value, identity *herald.IdentityProof) (string, Tags, error)
	// ImportTags applies a batch of a tag import's rows in order, in one
	// transaction: each row's tags are set on its user, the others kept.
	// A row is skipped, not refused, when its user is unknown or
	// withdrawn (herald.SkipUnknownUser, herald.SkipWithdrawnUser) or
	// when it would leave them more than MaxTags tags (SkipTooManyTags),
	// judged in that transaction with the users' rows locked as SetTags
	// locks them. It returns how many rows it applied and the skipped
	// ones in order of line.
	ImportTags(ctx context.Context, appID string, rows []TagImportRow) (int, []TagImportSkip, error)
	// UserTags returns a user's tags, empty for none.
	UserTags(ctx context.Context, appID, userID string) (Tags, error)
	// CountAudience counts, exactly, the devices the filter selects of
	// the app's at now, and their users (each unmapped device one).
	CountAudience(ctx context.Context, appID string, f Filter, now time.Time) (Count, error)

	// CreateSegment stores a new segment (its id and times set by the
	// caller): ErrSegmentName, ErrTooManySegments (judged in the insert's
	// transaction), herald.ErrNotFound for an unknown app.
	CreateSegment(ctx context.Context, sg Segment) error
	// Segments lists an app's segments by name.
	Segments(ctx context.Context, appID string) ([]Segment, error)
	// Segment returns one of an app's segments: herald.ErrNotFound.
	Segment(ctx context.Context, appID, segmentID string) (Segment, error)
	// UpdateSegment replaces a segment's name and filter (and UpdatedAt):
	// herald.ErrNotFound, ErrSegmentName.
	UpdateSegment(ctx context.Context, sg Segment) error
	// DeleteSegment deletes a segment: herald.ErrNotFound.
	DeleteSegment(ctx context.Context, appID, segmentID string) error
}
