package herald

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// PushKind is what a push targets.
type PushKind string

// The push kinds.
const (
	KindUsers    PushKind = "users"
	KindMessages PushKind = "messages"
	KindTopic    PushKind = "topic"
	KindAll      PushKind = "all"
	// KindSegment goes to the devices a filter selects when it is sent
	// (DESIGN 13): Push.Filter, given or a segment's.
	KindSegment PushKind = "segment"
	// KindToken is a test push to one token, from the admin API.
	KindToken PushKind = "token"
)

// KindRule is how a push of one kind finds its recipients, counts and
// charges them: the rule fan-out, sending, the finish and the store all
// apply. Read it through Push.Rule, which knows a push to a token.
type KindRule struct {
	// Targeted: the push goes to devices found at send time (a topic's
	// subscribers, every device, the device holding a token) rather than
	// to users named in the request; the users it may fail to reach are
	// those found with an undeliverable token.
	Targeted bool
	// Personal: each delivery is for a user the push names, so a device
	// is sent to only while it is still mapped to that user. A targeted
	// push goes to the device itself, whoever uses it then.
	Personal bool
	// Charged: the push costs HalfPerUser for each user it is for (see
	// Push.Cost); a test push to a token and Herald's own notices are not
	// charged.
	Charged bool
	// CountsUsers: the users its fan-out finds are counted as its
	// requested users (and, when charged, charged for) as it fans out
	// (topic, all users).
	CountsUsers bool
	// PerRecipient: each recipient has content of its own (the messages
	// of /messages, a re-confirmation run's notices with each user's
	// consent date), read back when its slots are sent.
	PerRecipient bool
	// Informational: a notice Herald makes itself (consent notices, art.
	// 50(7) and (8)): sent whatever the user's consent and the hour, never
	// charged.
	Informational bool
	// Templated: its content is the app's notice templates, from which
	// each recipient's notice is rendered (see App.ShownContent).
	Templated bool
	// ConfirmsOnFinish: its finish records the users it reached as having
	// confirmed their consent (a re-confirmation run, art. 50(8)).
	ConfirmsOnFinish bool
}

// kindRules holds each kind's rule; a new kind is one line here.
var kindRules = map[PushKind]KindRule{
	KindUsers:          {Personal: true, Charged: true},
	KindMessages:       {Personal: true, Charged: true, PerRecipient: true},
	KindTopic:          {Targeted: true, Charged: true, CountsUsers: true},
	KindAll:            {Targeted: true, Charged: true, CountsUsers: true},
	KindSegment:        {Targeted: true, Charged: true, CountsUsers: true},
	KindToken:          {Targeted: true},
	KindConsentNotice:  {Personal: true, Informational: true},
	KindReconfirmation: {Personal: true, PerRecipient: true, Informational: true, Templated: true, ConfirmsOnFinish: true},
}

// Rule is the push's rule: its kind's (an unknown kind is treated as
// personal), except that one to a token (a test push, or a consent notice
// to a device no user is mapped to) goes to the device holding the token,
// whoever uses it then. It is the only way to the rule, so that no reader
// of a push's kind alone can miss its token.
func (p Push) Rule() KindRule {
	r, ok := kindRules[p.Kind]
	if !ok {
		r = KindRule{Personal: true}
	}
	if p.Token != "" {
		r.Targeted, r.Personal = true, false
	}
	return r
}

// Cost is what the push costs for users of the users it is for, in half
// units: HalfPerUser each when it is charged (KindRule.Charged), nothing
// otherwise. It is the one price: the accept charges a push's requested
// users with it (App.PushCharge), a topic or all-users fan-out each user
// it finds, the dashboard's review shows it, and cancelling a deferred
// part refunds it for each user sent nothing else.
func (p Push) Cost(users int) int64 {
	if !p.Rule().Charged {
		return 0
	}
	return int64(users) * HalfPerUser
}

// PushGate opens push making to an app: it must be registered
// (ErrAppNotFound) and have FCM credentials (ErrNoFCM). Each way of making
// a push checks it once, where its answer belongs: the Server API's push
// routes before the body is read, request.ReadPush for the dashboard, the
// admin API's test push. NewPush does not check it again.
func PushGate(a App) error {
	switch {
	case !a.Registered:
		return ErrAppNotFound
	case len(a.FCMCredentials) == 0:
		return ErrNoFCM
	}
	return nil
}

