package herald

import (
	"fmt"
	"net/http"
	"time"
)

// Approval before sending (DESIGN 14): an app may have its pushes wait for
// a second person. A push that needs it (ApprovalSetting.Needs) is
// accepted as StatusAwaitingApproval, nothing sent or charged; another
// operator approves it (it goes on as it would have at its accept:
// sending, or scheduled for its time, and is charged then) or rejects it
// (StatusRejected), and one left unanswered for ApprovalWindow lapses
// (StatusApprovalExpired). Neither a rejected nor a lapsed push is
// charged. The steps are the push machine's (StepApprove, StepReject,
// StepApprovalExpiry), each recorded in Push.Approvals.

// ApprovalMode says which pushes of an app wait for approval.
type ApprovalMode string

// The approval modes: none; marketing pushes; pushes to all users, a
// topic or a segment (whose audience is found only when they are sent);
// every push. A test push and Herald's own notices never wait.
const (
	ApprovalOff   ApprovalMode = "off"
	ApprovalAds   ApprovalMode = "ads"
	ApprovalBroad ApprovalMode = "broad"
	ApprovalAll   ApprovalMode = "all"
)

// ApprovalModes lists the modes, in the order the documents name them.
var ApprovalModes = []ApprovalMode{ApprovalOff, ApprovalAds, ApprovalBroad, ApprovalAll}

// MaxApprovalMinUsers bounds ApprovalSetting.MinUsers.
const MaxApprovalMinUsers = 1_000_000

// MaxApprovalReason bounds the reason of an approval or a rejection, in
// characters.
const MaxApprovalReason = 500

// ApprovalWindow is how long a push waits for approval before it lapses.
const ApprovalWindow = 24 * time.Hour

// ApprovalSetting is an app's approval setting; the zero value is off.
type ApprovalSetting struct {
	Mode ApprovalMode
	// MinUsers: a push to named users (/users, /messages) waits only when
	// it names at least this many. A push to all users, a topic or a
	// segment, whose count is known only as it fans out, always waits
	// when its mode asks.
	MinUsers int
}

// On reports whether any push waits.
func (s ApprovalSetting) On() bool { return s.Mode != "" && s.Mode != ApprovalOff }

// ModeOrOff is the mode, ApprovalOff for the zero value.
func (s ApprovalSetting) ModeOrOff() ApprovalMode {
	if s.Mode == "" {
		return ApprovalOff
	}
	return s.Mode
}

// Problems judges the setting; field is its JSON path ("approval").
func (s ApprovalSetting) Problems(field string) []Detail {
	var d []Detail
	switch s.Mode {
	case ApprovalOff, ApprovalAds, ApprovalBroad, ApprovalAll:
	default:
		d = append(d, Detail{field + ".mode", "must be off, ads, broad or all"})
	}
	if s.MinUsers < 0 || s.MinUsers > MaxApprovalMinUsers {
		d = append(d, Detail{field + ".minUsers", fmt.Sprintf("must be a whole number from 0 to %d", MaxApprovalMinUsers)})
	}
	return d
}

// Needs reports whether p, accepted now, must wait for approval: its
// app's mode takes it (ads: marketing; broad: to all users, a topic or a
// segment; all: any) and, when it names its users, it names at least
// MinUsers. Only charged pushes wait: never a test push to a token or a
// notice (NewPush's caller leaves out test pushes to users).
func (s ApprovalSetting) Needs(p Push) bool {
	r := p.Rule()
	if !s.On() || !r.Charged {
		return false
	}
	switch s.Mode {
	case ApprovalAds:
		if !p.Marketing {
			return false
		}
	case ApprovalBroad:
		if !r.Targeted {
			return false
		}
	case ApprovalAll:
	default:
		return false
	}
	return r.Targeted || p.RequestedUsers >= s.MinUsers
}

// ApprovalAction is a step of a push's approval.
type ApprovalAction string

// The approval steps a push records.
const (
	ApprovalRequested ApprovalAction = "requested"
	ApprovalApproved  ApprovalAction = "approved"
	ApprovalRejected  ApprovalAction = "rejected"
)

// Approval is one entry of a push's approvals: who asked, approved or
// rejected it, when, and why. By is the operator's ID (OwnerID for the
// owner's token); "" for a push the Server API made, which no operator
// composed.
type Approval struct {
	Action ApprovalAction `json:"action"`
	By     string         `json:"by,omitempty"`
	At     time.Time      `json:"at"`
	Reason string         `json:"reason,omitempty"`
}

// awaitApproval makes a push just built wait for approval: nothing
// charged until it is approved (its Ledger and cost are taken again then).
func (p *Push) awaitApproval() {
	p.Status, p.ServerActionsHalf, p.Ledger = StatusAwaitingApproval, 0, nil
	p.Approvals = []Approval{{Action: ApprovalRequested, At: p.CreatedAt}}
}

// SetComposer records who composed p (an operator on the dashboard) in
// its approval request, whom approving it is then refused to.
func (p *Push) SetComposer(operatorID string) {
	for i := range p.Approvals {
		if p.Approvals[i].Action == ApprovalRequested {
			p.Approvals[i].By = operatorID
		}
	}
}

// Composer is the operator who composed a push that waited for approval;
// "" for one the Server API made, or one that never waited.
func (p Push) Composer() string {
	for _, a := range p.Approvals {
		if a.Action == ApprovalRequested {
			return a.By
		}
	}
	return ""
}

