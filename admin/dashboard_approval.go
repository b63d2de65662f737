package admin

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/identity"
)

// The Approvals page lists an app's pushes awaiting approval (DESIGN 14),
// each with a form to approve it (a reason may be given) and one to
// reject it (a reason is required); the push's composer sees it without
// either, as another operator must decide. A push's page shows its
// approval steps.

type approvalRow struct {
	Push      herald.Push
	ExpiresAt time.Time
	// Own: the signed-in operator composed it, and may not decide it.
	Own bool
}

type approvalsData struct {
	Rows    []approvalRow
	NextURL string
	Setting herald.ApprovalSetting
}

// approvalsView lists an app's pushes awaiting approval, newest first.
func (d *dashboard) approvalsView(r *http.Request, a herald.App) (view, error) {
	f := herald.PushFilter{Status: herald.StatusAwaitingApproval, Cursor: r.URL.Query().Get("cursor"), Limit: dashboardPageSize}
	ps, next, err := d.Store.Pushes(r.Context(), a.ID, f)
	if err != nil {
		return view{}, err
	}
	me := identity.RequestOperator(r).ID
	data := approvalsData{Setting: a.Approval}
	for _, p := range ps {
		data.Rows = append(data.Rows, approvalRow{Push: p, ExpiresAt: p.ApprovalDeadline(), Own: me != herald.OwnerID && p.Composer() == me})
	}
	if next != "" {
		data.NextURL = appPath(a.ID, "approvals") + "?" + url.Values{"cursor": {next}}.Encode()
	}
	return viewOf("Approvals", a, data), nil
}

func (d *dashboard) approvalsPage(w http.ResponseWriter, r *http.Request) {
	a, ok := d.app(w, r)
	if !ok {
		return
	}
	v, err := d.approvalsView(r, a)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.render(w, r, http.StatusOK, "approvals", v)
}

func (d *dashboard) approvePush(w http.ResponseWriter, r *http.Request) {
	d.decideForm(w, r, herald.ApprovalApproved)
}

func (d *dashboard) rejectPush(w http.ResponseWriter, r *http.Request) {
	d.decideForm(w, r, herald.ApprovalRejected)
}

// decideForm takes the posted decision on a push awaiting approval, as
// the admin API's approve and reject do, and goes back to the Approvals
// page; a refusal is shown on it.
func (d *dashboard) decideForm(w http.ResponseWriter, r *http.Request, action herald.ApprovalAction) {
	a, p, ok := d.appPush(w, r)
	if !ok {
		return
	}
	reason := strings.ReplaceAll(r.PostFormValue("reason"), "\r\n", "\n")
	var err error
	if dt := reasonProblems(action, reason); len(dt) > 0 {
		err = herald.Invalid(dt...)
	} else {
		_, err = d.decidePush(r, p, herald.Approval{Action: action, By: identity.RequestOperator(r).ID, Reason: strings.TrimSpace(reason)})
	}
	if err != nil {
		d.failOnApprovals(w, r, a, err)
		return
	}
	notice := fmt.Sprintf("Push %s rejected: nothing of it is sent or charged.", p.ID)
	if action == herald.ApprovalApproved {
		notice = fmt.Sprintf("Push %s approved: it is sent now, charged as it goes.", p.ID)
		if p.ScheduledAt != nil && p.ScheduledAt.After(d.Now()) {
			notice = fmt.Sprintf("Push %s approved: it is sent at %s, its scheduled time.", p.ID, when(a.Location(), p.ScheduledAt))
		}
	}
	d.done(w, r, appPath(a.ID, "approvals"), flash{AppID: a.ID, Notice: notice})
}

// awaiting reports whether p waits for approval: cancelling it (its
// composer or another operator) ends it uncharged.
func awaiting(p herald.Push) bool { return p.Status == herald.StatusAwaitingApproval }

// awaitingCancelConfirm asks before a push awaiting approval is cancelled.
func (d *dashboard) awaitingCancelConfirm(w http.ResponseWriter, r *http.Request, a herald.App, p herald.Push) {
	c := confirmData{
		Question:    "Cancel this push awaiting approval?",
		Consequence: fmt.Sprintf("%q is not sent, and no one can approve it any more. Nothing of it was charged. This cannot be undone.", p.Content.Title),
		Action:      appPath(a.ID, "scheduled", p.ID, "cancel"), Button: "Cancel the push", ButtonID: "confirm-cancel",
		Back: appPath(a.ID, "approvals"),
	}
	d.render(w, r, http.StatusOK, "confirm", viewOf(c.Question, a, c))
}

// cancelAwaiting cancels a push awaiting approval and goes back to the
// Approvals page; a push decided meanwhile is refused as the admin API's
// cancel refuses it.
func (d *dashboard) cancelAwaiting(w http.ResponseWriter, r *http.Request, a herald.App, p herald.Push) {
	if _, err := d.Delivery.CancelScheduled(r.Context(), p.ID); err != nil {
		d.failOnApprovals(w, r, a, err)
		return
	}
	d.done(w, r, appPath(a.ID, "approvals"), flash{AppID: a.ID, Notice: fmt.Sprintf("Push %s cancelled: nothing of it is sent or charged.", p.ID)})
}

// failOnApprovals shows err on the Approvals page of a.
func (d *dashboard) failOnApprovals(w http.ResponseWriter, r *http.Request, a herald.App, err error) {
	v, lerr := d.approvalsView(r, a)
	if lerr != nil {
		d.fail(w, r, lerr)
		return
	}
	d.failOn(w, r, err, "approvals", v)
}