// NewPush makes the push app (open by PushGate) is asked for at now,
// ready to be accepted: refused by the ad footer's rule when it is
// marketing and the app lacks a footer setting or a message would grow
// past FCM's limit with it (ErrInvalidRequest, see FixAdFooter). See
// buildPush for what it is made.
func NewPush(app App, req PushRequest, now time.Time) (Push, error) {
	p := buildPush(app, NewID("push_", now), req, now)
	if p.High() && p.Marketing {
		return Push{}, Invalid(Detail{Field: "options.priority", Reason: HighMarketingReason})
	}
	if p.Spread() && p.High() {
		return Push{}, Invalid(Detail{Field: "options.spreadMinutes", Reason: SpreadHighReason})
	}
	if p.Spread() && p.NightPolicy == NightDefer {
		return Push{}, Invalid(Detail{Field: "options.spreadMinutes", Reason: SpreadDeferReason})
	}
	if p.Spread() && p.LocalTime {
		return Push{}, Invalid(Detail{Field: "options.spreadMinutes", Reason: SpreadLocalReason})
	}
	// The ad footer (art. 50(4)) is fixed now: refused when the app lacks
	// a setting, counted in each marketing message's payload.
	if err := p.FixAdFooter(app, req.Recipients); err != nil {
		return Push{}, err
	}
	return p, nil
}

// buildPush is the one builder of every push (NewPush, NewConsentNotice,
// NewReconfirmation): app's push with id, made at now. It is marketing
// when marked options.isMarketing or when a title (the push's, or any
// message's) starts with "(광고)", unless it is Herald's own notice;
// scheduled when it has a time, else sending; a push to a token is to one
// device. It is charged its requested users (App.PushCharge: what its
// kind costs, on the app's ledger unless a sandbox), a test push nothing;
// one the app's approval setting takes waits for approval, uncharged.
func buildPush(app App, id string, req PushRequest, now time.Time) Push {
	p := Push{
		ID: id, AppID: app.ID, Kind: req.Kind, Topic: req.Topic, Token: req.Token, Filter: req.Filter, SegmentID: req.SegmentID,
		Localized: req.Localized, Status: StatusSending, Content: req.Content, Badge: req.Badge, IsMarketingOpt: req.IsMarketingOpt,
		NightPolicy: req.NightPolicy, RequestGroupID: req.RequestGroupID, ScheduledAt: req.ScheduledAt, LocalTime: req.LocalTime, TTL: req.TTL,
		Priority: req.Priority, SpreadMinutes: req.SpreadMinutes, CreatedAt: now.UTC().Truncate(time.Millisecond), RequestedUsers: len(req.Recipients),
	}
	if p.ScheduledAt != nil {
		p.Status = StatusScheduled
	}
	if p.Token != "" {
		p.RequestedUsers = 1
	}
	if !req.Test {
		c := app.PushCharge(p, len(req.Recipients), p.CreatedAt)
		p.ServerActionsHalf, p.Ledger = c.Half, c.Ledger
	}
	if !p.Rule().Informational {
		p.Marketing = p.markedMarketing()
		for _, rc := range req.Recipients {
			p.Marketing = p.Marketing || p.MarketingFor(rc)
		}
	}
	if !req.Test && app.Approval.Needs(p) {
		p.awaitApproval()
	}
	return p
}

// PushStatus is where a push is in its life: scheduled pushes wait for their
// time (or are cancelled); sending ones are being fanned out; done once every
// recipient has a final outcome; failed when the push as a whole could not
// be sent; held when a restored store stopped it until an operator
// releases or cancels it (see HoldStore); awaiting approval until another
// operator approves it (it is then sending or scheduled) or rejects it
// (rejected), or until it lapses (approval expired; see ApprovalSetting).
type PushStatus string

// The push statuses.
const (
	StatusScheduled PushStatus = "scheduled"
	StatusCancelled PushStatus = "cancelled"
	StatusSending   PushStatus = "sending"
	StatusDone      PushStatus = "done"
	StatusFailed    PushStatus = "failed"
	StatusHeld      PushStatus = "held"

	StatusAwaitingApproval PushStatus = "awaiting_approval"
	StatusRejected         PushStatus = "rejected"
	StatusApprovalExpired  PushStatus = "approval_expired"
)

// PushStatuses lists every status.
var PushStatuses = []PushStatus{StatusScheduled, StatusCancelled, StatusSending, StatusDone, StatusFailed, StatusHeld,
	StatusAwaitingApproval, StatusRejected, StatusApprovalExpired}