// ApprovalDeadline is when a push waiting for approval lapses.
func (p Push) ApprovalDeadline() time.Time { return p.CreatedAt.Add(ApprovalWindow) }

// ErrNotAwaitingApproval refuses to approve or reject a push that does not
// wait for approval (any more).
var ErrNotAwaitingApproval = newError("ERR-AB-SCH-03", http.StatusConflict, "Push is not awaiting approval.")

// NotAwaiting is ErrNotAwaitingApproval saying why.
func NotAwaiting(p Push, at time.Time) *Error {
	if p.Status == StatusAwaitingApproval {
		return ErrNotAwaitingApproval.With(Detail{Field: "status", Reason: fmt.Sprintf("its approval lapsed at %s, %s after it was requested",
			p.ApprovalDeadline().UTC().Format(time.RFC3339), ApprovalWindow)})
	}
	return ErrNotAwaitingApproval.With(Detail{Field: "status", Reason: fmt.Sprintf("is %s: only a push awaiting approval can be approved or rejected", p.Status)})
}

// decideApproval checks that by may decide p's approval at at: p waits and
// has not lapsed, and by did not compose it (the owner's token may decide
// any push).
func (p Push) decideApproval(by string, at time.Time) error {
	switch {
	case p.Status != StatusAwaitingApproval || !at.Before(p.ApprovalDeadline()):
		return NotAwaiting(p, at)
	case by == "":
		return fmt.Errorf("%w: an approval step without its operator", ErrBadStep)
	case by != OwnerID && by == p.Composer():
		return ErrForbidden.With(Detail{Field: "operator", Reason: "composed this push: another operator must approve or reject it"})
	}
	return nil
}

// approve lets a push waiting for approval go on as its accept would have:
// sending, or scheduled for its time (one whose time has passed is sent at
// once, by its job), charged now as its accept would have charged it.
func (p *Push) approve(st PushStep, e *PushEffects) error {
	if err := p.decideApproval(st.By, st.At); err != nil {
		return err
	}
	if st.App == nil || st.Job == nil {
		return fmt.Errorf("%w: an approval without its app or job", ErrBadStep)
	}
	c := st.App.PushCharge(*p, p.RequestedUsers, st.At)
	p.ServerActionsHalf, e.Usage, e.ReplaceJob = c.Half, c.Ledger, st.Job
	p.Status = StatusSending
	if p.ScheduledAt != nil {
		p.Status = StatusScheduled
	}
	p.Approvals = append(p.Approvals, Approval{Action: ApprovalApproved, By: st.By, At: st.At.UTC(), Reason: st.Reason})
	return nil
}

// reject ends a push waiting for approval, uncharged; its lapse job is
// cancelled.
func (p *Push) reject(st PushStep, e *PushEffects) error {
	if err := p.decideApproval(st.By, st.At); err != nil {
		return err
	}
	at := st.At.UTC().Truncate(time.Millisecond)
	p.Status, p.FinishedAt, e.CancelJob = StatusRejected, &at, true
	p.Approvals = append(p.Approvals, Approval{Action: ApprovalRejected, By: st.By, At: st.At.UTC(), Reason: st.Reason})
	return nil
}

// ErrApprovalOpen refuses to lapse a push whose window has not ended (a
// lapse job run early, on a node whose clock is behind).
var ErrApprovalOpen = fmt.Errorf("%w: approval window still open", ErrBadStep)

// lapse ends a push left unanswered for ApprovalWindow, uncharged.
func (p *Push) lapse(st PushStep) error {
	switch {
	case p.Status != StatusAwaitingApproval:
		return badStep(st.Kind, p.Status)
	case st.At.Before(p.ApprovalDeadline()):
		return ErrApprovalOpen
	}
	at := st.At.UTC().Truncate(time.Millisecond)
	p.Status, p.FinishedAt = StatusApprovalExpired, &at
	return nil
}

// EventApprovalRequested is the webhook event of a push that waits for
// approval.
const EventApprovalRequested = "push.approval_requested"

// ApprovalRequest is the push.approval_requested webhook event of a push
// that waits for approval, fixed when it is accepted so that every retry
// sends the same message under the same ID. Users is the count of users
// it names; nil for a push to all users, a topic or a segment, whose
// users are counted as it fans out.
type ApprovalRequest struct {
	ID             string    `json:"id"`
	AppID          string    `json:"appId"`
	PushID         string    `json:"pushId"`
	RequestGroupID string    `json:"requestGroupId"`
	Kind           PushKind  `json:"kind"`
	Users          *int      `json:"users"`
	ComposedBy     string    `json:"composedBy"`
	RequestedAt    time.Time `json:"requestedAt"`
	ExpiresAt      time.Time `json:"expiresAt"`
}

// ApprovalRequestOf is p's push.approval_requested event.
func ApprovalRequestOf(p Push) ApprovalRequest {
	r := ApprovalRequest{ID: "msg_approval_" + p.ID, AppID: p.AppID, PushID: p.ID, RequestGroupID: p.RequestGroupID, Kind: p.Kind,
		ComposedBy: p.Composer(), RequestedAt: p.CreatedAt, ExpiresAt: p.ApprovalDeadline()}
	if !p.Rule().Targeted {
		n := p.RequestedUsers
		r.Users = &n
	}
	return r
}
