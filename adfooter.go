package herald

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// The bounds of the ad footer's settings, in code points: room for a
// company name, a phone number, e-mail or URL, and a sentence saying where
// to refuse, short enough that the footer leaves the message its room.
const (
	MaxAdSenderName    = 100
	MaxAdSenderContact = 100
	MaxAdOptOut        = 200
)

// AdSettingProblem returns why v cannot be an ad footer setting of at most
// max code points, or "": it must hold something other than spaces, fit
// in max, and be valid UTF-8 on one line or several (the text is sent
// verbatim).
func AdSettingProblem(v string, max int) string {
	switch {
	case strings.TrimSpace(v) == "":
		return "must not be empty"
	case !utf8.ValidString(v):
		return ReasonInvalidUTF8
	case utf8.RuneCountInString(v) > max:
		return fmt.Sprintf("must be at most %d characters", max)
	}
	return ""
}

// adFooterReason is the reason given for an unset footer setting, member
// being its name in the app's settings (adSender.name): it says where to
// set it, as the app-user gate's 403 does.
func adFooterReason(member string) string {
	return "must be set before the app sends advertising: every ad states the sender's name and contact " +
		"and how to refuse (Information and Communications Network Act art. 50(4)); Herald appends them to the body. " +
		"Set " + member + " with the admin API: PATCH /admin/v1/apps/{appId} " +
		`{"adSender":{"name":…,"contact":…},"adOptOut":…}`
}

// AdFooter returns the text appended to the body of each of the app's
// marketing messages (DESIGN section 6, "The ad footer"): "\n", the
// sender's name, a space, the contact, "\n" and the opt-out text, each
// verbatim. It is "" for an app whose adPrefixCheck is off (not under
// Korean law). For an app under the rule with a setting unset, missing
// names each unset one, a detail per leaf (app.adSender.name,
// app.adSender.contact, app.adOptOut).
func (a App) AdFooter() (footer string, missing []Detail) {
	if a.NoAdPrefixCheck {
		return "", nil
	}
	for _, s := range []struct{ field, v string }{
		{"app.adSender.name", a.AdSenderName}, {"app.adSender.contact", a.AdSenderContact}, {"app.adOptOut", a.AdOptOut},
	} {
		if s.v == "" {
			missing = append(missing, Detail{Field: s.field, Reason: adFooterReason(strings.TrimPrefix(s.field, "app."))})
		}
	}
	if len(missing) > 0 {
		return "", missing
	}
	return "\n" + a.AdSenderName + " " + a.AdSenderContact + "\n" + a.AdOptOut, nil
}

// FixAdFooter fixes p's footer as of its accept (or an edit that makes it
// marketing): the app's footer when p has a marketing message, "" when it
// has none. The footer is stored with the push, so a later change of the
// app's settings does not alter a scheduled push. It returns
// ErrInvalidRequest naming each unset setting when the app is under the
// rule and one is unset, or naming each marketing message that the footer
// would take over FCM's payload limit; p is unchanged then.
func (p *Push) FixAdFooter(app App, rs []Recipient) error {
	if !p.Marketing {
		p.AdFooter = ""
		return nil
	}
	footer, missing := app.AdFooter()
	if len(missing) > 0 {
		return Invalid(missing...)
	}
	q := *p
	q.AdFooter = footer
	if d := q.footerPayloadProblems(rs); len(d) > 0 {
		return Invalid(d...)
	}
	p.AdFooter = footer
	return nil
}

// footerPayloadProblems names each marketing message whose FCM payload,
// footer included, exceeds MaxFCMPayload: messages[i] on /messages, the
// longest member of the content otherwise.
func (p Push) footerPayloadProblems(rs []Recipient) []Detail {
	if p.AdFooter == "" {
		return nil
	}
	if !p.Rule().PerRecipient {
		var out []Detail
		if d, over := p.Sent(Recipient{}).PayloadProblem(); over {
			d.Reason += " with the ad footer"
			out = append(out, d)
		}
		for _, e := range p.Localized {
			c := p.EntryContent(e)
			c.Content += p.AdFooter
			if d, over := c.PayloadProblem(); over {
				out = append(out, Detail{Field: "localized." + e.Lang + "." + d.Field, Reason: d.Reason + " with the ad footer"})
			}
		}
		return out
	}
	var out []Detail
	for i, r := range rs {
		if d, over := p.Sent(r).PayloadProblem(); over && p.MarketingFor(r) {
			out = append(out, Detail{Field: fmt.Sprintf("messages[%d]", i), Reason: d.Reason + " with the ad footer"})
		}
	}
	return out
}

// Sent returns what a recipient's device is sent: the recipient's content,
// with the push's ad footer appended to the body of a marketing message.
// Pass the zero Recipient for a push whose recipients carry no content.
func (p Push) Sent(r Recipient) Content {
	c := p.ContentFor(r)
	if p.AdFooter != "" && p.MarketingFor(r) {
		c.Content += p.AdFooter
	}
	return c
}

// AdFooterShown returns the push's footer as its admin JSON shows it: nil
// when none is appended.
func (p Push) AdFooterShown() *string {
	if p.AdFooter == "" || !p.Marketing {
		return nil
	}
	f := p.AdFooter
	return &f
}