// ReasonPushStatus is the validation reason of a status filter that names
// no status.
const ReasonPushStatus = "must be scheduled, cancelled, sending, done, failed, held, awaiting_approval, rejected or approval_expired"

// Valid reports whether s is one of the statuses.
func (s PushStatus) Valid() bool { return slices.Contains(PushStatuses, s) }

// Ended reports whether a push in status s has ended: nothing more of it
// is sent.
func (s PushStatus) Ended() bool {
	switch s {
	case StatusCancelled, StatusDone, StatusFailed, StatusRejected, StatusApprovalExpired:
		return true
	}
	return false
}

// Content is what a notification shows.
type Content struct {
	Title    string `json:"title"`
	Content  string `json:"content"`
	LinkURL  string `json:"linkURL,omitempty"`
	ImageURL string `json:"imageURL,omitempty"`
}

// LocalizedEntry is a push's title and content for devices of one
// language: Lang is a BCP 47 tag as the request gave it.
type LocalizedEntry struct {
	Lang    string `json:"lang"`
	Title   string `json:"title"`
	Content string `json:"content"`
}

// EntryContent is the content a device of the entry's language is sent:
// the push's, with the entry's title and body.
func (p Push) EntryContent(e LocalizedEntry) Content {
	c := p.Content
	c.Title, c.Content = e.Title, e.Content
	return c
}

// Recipient is one requested user of a push; on /messages it carries its own
// content.
type Recipient struct {
	UserID  string
	Content *Content
}

// Push is a push request and its history record.
type Push struct {
	ID    string
	AppID string
	Kind  PushKind
	// Topic is the topic of a topic push.
	Topic string
	// Token is the token of a token push.
	Token string
	// Filter is a segment push's filter as accepted, its canonical JSON
	// (package audience reads it); SegmentID the segment it was read
	// from, "" for a filter given in the request.
	Filter    json.RawMessage
	SegmentID string
	// Localized are the push's entries by language (options of every
	// push but /messages, DESIGN 13), in order of Lang; the device's
	// locale picks one at send time (package render), the others keep
	// the default Content.
	Localized      []LocalizedEntry
	RequestGroupID string
	Status         PushStatus
	FailureReason  string
	// Marketing is options.isMarketing or a (광고) title; on /messages each
	// message's own title counts too.
	Marketing      bool
	IsMarketingOpt bool
	Content        Content
	Badge          bool
	ScheduledAt    *time.Time
	CreatedAt      time.Time
	StartedAt      *time.Time
	FinishedAt     *time.Time
	// ServerActionsHalf is the charge in half Server Actions.
	ServerActionsHalf int64
	// Ledger is what accepting the push writes to the app's usage ledger
	// (its Charge as NewPush made it); the store writes it as given and
	// does not read it back.
	Ledger         []UsageEntry
	RequestedUsers int
	Counts         Counts
	Edits          []Edit
	// Approvals are the steps of its approval (see ApprovalSetting), the
	// request first; none for a push that did not wait for one.
	Approvals []Approval
	// NightPolicy is options.nightPolicy ("" is NightSkip).
	NightPolicy NightPolicy
	// LocalTime is options.localTime: each device is sent when its own
	// zone's clock reads the push's wall-clock time (LocalWall), its
	// ScheduledAt the first zone's (LocalStart).
	LocalTime bool
	// NextLocalAt is when the push's next zone part is sent: set while a
	// local-time push has one waiting.
	NextLocalAt *time.Time
	// TTL is options.ttl: how many seconds the push service keeps each
	// message for a device that is offline, counted from its send (see
	// MaxTTL); nil when not given (the push service's default, 4 weeks).
	TTL *int
	// Priority is options.priority ("" is PriorityNormal).
	Priority Priority
	// SpreadMinutes is options.spreadMinutes: the push's users are sent
	// evenly over that many minutes from its start (see SpreadDue); 0
	// when not spread. SpreadUsers is how many users its fan-out counted
	// at its start (each device no user is mapped to as one), the
	// spread's denominator; 0 until then.
	SpreadMinutes int
	SpreadUsers   int
	// DeferredUntil is when the push's deferred part (see NightDefer) is
	// sent: set, with Counts.DeferredNight, while one waits.
	DeferredUntil *time.Time
	// AdFooter is the text appended to the body of each marketing message
	// (App.AdFooter), fixed when the push was accepted; "" when none.
	AdFooter string
	// ExpiredAt is when retention cleared the push's body (its content,
	// recipients and the rows its send left, DESIGN section 12); nil
	// while it is kept. Its counts stay as they were.
	ExpiredAt *time.Time
}

