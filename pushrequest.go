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
	// ScheduledAt is when a scheduled push is due; nil sends it now.
	ScheduledAt *time.Time
	// Test marks an operator's test push, which is charged nothing.
	Test bool
}

// PushGate opens push making to an app: it must be registered
// (ErrAppNotFound) and have FCM credentials (ErrNoFCM).
func PushGate(a App) error {
	switch {
	case !a.Registered:
		return ErrAppNotFound
	case len(a.FCMCredentials) == 0:
		return ErrNoFCM
	}
	return nil
}

// NewPush makes the push app is asked for at now, ready to be accepted:
// refused by the gate (PushGate), or by the ad footer's rule when it is
// marketing and the app lacks a footer setting or a message would grow
// past FCM's limit with it (ErrInvalidRequest, see FixAdFooter). It is
// marketing when marked options.isMarketing or when a title (the push's,
// or any message's) starts with "(광고)"; scheduled when it has a time,
// else sending; charged HalfPerUser for each requested user, except a
// test push. A push to a token is to one device.
func NewPush(app App, req PushRequest, now time.Time) (Push, error) {
	if err := PushGate(app); err != nil {
		return Push{}, err
	}
	p := Push{
		ID: NewID("push_", now), AppID: app.ID, Kind: req.Kind, Topic: req.Topic, Token: req.Token,
		Status: StatusSending, Content: req.Content, Badge: req.Badge, IsMarketingOpt: req.IsMarketingOpt,
		NightPolicy: req.NightPolicy, RequestGroupID: req.RequestGroupID, ScheduledAt: req.ScheduledAt,
		CreatedAt: now.UTC().Truncate(time.Millisecond), RequestedUsers: len(req.Recipients),
	}
	if p.ScheduledAt != nil {
		p.Status = StatusScheduled
	}
	if p.Kind == KindToken {
		p.RequestedUsers = 1
	}
	if !req.Test {
		p.ServerActionsHalf = int64(len(req.Recipients)) * HalfPerUser
	}
	p.Marketing = p.IsMarketingOpt || IsMarketingTitle(p.Content.Title)
	for _, rc := range req.Recipients {
		p.Marketing = p.Marketing || p.MarketingFor(rc)
	}
	// The ad footer (art. 50(4)) is fixed now: refused when the app lacks
	// a setting, counted in each marketing message's payload.
	if err := p.FixAdFooter(app, req.Recipients); err != nil {
		return Push{}, err
	}
	return p, nil
}
