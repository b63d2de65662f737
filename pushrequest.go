package herald

import "time"

// PushRequest is a push as a request asks for it: what the Server API
// (or the admin API's test push) read and validated from the body. What
// the push then is — its status, marketing flag, ad footer and charge —
// NewPush decides.
type PushRequest struct {
	Kind PushKind
	// Topic is the topic of a topic push; Token the token of a test push
	// to one device (KindToken).
	Topic, Token string
	// Filter is a segment push's filter (canonical JSON), SegmentID the
	// segment it names; the Server API reads the segment's filter into
	// Filter before the push is made.
	Filter    []byte
	SegmentID string
	// Localized are the entries by language, in order of Lang.
	Localized []LocalizedEntry
	// Content is the push's content; a /messages push has each message's
	// in its recipients instead.
	Content Content
	// Recipients are the users asked for (none for a topic, all-users or
	// token push, whose devices are found when it is sent).
	Recipients     []Recipient
	Badge          bool
	IsMarketingOpt bool
	NightPolicy    NightPolicy
	RequestGroupID string
	// TTL is options.ttl (see Push.TTL); nil when absent.
	TTL *int
	// Priority is options.priority ("" is PriorityNormal).
	Priority Priority
	// SpreadMinutes is options.spreadMinutes (see Push.SpreadMinutes); 0
	// when absent.
	SpreadMinutes int
	// ScheduledAt is when a scheduled push is due; nil sends it now.
	ScheduledAt *time.Time
	// LocalTime is options.localTime: each device is sent at the wall
	// clock of ScheduledAt in its own zone (see LocalStart).
	LocalTime bool
	// Test marks an operator's test push, which is charged nothing.
	Test bool
}