// markedMarketing reports whether the push is marked marketing by
// options.isMarketing or by a title, its own or a localized entry's, that
// starts with (광고): a push of one text for every recipient is marketing
// for all of them when any of its variants is.
func (p Push) markedMarketing() bool {
	if p.IsMarketingOpt || IsMarketingTitle(p.Content.Title) {
		return true
	}
	for _, e := range p.Localized {
		if IsMarketingTitle(e.Title) {
			return true
		}
	}
	return false
}

// MarketingFor reports whether a recipient's message is marketing.
func (p Push) MarketingFor(r Recipient) bool {
	if p.Rule().Informational {
		return false // a consent notice is sent whatever the consent
	}
	if r.Content != nil {
		return p.IsMarketingOpt || IsMarketingTitle(r.Content.Title)
	}
	return p.markedMarketing()
}

// MarketingRule names the rule that made the push marketing:
// MarketingByOption when the request marked it so (its title may carry the
// prefix too), MarketingByTitle when only a title did; "" when it is not
// marketing.
func (p Push) MarketingRule() string {
	switch {
	case p.IsMarketingOpt:
		return MarketingByOption
	case p.Marketing:
		return MarketingByTitle
	}
	return ""
}

// ContentFor returns what a recipient is shown.
func (p Push) ContentFor(r Recipient) Content {
	if r.Content != nil {
		return *r.Content
	}
	return p.Content
}

// Counts are a push's outcome counters.
type Counts struct {
	RequestedUsers    int `json:"requestedUsers"`
	Tokens            int `json:"tokens"`
	Sent              int `json:"sent"`
	Failed            int `json:"failed"`
	SuppressedConsent int `json:"suppressedConsent"`
	SuppressedNight   int `json:"suppressedNight"`
	// SuppressedCap counts the tokens of users skipped by the app's
	// frequency cap (MarketingCap).
	SuppressedCap int `json:"suppressedCap"`
	// DeferredNight counts the tokens of a push with options.nightPolicy
	// "defer" that wait for the morning (see NightDefer).
	DeferredNight int `json:"deferredNight"`
	Unreachable   int `json:"unreachable"`
	// LateLocal counts the devices of a local-time push sent at once
	// because their zone's time had passed when it was accepted.
	LateLocal int `json:"lateLocal"`
	// BadgeUnsupported and ImageUnsupported count messages sent to devices
	// whose app version is too old to show the badge (below 1.5.0) or the
	// image (below 1.6.0).
	BadgeUnsupported int `json:"badgeUnsupported"`
	ImageUnsupported int `json:"imageUnsupported"`

	// Received and Opened count the devices that reported the push
	// received or opened (POST /api/sdk/v2/events); an opened push counts
	// as received too.
	Received int `json:"received"`
	Opened   int `json:"opened"`
}

// OpenRate is Opened / Sent, and false when nothing was sent.
func (c Counts) OpenRate() (float64, bool) {
	if c.Sent == 0 {
		return 0, false
	}
	return float64(c.Opened) / float64(c.Sent), true
}

// Add sums counters, for a merged history entry.
func (c *Counts) Add(o Counts) {
	c.RequestedUsers += o.RequestedUsers
	c.Tokens += o.Tokens
	c.Sent += o.Sent
	c.Failed += o.Failed
	c.SuppressedConsent += o.SuppressedConsent
	c.SuppressedNight += o.SuppressedNight
	c.SuppressedCap += o.SuppressedCap
	c.DeferredNight += o.DeferredNight
	c.LateLocal += o.LateLocal
	c.Unreachable += o.Unreachable
	c.BadgeUnsupported += o.BadgeUnsupported
	c.ImageUnsupported += o.ImageUnsupported
	c.Received += o.Received
	c.Opened += o.Opened
}

// Edit is one entry of a push's edit trail: an operator's edit of a
// scheduled push, or the cancel of a night-deferred part.
type Edit struct {
	At      time.Time         `json:"at"`
	Changes map[string]string `json:"changes"`
	// From holds the values the changed fields had before the edit, as
	// text in the same form; edits recorded before it was kept lack it.
	From map[string]string `json:"from,omitempty"`
	// DeferredCancelled, on the entry of a cancelled deferred part, says
	// what was cancelled and refunded.
	DeferredCancelled *DeferredCancel `json:"deferredCancelled,omitempty"`
}

