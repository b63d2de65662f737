package herald

import "context"

// Priority is how soon a push goes out against the other pushes of its
// app's FCM project (options.priority, DESIGN.md section 14 "Priority").
type Priority string

// The priorities.
const (
	// PriorityNormal is every push's unless it asks otherwise: sent in
	// the order accepted, at the project's rate.
	PriorityNormal Priority = "normal"
	// PriorityHigh is for one-time codes and the like: sent ahead of
	// every normal push of the project, in a lane of its own with a tenth
	// of the project's rate kept for it, and marked high priority to FCM
	// (android.priority HIGH, apns-priority 10). Never a marketing push.
	PriorityHigh Priority = "high"
)

// ParsePriority reads options.priority; ok is false for any other value.
func ParsePriority(s string) (Priority, bool) {
	switch p := Priority(s); p {
	case PriorityNormal, PriorityHigh:
		return p, true
	}
	return "", false
}

// PriorityReason is why a value of options.priority is refused.
const PriorityReason = `must be "normal" or "high"`

// HighMarketingReason is why options.priority "high" is refused on a
// marketing push: the lane is for messages a person waits for.
const HighMarketingReason = `must not be "high" on a marketing push (options.isMarketing or a (광고) title)`

// High reports whether the push rides the high lane.
func (p Push) High() bool { return p.Priority == PriorityHigh }

// highWork marks a context as a high-priority push's delivery work.
type highWork struct{}

// WithHighPriority marks ctx as the delivery work of a high-priority push:
// a store whose writes wait in one queue (one writer) runs its bulk
// delivery writes ahead of the other bulk work, as it runs the writes
// that answer requests, so that a blast's row of small writes does not
// hold a one-time code back.
func WithHighPriority(ctx context.Context) context.Context {
	return context.WithValue(ctx, highWork{}, true)
}

// IsHighPriority reports whether ctx is marked by WithHighPriority.
func IsHighPriority(ctx context.Context) bool {
	high, _ := ctx.Value(highWork{}).(bool)
	return high
}
