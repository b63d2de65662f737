package herald

import (
	"context"
	"crypto/sha256"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// The kinds of the pushes Herald makes itself to tell users about their
// consent (Network Act art. 50(7) and (8)): informational, so no consent
// or night rule applies, and not charged (see their KindRule).
const (
	KindConsentNotice  PushKind = "consent-notice"
	KindReconfirmation PushKind = "consent-reconfirmation"
)

// The consent trail's sources that are not a decision of the user's.
const (
	// SourceReconfirmation: a re-confirmation notice reached the user; the
	// pair is unchanged and its two-year clock restarts.
	SourceReconfirmation ConsentSource = "reconfirmation"
	// SourceImport: consent a platform collected before Herald, imported
	// with its original date.
	SourceImport ConsentSource = "import"
)

// NoticeSource reports whether a decision from src is told to the user by
// a result notice: the in-app switch, the Server API and the admin API.
func NoticeSource(src ConsentSource) bool {
	return src == SourceSDK || src == SourceServerAPI || src == SourceAdmin
}

// The default templates (DESIGN section 6), each one line.
const (
	DefaultNoticeTitle           = "[{app}] 광고성 정보 수신 동의 결과 안내"
	DefaultNoticeContent         = "{date} 광고성 정보 수신 {marketing}, 야간(21시~08시) 수신 {marketingNight} 처리되었습니다."
	DefaultReconfirmationTitle   = "[{app}] 광고성 정보 수신 동의 확인 안내"
	DefaultReconfirmationContent = "{consentDate}에 동의하신 광고성 정보 수신 상태를 안내합니다: 수신 {marketing}, 야간(21시~08시) 수신 {marketingNight}. {optOut}"
)

// Bounds of the re-confirmation lead time, in days.
const (
	DefaultLeadDays = 30
	MinLeadDays     = 1
	MaxLeadDays     = 60
)

// ConsentNotice is the app's result notice setting (art. 50(7)).
type ConsentNotice struct {
	Enabled        bool
	Title, Content string
}

// Reconfirmation is the app's re-confirmation notice setting (art. 50(8)):
// users whose two-year date is within LeadDays are sent one notice.
type Reconfirmation struct {
	Enabled        bool
	Title, Content string
	LeadDays       int
}

// WithDefaults returns n with the default templates where none is set.
func (n ConsentNotice) WithDefaults() ConsentNotice {
	n.Title = orDefault(n.Title, DefaultNoticeTitle)
	n.Content = orDefault(n.Content, DefaultNoticeContent)
	return n
}

// WithDefaults returns r with the default templates and lead time where
// none is set.
func (r Reconfirmation) WithDefaults() Reconfirmation {
	r.Title = orDefault(r.Title, DefaultReconfirmationTitle)
	r.Content = orDefault(r.Content, DefaultReconfirmationContent)
	if r.LeadDays == 0 {
		r.LeadDays = DefaultLeadDays
	}
	return r
}

// DueBy is the bound of a re-confirmation run at now: it reaches the users
// whose consent is due (ConsentDueAt) by then, the lead days (the default
// when unset) ahead of now, so a notice goes before the consent lapses.
// The store selects them by it (ConsentStore.ConsentDue).
func (r Reconfirmation) DueBy(now time.Time) time.Time {
	return now.Add(time.Duration(r.WithDefaults().LeadDays) * 24 * time.Hour)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// The placeholders each template takes.
var (
	noticePlaceholders         = []string{"app", "date", "marketing", "marketingNight"}
	reconfirmationPlaceholders = []string{"app", "consentDate", "marketing", "marketingNight", "optOut"}
)

// Longest template, in characters; a rendered notice must also fit FCM's
// payload, which the placeholders' values keep far from.
const (
	maxNoticeTitle   = 200
	maxNoticeContent = 1000
)

var placeholder = regexp.MustCompile(`\{([^{}]*)\}`)

// templateProblem judges one template: non-empty, bounded, valid UTF-8,
// and naming only the placeholders allowed. It returns "" when it is fine.
func templateProblem(s string, maxLen int, allowed []string) string {
	switch {
	case strings.TrimSpace(s) == "":
		return "must be a non-empty string"
	case !utf8.ValidString(s):
		return ReasonInvalidUTF8
	case utf8.RuneCountInString(s) > maxLen:
		return fmt.Sprintf("must be at most %d characters", maxLen)
	}
	for _, m := range placeholder.FindAllStringSubmatch(s, -1) {
		if !slices.Contains(allowed, m[1]) {
			return fmt.Sprintf("has the unknown placeholder %s; allowed: {%s}", m[0], strings.Join(allowed, "}, {"))
		}
	}
	return ""
}

// Problems judges the setting; field is its JSON path ("consentNotice").
func (n ConsentNotice) Problems(field string) []Detail {
	var d []Detail
	if r := templateProblem(n.Title, maxNoticeTitle, noticePlaceholders); r != "" {
		d = append(d, Detail{field + ".title", r})
	}
	if r := templateProblem(n.Content, maxNoticeContent, noticePlaceholders); r != "" {
		d = append(d, Detail{field + ".content", r})
	}
	return d
}

// Problems judges the setting; field is its JSON path ("reconfirmation").
func (r Reconfirmation) Problems(field string) []Detail {
	var d []Detail
	if p := templateProblem(r.Title, maxNoticeTitle, reconfirmationPlaceholders); p != "" {
		d = append(d, Detail{field + ".title", p})
	}
	if p := templateProblem(r.Content, maxNoticeContent, reconfirmationPlaceholders); p != "" {
		d = append(d, Detail{field + ".content", p})
	}
	if r.LeadDays < MinLeadDays || r.LeadDays > MaxLeadDays {
		d = append(d, Detail{field + ".leadDays", fmt.Sprintf("must be a whole number from %d to %d", MinLeadDays, MaxLeadDays)})
	}
	return d
}

// consentWord is how a notice names a consent value.
func consentWord(v bool) string {
	if v {
		return "동의"
	}
	return "거부"
}

// render fills a template's placeholders; a placeholder at an end filled
// with nothing leaves no space behind.
func render(tmpl string, values map[string]string) string {
	return strings.TrimSpace(placeholder.ReplaceAllStringFunc(tmpl, func(m string) string {
		if v, ok := values[m[1:len(m)-1]]; ok {
			return v
		}
		return m
	}))
}

// NoticeContent is the result notice of a decision about pair c at at,
// from the app's setting.
func (a App) NoticeContent(c Consent, at time.Time) Content {
	n := a.ConsentNotice.WithDefaults()
	v := map[string]string{"app": a.Name, "date": at.In(a.Location()).Format(time.DateOnly),
		"marketing": consentWord(c.Marketing), "marketingNight": consentWord(c.MarketingNight)}
	return Content{Title: render(n.Title, v), Content: render(n.Content, v)}
}

// ReconfirmationContent is the re-confirmation notice of a user with pair
// c whose consent was last given or confirmed at confirmed.
func (a App) ReconfirmationContent(c Consent, confirmed time.Time) Content {
	r := a.Reconfirmation.WithDefaults()
	v := a.reconfirmationShared()
	v["consentDate"] = confirmed.In(a.Location()).Format(time.DateOnly)
	v["marketing"], v["marketingNight"] = consentWord(c.Marketing), consentWord(c.MarketingNight)
	return Content{Title: render(r.Title, v), Content: render(r.Content, v)}
}

// reconfirmationShared holds the values of the re-confirmation
// placeholders that are the same in every user's notice.
func (a App) reconfirmationShared() map[string]string {
	return map[string]string{"app": a.Name, "optOut": a.AdOptOut}
}

// ShownContent is p's content as the dashboard lists it, a's push. A
// re-confirmation push stores the app's templates as its content (each
// user's notice is rendered from them, see ReconfirmationContent): they
// are shown with the placeholders every notice shares filled in ({app},
// {optOut}), as the devices got them; those of each user's own values
// ({consentDate}, {marketing}, {marketingNight}) stay as written. Any
// other push's content is shown as stored.
func (a App) ShownContent(p Push) Content {
	c := p.Content
	if p.Rule().Templated {
		v := a.reconfirmationShared()
		c.Title, c.Content = render(c.Title, v), render(c.Content, v)
	}
	return c
}

// NewConsentNotice makes the result notice of the consent decision rec
// (art. 50(7)) as of now, with id (derived from the record, so that a run
// that dies after accepting it finds it again): to rec's user, or, with
// token set, to the device holding it (no user is mapped to it). It is
// informational and not charged (see its KindRule).
func NewConsentNotice(app App, id string, rec ConsentRecord, token string, now time.Time) (Push, []Recipient) {
	req := PushRequest{Kind: KindConsentNotice, Token: token, Content: app.NoticeContent(rec.To, rec.At)}
	if token == "" && rec.UserID != nil {
		req.Recipients = []Recipient{{UserID: *rec.UserID}}
	}
	return buildPush(app, id, req, now), req.Recipients
}

// NewReconfirmation makes the push of a re-confirmation run (art. 50(8))
// at now to rs, each with its notice (ReconfirmationContent): its content
// is the app's templates (see ShownContent); it is informational and not
// charged.
func NewReconfirmation(app App, rs []Recipient, now time.Time) Push {
	r := app.Reconfirmation.WithDefaults()
	req := PushRequest{Kind: KindReconfirmation, Content: Content{Title: r.Title, Content: r.Content}, Recipients: rs}
	return buildPush(app, NewID("push_", now), req, now)
}

// ConsentReconfirmed records that a re-confirmation notice reached the
// user: the pair c unchanged, the two-year clock restarted, and the app
// told through consent.changed.
func ConsentReconfirmed(c Consent, at time.Time) ConsentRecord {
	return ConsentRecord{At: at, Source: SourceReconfirmation, From: c, To: c, Notify: true, Confirms: c.Marketing}
}

// StillToReconfirm keeps of a run's recipients, read before the run
// claimed the app, those still due and not named by a re-confirmation
// push whose reach is not recorded yet (pending): a run that read the
// same users as another, which stored its push first, names nobody twice,
// and a user reached in between (its clock restarted) is not due any more.
func StillToReconfirm(rs []Recipient, due, pending map[string]bool) []Recipient {
	var out []Recipient
	for _, r := range rs {
		if due[r.UserID] && !pending[r.UserID] {
			out = append(out, r)
		}
	}
	return out
}

// ReconfirmedRecords returns the trail records of a user a
// re-confirmation notice reached, which restart the user's clock
// whichever pair held the marketing consent (DESIGN 6): the user's own
// pair when it holds it; else each of the user's devices whose pair holds
// it (consent given on a device before the device was mapped to the
// user), the first of them alone sending consent.changed, so the user
// gets one event. None when no pair holds it any more (refused since).
func ReconfirmedRecords(user Consent, devices []Device, at time.Time) []ConsentRecord {
	if user.Marketing {
		return []ConsentRecord{ConsentReconfirmed(user, at)}
	}
	var out []ConsentRecord
	for _, d := range devices {
		if !d.Consent.Marketing {
			continue
		}
		rec := ConsentReconfirmed(d.Consent, at)
		id := d.ID
		rec.DeviceID, rec.Notify = &id, len(out) == 0
		out = append(out, rec)
	}
	return out
}

// ConsentImported records consent collected before Herald, at its original
// date: no notice and no event, and the clock runs from at.
func ConsentImported(from, to Consent, at time.Time) ConsentRecord {
	return ConsentRecord{At: at, Source: SourceImport, From: from, To: to, Confirms: to.Marketing}
}

// DerivedID returns the ID of something Herald makes once for a cause
// named by seed (a notice for a trail record): the same every time, so a
// job that runs again finds what its first run made. Its time part is at,
// so it sorts as NewID's do.
func DerivedID(prefix string, at time.Time, seed string) string {
	id := NewID(prefix, at)
	sum := sha256.Sum256([]byte(seed))
	tail := make([]byte, 12)
	for i := range tail {
		tail[i] = base62[int(sum[i])%62]
	}
	return id[:len(id)-12] + string(tail)
}

// ConsentNoticeJob makes the result notice of one decision: the trail
// record numbered RecordID. The store inserts it with the record, so a
// decision recorded is a notice made.
type ConsentNoticeJob struct {
	AppID    string `json:"appId"`
	RecordID int64  `json:"recordId"`
}

// Kind names the job.
func (ConsentNoticeJob) Kind() string { return "herald.consent_notice" }

// MaxImport is the most users one consent import takes.
const MaxImport = 1000

// ConsentImport is one user's consent collected before Herald: the pair
// and when it was given. The pair is whole: an import sets both values,
// it never keeps one of the user's (DESIGN 6: all four members required).
type ConsentImport struct {
	UserID  string
	Consent Consent
	At      time.Time
}

// ImportSkip is a user a consent import left alone, and why.
type ImportSkip struct {
	UserID string `json:"userId"`
	Reason string `json:"reason"`
}

// The reasons a consent import skips a user.
const (
	SkipUnknownUser   = "unknown user"
	SkipWithdrawnUser = "withdrawn user"
	SkipFuture        = "at is in the future"
	SkipBeforeTrail   = "at is before the user's last consent record"
	// SkipImported: the same entry was imported before (a file imported
	// again).
	SkipImported = "already imported"
	// SkipPair: a pair with night consent but no marketing consent (the
	// admin API refuses it; a store given one skips it).
	SkipPair = "marketingNight cannot be true while marketing consent is false"
)

// ImportSkipReason decides whether an import entry is recorded: not when
// its date is in the future, or before last, the date of the user's
// latest trail record (nil when there is none), since the trail and the
// clock run forward, nor when its pair has night consent without
// marketing consent. It returns the reason, or "".
func ImportSkipReason(e ConsentImport, now time.Time, last *time.Time) string {
	switch {
	case e.Consent.MarketingNight && !e.Consent.Marketing:
		return SkipPair
	case e.At.After(now):
		return SkipFuture
	case last != nil && e.At.Before(*last):
		return SkipBeforeTrail
	}
	return ""
}

// NoticeStore keeps what the consent notices and the import need beyond
// the trail.
type NoticeStore interface {
	// ClaimReconfirmation makes a re-confirmation run: in one
	// transaction it claims the app's re-confirmation (one run of an app
	// at a time, on any node: a run waits for the one holding it),
	// keeps of rs the users StillToReconfirm (due by until, no notice on
	// its way), and stores p, accepted as AcceptPush does, to those with
	// RequestedUsers set to their number; nothing when none is left (or p
	// is nil: nobody was due). It returns how many users p names. day is
	// the daily run's date (YYYY-MM-DD in the app's zone), recorded with
	// the push: false, storing nothing, when that day's run was made
	// already; "" for a run the operator asked for, always made.
	ClaimReconfirmation(ctx context.Context, appID, day string, until time.Time, p *Push, rs []Recipient, job Job) (int, bool, error)
	// ReconfirmationClaimed reports whether the app's run of day was made.
	ReconfirmationClaimed(ctx context.Context, appID, day string) (bool, error)
	// RecordReconfirmed records that the re-confirmation push reached the
	// users: each registered one whose own pair or a device's holds
	// marketing consent gets the trail records of ReconfirmedRecords,
	// restarting its clock, with its consent.changed event when the app
	// has a webhook. Once per push: it
	// returns false, recording nothing, when the push was recorded before.
	RecordReconfirmed(ctx context.Context, appID, pushID string, userIDs []string, at time.Time) (bool, error)
	// ReconfirmingUsers returns the users named by the app's
	// re-confirmation pushes not yet recorded (RecordReconfirmed): a run
	// leaves them out, so no user is sent a second notice while the first
	// is on its way.
	ReconfirmingUsers(ctx context.Context, appID string) (map[string]bool, error)
	// ImportConsent sets each entry's user's pair (and its devices') with
	// one trail record at the entry's date (ConsentImported), all in one
	// transaction; users that are unknown or withdrawn, or whose entry
	// ImportSkipReason refuses, are skipped with the reason.
	ImportConsent(ctx context.Context, appID string, entries []ConsentImport, now time.Time) (int, []ImportSkip, error)
}