// Limits of spec section 8 and DESIGN.md section 5.
const (
	MaxMessages       = 200
	MaxUserIDs        = 500
	MaxMessagesBody   = 150 * 1024
	MaxLinkURL        = 255
	MaxImageURL       = 500
	MinRequestGroupID = 5
	MaxRequestGroupID = 20
	ScheduleLead      = 60 * time.Second
	ScheduleHorizon   = 366 * 24 * time.Hour
	EditDeadline      = 5 * time.Minute
	MaxIdempotencyKey = 255
	IdempotencyWindow = 24 * time.Hour
)

// MaxTopicLen bounds a topic name, as FCM does.
const MaxTopicLen = 900

// TopicProblem returns why s is not a valid topic, or "": 1 to 900
// characters of letters, digits and - _ . ~ %, as FCM allows.
func TopicProblem(s string) string {
	if s == "" || len(s) > MaxTopicLen {
		return "must be 1 to 900 characters"
	}
	for _, c := range s {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.ContainsRune("-_.~%", c)) {
			return "may contain only letters, digits and - _ . ~ %"
		}
	}
	return ""
}

// RequestGroupIDProblem returns why s is not a valid requestGroupId, or "":
// 5 to 20 printable ASCII characters, without ' " \ and backtick, with at
// least one letter.
func RequestGroupIDProblem(s string) string {
	n := utf8.RuneCountInString(s)
	if n < MinRequestGroupID || n > MaxRequestGroupID {
		return "must be 5 to 20 characters"
	}
	letter := false
	for _, c := range s {
		switch {
		case c < 0x21 || c > 0x7e:
			return "may contain only letters, digits and printable special characters"
		case c == '\'' || c == '"' || c == '\\' || c == '`':
			return "must not contain ' \" \\ or `"
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			letter = true
		}
	}
	if !letter {
		return "must contain at least one letter"
	}
	return ""
}

var scheduleTimePattern = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$`)

// scheduleOffsetPattern matches a date-time with a UTC offset or Z, which
// a scheduleTime may not carry: it is read in the app's time zone.
var scheduleOffsetPattern = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([zZ]|[+-]\d{2}(:?\d{2})?)$`)

// ScheduleLayout is how a scheduleTime is written: a wall-clock minute.
const ScheduleLayout = "2006-01-02T15:04"

// ParseScheduleTime reads a scheduleTime in the app's time zone: it must
// match the pattern, name a minute that exists there (no 02-30, no time
// skipped by a DST change) and lie at least 60 s after received (exactly 60 s
// is accepted). The second result is the problem, or "": a time too soon
// names the zone and the local time now there, since a newcomer reading
// it in UTC or their own zone would not see why; so do a time too far
// ahead and one written with an offset or Z, which is not accepted.
func ParseScheduleTime(s string, loc *time.Location, received time.Time) (time.Time, string) {
	if scheduleOffsetPattern.MatchString(s) {
		return time.Time{}, "must have the format YYYY-MM-DDTHH:MM, without an offset: offsets and Z are not accepted; " +
			"the time is read in the app's time zone (" + loc.String() + ")"
	}
	if !scheduleTimePattern.MatchString(s) {
		return time.Time{}, "must have the format YYYY-MM-DDTHH:MM (no seconds, no offset), a time read in the app's time zone (" + loc.String() + ")"
	}
	t, err := time.ParseInLocation(ScheduleLayout, s, loc)
	if err != nil || t.Format(ScheduleLayout) != s {
		return time.Time{}, "must be a real date and time in the app's time zone (" + loc.String() + ")"
	}
	if t.Sub(received) < ScheduleLead {
		return time.Time{}, fmt.Sprintf("must be at least 60 seconds after the request: it is read in the app's time zone, %s, where it is now %s",
			loc, received.In(loc).Format("2006-01-02T15:04:05"))
	}
	if t.Sub(received) > ScheduleHorizon {
		return time.Time{}, fmt.Sprintf("must be at most 366 days ahead: it is read in the app's time zone, %s, where it is now %s "+
			"(offsets are not accepted)", loc, received.In(loc).Format("2006-01-02T15:04:05"))
	}
	return t, ""
}

