package audience

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/heraldpush/herald"
)

// Segment is a filter an app saved under a name (DESIGN 13): a segment
// push reads its filter when accepted.
type Segment struct {
	ID, AppID, Name      string
	Filter               Filter
	CreatedAt, UpdatedAt time.Time
}

// The limits of segments.
const (
	// MaxSegments is how many segments an app may keep.
	MaxSegments = 500
	// MaxSegmentName is the longest name, in characters.
	MaxSegmentName = 100
)

// The refusals of a segment's store.
var (
	// ErrSegmentName refuses a name another segment of the app has.
	ErrSegmentName = &herald.Error{Code: "ERR-AB-SEG-01", Status: http.StatusConflict,
		Message: "Another segment of this app has this name.", Details: []herald.Detail{{Field: "name", Reason: "is taken: choose another or update that segment"}}}
	// ErrTooManySegments refuses a segment past MaxSegments.
	ErrTooManySegments = &herald.Error{Code: "ERR-AB-SEG-02", Status: http.StatusConflict,
		Message: "The app has as many segments as it may keep.", Details: []herald.Detail{{Field: "name", Reason: "an app keeps at most 500 segments: delete one first"}}}
)

// NameProblem says why name cannot name a segment; nil when it can.
func NameProblem(name string) *herald.Detail {
	switch {
	case strings.TrimSpace(name) == "":
		return &herald.Detail{Field: "name", Reason: "is required"}
	case utf8.RuneCountInString(name) > MaxSegmentName:
		return &herald.Detail{Field: "name", Reason: "must be at most 100 characters"}
	}
	return nil
}

// SegmentReader reads one of an app's segments (the Store's Segment).
type SegmentReader interface {
	Segment(ctx context.Context, appID, segmentID string) (Segment, error)
}

// NamedSegment is the app's segment a request names: an unknown one is
// an invalid request naming segmentId.
func NamedSegment(ctx context.Context, store SegmentReader, appID, segmentID string) (Segment, error) {
	sg, err := store.Segment(ctx, appID, segmentID)
	if errors.Is(err, herald.ErrNotFound) {
		return Segment{}, herald.Invalid(herald.Detail{Field: "segmentId", Reason: "names no segment of this app"})
	}
	return sg, err
}

// SegmentFilter is the filter of the app's segment a push names
// (NamedSegment), as canonical JSON, as it stands at accept: a segment
// edited or deleted later leaves the push as accepted.
func SegmentFilter(ctx context.Context, store SegmentReader, appID, segmentID string) ([]byte, error) {
	sg, err := NamedSegment(ctx, store, appID, segmentID)
	if err != nil {
		return nil, err
	}
	return json.Marshal(sg.Filter)
}
