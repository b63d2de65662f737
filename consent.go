package herald

import (
	"strings"
	"time"
)

// Consent is a marketing consent pair (spec 2.2). MarketingNight is never
// true while Marketing is false.
type Consent struct {
	Marketing      bool `json:"marketing"`
	MarketingNight bool `json:"marketingNight"`
}

// ConsentChange is the state object of PATCH marketing, and of the SDK's
// consent switch: only the items to change are present.
type ConsentChange struct {
	Marketing      *bool
	MarketingNight *bool
	// Source is who makes the change, for the consent trail: SourceSDK for
	// the in-app switch; on a user's pair SourceServerAPI (also when
	// empty) or SourceAdmin.
	Source ConsentSource
	// Identity, on the in-app switch of an app with identity verification
	// on, must verify the userId of the device changed (SetDeviceConsent
	// checks it in the transaction that makes the change); nil otherwise.
	Identity *IdentityProof
}

// Shape checks the change against shapes A, B and C of spec 2.2 and returns
// the problems; it needs no stored state. field is the JSON path of the
// object holding the pair, "" when it is the body itself.
func (c ConsentChange) Shape(field string) []Detail {
	switch {
	case c.Marketing == nil && c.MarketingNight == nil:
		whole := field
		if whole == "" {
			whole = "body"
		}
		return []Detail{{whole, "must contain marketing or marketingNight"}}
	case c.Marketing != nil && !*c.Marketing && c.MarketingNight != nil && *c.MarketingNight:
		return []Detail{{member(field, "marketingNight"), "cannot be true when marketing is false"}}
	}
	return nil
}

// member is the JSON path of member name of the object at path field.
func member(field, name string) string {
	if field == "" {
		return name
	}
	return field + "." + name
}

// Apply returns the pair that results from applying the change to cur.
// Shape A keeps the current night value when it is absent; shape B turns
// night off too; shape C turning night on needs marketing already on.
func (c ConsentChange) Apply(cur Consent, field string) (Consent, error) {
	if d := c.Shape(field); d != nil {
		return cur, Invalid(d...)
	}
	next := cur
	if c.Marketing != nil {
		next.Marketing = *c.Marketing
		if !next.Marketing {
			next.MarketingNight = false
		}
	}
	if c.MarketingNight != nil {
		if *c.MarketingNight && !next.Marketing {
			return cur, Invalid(Detail{member(field, "marketingNight"), "cannot be true while marketing consent is false"})
		}
		next.MarketingNight = *c.MarketingNight
	}
	return next, nil
}

// Night window bounds, in the app's local time: [21:00, 08:00).
const (
	nightStartHour = 21
	nightEndHour   = 8
)

// IsNight reports whether t falls in the night window (21:00 to 08:00) of
// the time zone loc.
func IsNight(t time.Time, loc *time.Location) bool {
	h := t.In(loc).Hour()
	return h >= nightStartHour || h < nightEndHour
}

// AdPrefix marks a push as advertising when its title starts with it.
const AdPrefix = "(광고)"

// IsMarketingTitle reports whether a title marks its push as marketing.
func IsMarketingTitle(title string) bool {
	return strings.HasPrefix(strings.TrimSpace(title), AdPrefix)
}

// adPrefixReason names the rule a push marked options.isMarketing breaks
// when its title lacks the prefix.
const adPrefixReason = "must start with " + AdPrefix + " when options.isMarketing is true (advertising pushes, " +
	"Information and Communications Network Act art. 50(4)); an app that puts the prefix in the body can turn this check " +
	"off with its adPrefixCheck setting"

// AdPrefixProblem returns the problem of a title of a push marked
// options.isMarketing that does not start with AdPrefix; field names the
// title in the request. ok is false when the title has the prefix.
func AdPrefixProblem(field, title string) (d Detail, ok bool) {
	if IsMarketingTitle(title) {
		return Detail{}, false
	}
	return Detail{Field: field, Reason: adPrefixReason}, true
}

// The rules that make a push marketing, as history names them.
const (
	// MarketingByOption: the request marked it options.isMarketing.
	MarketingByOption = "isMarketing"
	// MarketingByTitle: its title (on /messages, a message's title) starts
	// with AdPrefix.
	MarketingByTitle = "adPrefix"
)

// Suppression is why a device is not sent a push; the zero value means it is
// sent.
type Suppression int

// The suppression outcomes.
const (
	NotSuppressed Suppression = iota
	SuppressedConsent
	SuppressedNight
)

// Suppress decides whether a device with consent c receives a push: a
// marketing push needs marketing consent, and at night also night consent.
// Non-marketing pushes ignore consent.
func Suppress(marketing bool, c Consent, night bool) Suppression {
	switch {
	case !marketing:
		return NotSuppressed
	case !c.Marketing:
		return SuppressedConsent
	case night && !c.MarketingNight:
		return SuppressedNight
	}
	return NotSuppressed
}