// NetServerActionsHalf is what the push costs after its refunds, in half
// units: nothing once cancelled before it began (Refund gives back each
// charge whole); a push cancelled while it sent (held, or spread) keeps
// its charge, as the ledger does; a cancelled night-deferred part is
// already deducted from ServerActionsHalf when it is refunded
// (DeferRefund). The admin JSON and its sums show this, as the usage
// ledger does.
func (p Push) NetServerActionsHalf() int64 {
	if p.Status == StatusCancelled && p.StartedAt == nil {
		return 0
	}
	return p.ServerActionsHalf
}

// ServerActions turns half units into Server Actions (0.5 each).
func ServerActions(half int64) float64 { return float64(half) / 2 }

// LengthProblem checks an optional string against a limit in code points.
func LengthProblem(s string, max int) string {
	if utf8.RuneCountInString(s) > max {
		return fmt.Sprintf("must be at most %d characters", max)
	}
	return ""
}

// CheckEditable tells whether a scheduled push may still be edited or
// cancelled at now: only while scheduled, and until 5 minutes before its
// send time (exactly 5 minutes before is still allowed). The refusal
// keeps its message and says in details why this push cannot be: it was
// never scheduled (sent at once), its time has come, or it is too close.
func (p Push) CheckEditable(now time.Time) error {
	switch {
	case p.Status == StatusAwaitingApproval:
		return ErrScheduleLocked.With(Detail{Field: "status", Reason: "is awaiting_approval: a push is edited only once approved, " +
			"while scheduled; cancel it, or reject it, and send it anew"})
	case p.ScheduledAt == nil:
		return ErrScheduleLocked.With(Detail{Field: "status", Reason: fmt.Sprintf("is %s: this push was not scheduled, it was sent at once; "+
			"only a scheduled push can be edited or cancelled, until 5 minutes before its send time", p.Status)})
	case p.Status != StatusScheduled:
		return ErrScheduleLocked.With(Detail{Field: "status", Reason: fmt.Sprintf("is %s: this push is no longer scheduled; "+
			"a scheduled push can be edited or cancelled only while it is scheduled, until 5 minutes before its send time", p.Status)})
	case p.ScheduledAt.Sub(now) < EditDeadline:
		left := "already past"
		if d := p.ScheduledAt.Sub(now); d >= 0 {
			left = d.Round(time.Second).String() + " from now"
		}
		return ErrScheduleLocked.With(Detail{Field: "scheduledAt", Reason: fmt.Sprintf("is %s, %s: a scheduled push can be "+
			"edited or cancelled until 5 minutes before its send time", p.ScheduledAt.UTC().Format(time.RFC3339), left)})
	}
	return nil
}

// PushChange is an operator's edit of a scheduled push; nil fields keep
// their value.
type PushChange struct {
	Title, Content, LinkURL, ImageURL *string
	Badge                             *bool
	ScheduledAt                       *time.Time
	// Localized, when set, replaces the push's localized entries (empty
	// removes them), by language.
	Localized *[]LocalizedEntry
	// AdPrefixRequired is the app's rule (App.NoAdPrefixCheck unset): a
	// new title of a push marked options.isMarketing must start with
	// AdPrefix.
	AdPrefixRequired bool
	// App, when set, is the push's app: an edit that makes the push
	// marketing takes the app's ad footer (refused when a setting is
	// unset), and the footer counts in the payload check. A push that was
	// marketing keeps the footer it was accepted with.
	App *App
}

// Problems returns what is wrong with the change's fields: a title or
// content given empty, a link or image over its length.
func (c PushChange) Problems() []Detail {
	var d []Detail
	for _, f := range []struct {
		name string
		v    *string
	}{{"title", c.Title}, {"content", c.Content}} {
		if f.v != nil && strings.TrimSpace(*f.v) == "" {
			d = append(d, Detail{Field: f.name, Reason: "must not be empty"})
		}
	}
	for _, f := range []struct {
		name string
		v    *string
		max  int
	}{{"linkURL", c.LinkURL, MaxLinkURL}, {"imageURL", c.ImageURL, MaxImageURL}} {
		if f.v != nil {
			if reason := LengthProblem(*f.v, f.max); reason != "" {
				d = append(d, Detail{Field: f.name, Reason: reason})
			}
		}
	}
	return d
}

// Apply edits p as of now, recording the edit in its trail. moved reports
// that the send time changed. ErrScheduleLocked once the push is no longer
// editable; ErrInvalidRequest, naming the member, when the edited content
// could not be sent because its FCM payload would exceed MaxFCMPayload (p is
// left unchanged then).
func (c PushChange) Apply(p *Push, now time.Time) (moved bool, err error) {
	if err := p.CheckEditable(now); err != nil {
		return false, err
	}
	if d := c.textProblems(*p); len(d) > 0 {
		return false, Invalid(d...)
	}
	if p.High() && c.applied(*p).markedMarketing() {
		return false, Invalid(Detail{Field: "title", Reason: "must not make a high-priority push marketing: " + HighMarketingReason})
	}
	footer, err := c.adFooter(*p)
	if err != nil {
		return false, err
	}
	changes, from := map[string]string{}, map[string]string{}
	set := func(field string, dst *string, v *string) {
		if v != nil && *v != *dst {
			from[field] = *dst
			*dst, changes[field] = *v, *v
		}
	}
	set("title", &p.Content.Title, c.Title)
	set("content", &p.Content.Content, c.Content)
	set("linkURL", &p.Content.LinkURL, c.LinkURL)
	set("imageURL", &p.Content.ImageURL, c.ImageURL)
	if c.Badge != nil && *c.Badge != p.Badge {
		from["isUsingBadge"] = fmt.Sprint(p.Badge)
		p.Badge = *c.Badge
		changes["isUsingBadge"] = fmt.Sprint(p.Badge)
	}
	if c.Localized != nil && !slices.Equal(*c.Localized, p.Localized) {
		was, _ := json.Marshal(p.Localized)
		now, _ := json.Marshal(*c.Localized)
		from["localized"], changes["localized"] = string(was), string(now)
		p.Localized = slices.Clone(*c.Localized)
	}
	if c.ScheduledAt != nil && !c.ScheduledAt.Equal(*p.ScheduledAt) {
		from["scheduledAt"] = p.ScheduledAt.UTC().Format(time.RFC3339)
		t := *c.ScheduledAt
		p.ScheduledAt, moved = &t, true
		changes["scheduledAt"] = t.UTC().Format(time.RFC3339)
	}
	p.Marketing = p.markedMarketing()
	p.AdFooter = footer
	if len(changes) > 0 {
		p.Edits = append(p.Edits, Edit{At: now.UTC(), Changes: changes, From: from})
	}
	return moved, nil
}

// adFooter returns the footer p has after the change: its own when it was
// marketing and stays so, the app's when the change makes it marketing, ""
// when it is not marketing; see Push.FixAdFooter for the errors.
func (c PushChange) adFooter(p Push) (string, error) {
	if c.App == nil {
		return p.AdFooter, nil
	}
	q := c.applied(p)
	q.Marketing = q.markedMarketing()
	if !q.Marketing || q.AdFooter == "" {
		if err := q.FixAdFooter(*c.App, nil); err != nil {
			return "", err
		}
		return q.AdFooter, nil
	}
	if d := q.footerPayloadProblems(nil); len(d) > 0 {
		return "", Invalid(d...)
	}
	return q.AdFooter, nil
}

// textProblems judges the texts p has after the change as its accept
// judged them: each message within FCM's payload limit with the push's
// links, and, on a push marked options.isMarketing whose app checks it,
// the (광고) prefix on each title the change gives.
func (c PushChange) textProblems(p Push) []Detail {
	q := c.applied(p)
	var d []Detail
	if pd, over := q.Content.PayloadProblem(); over {
		d = append(d, pd)
	}
	for _, e := range q.Localized {
		if pd, over := q.EntryContent(e).PayloadProblem(); over {
			d = append(d, Detail{Field: "localized." + e.Lang + "." + pd.Field, Reason: pd.Reason})
		}
	}
	if !c.AdPrefixRequired || !p.IsMarketingOpt {
		return d
	}
	if c.Title != nil {
		if pd, bad := AdPrefixProblem("title", *c.Title); bad {
			d = append(d, pd)
		}
	}
	if c.Localized != nil {
		for _, e := range *c.Localized {
			if pd, bad := AdPrefixProblem("localized."+e.Lang+".title", e.Title); bad {
				d = append(d, pd)
			}
		}
	}
	return d
}

// applied returns p's texts with the change's applied: its content and
// localized entries.
func (c PushChange) applied(p Push) Push {
	p.Content = c.content(p.Content)
	if c.Localized != nil {
		p.Localized = *c.Localized
	}
	return p
}

// content returns cur with the change's content members applied.
func (c PushChange) content(cur Content) Content {
	for _, f := range []struct{ dst, v *string }{
		{&cur.Title, c.Title}, {&cur.Content, c.Content}, {&cur.LinkURL, c.LinkURL}, {&cur.ImageURL, c.ImageURL},
	} {
		if f.v != nil {
			*f.dst = *f.v
		}
	}
	return cur
}

// MaxTTL is the longest options.ttl, in seconds: 28 days, the longest FCM
// keeps a message.
const MaxTTL = 2_419_200

// TTLProblem returns why seconds is no options.ttl, "" when it is one.
func TTLProblem(seconds int64) string {
	if seconds < 0 || seconds > MaxTTL {
		return fmt.Sprintf("must be a whole number of seconds from 0 to %d", MaxTTL)
	}
	return ""
}

// MaxFCMPayload is FCM's limit on the payload of one message, in bytes, for
// notification and data messages alike.
//
// FCM documents the limit, not its arithmetic, so FCMPayloadSize counts
// conservatively, after what FCM was seen to accept: the UTF-8 bytes of
// every key and every value of the message's notification (title, body,
// image) and data (Herald's pushId and linkURL); 6 bytes for each pair after
// the first (its quotes, colon and comma); and 45 bytes FCM keeps for its own
// envelope. (A data message of one pair was accepted with at most 4,051
// bytes of key and value, and each further pair cost 6 bytes more.) The
// request's whitespace and JSON escapes do not count. The platform copies of
// the image and link (android.notification.image, apns.fcm_options.image,
// webpush.fcm_options.link) are not counted again: a device receives one
// platform's payload, where the value appears once.
const MaxFCMPayload = 4096

// What FCM takes beyond the keys and values (see MaxFCMPayload).
const (
	fcmEnvelope   = 45
	fcmPairSyntax = 6
)

// pushIDLen is the length of every push id: "push_" and NewID's 22
// characters.
const pushIDLen = len("push_") + 10 + 12

// FCMPayloadSize returns how many bytes of MaxFCMPayload a message with
// these notification and data members takes. Both Herald's accept check
// (Content.FCMPayloadSize) and the FCM emulator count with it.
func FCMPayloadSize(notification, data map[string]string) int {
	size, pairs := fcmEnvelope, 0
	for _, m := range []map[string]string{notification, data} {
		for k, v := range m {
			if pairs > 0 {
				size += fcmPairSyntax
			}
			size += len(k) + len(v)
			pairs++
		}
	}
	return size
}

// FCMPayloadSize returns the payload size of c as fcm.BuildMessage sends
// it: the notification's title, body and image, and the data's pushId (as
// long as any push id) and linkURL; empty members are not sent.
func (c Content) FCMPayloadSize() int {
	// FCMPayloadSize of the maps the message would have, without making
	// them: the accept of 200 messages counts each.
	size := fcmEnvelope + len("pushId") + pushIDLen
	for _, m := range []struct{ key, value string }{
		{"title", c.Title}, {"body", c.Content}, {"image", c.ImageURL}, {"linkURL", c.LinkURL},
	} {
		if m.value != "" {
			size += fcmPairSyntax + len(m.key) + len(m.value)
		}
	}
	return size
}

// PayloadProblem returns, when c could not be sent because its FCM payload
// would exceed MaxFCMPayload, the problem naming the member of c that
// carries the most bytes; ok is false when c fits.
func (c Content) PayloadProblem() (d Detail, ok bool) {
	size := c.FCMPayloadSize()
	if size <= MaxFCMPayload {
		return Detail{}, false
	}
	field, longest := "title", len(c.Title)
	for _, m := range []struct {
		name  string
		value string
	}{{"content", c.Content}, {"linkURL", c.LinkURL}, {"imageURL", c.ImageURL}} {
		if len(m.value) > longest {
			field, longest = m.name, len(m.value)
		}
	}
	return Detail{Field: field, Reason: fmt.Sprintf("the FCM payload would be %d bytes, more than %d", size, MaxFCMPayload)}, true
}

// FanoutStatuses are the statuses of a push that may still wait for its
// fan-out: an immediate push (sending) and a scheduled one. It waits while
// it has no start time (see AwaitingFanout).
var FanoutStatuses = []PushStatus{StatusSending, StatusScheduled}

// AwaitingFanout reports whether the push still waits for its fan-out.
func (p Push) AwaitingFanout() bool {
	return p.StartedAt == nil && (p.Status == StatusSending || p.Status == StatusScheduled)
}

// EndStatus is the status a push ends in once every recipient has an
// outcome: done, unless it failed as a whole.
func (s PushStatus) EndStatus() PushStatus {
	if s == StatusFailed {
		return StatusFailed
	}
	return StatusDone
}
