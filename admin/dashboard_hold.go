package admin

import (
	"fmt"
	"net/http"

	"github.com/heraldpush/herald"
)

// A push a restore held (herald.StatusHeld) waits on its page for the
// operator: release it (it goes on where it stood) or cancel it, each
// confirmed on a page of its own like the other destructive actions.

func held(p herald.Push) bool { return p.Status == herald.StatusHeld }

// heldSummary says what a held push was doing when the copy was taken.
func heldSummary(a herald.App, p herald.Push) string {
	if p.StartedAt == nil {
		due := "was to be sent at once"
		if p.ScheduledAt != nil {
			due = "was due at " + when(a.Location(), p.ScheduledAt)
		}
		return fmt.Sprintf("%q %s and had not begun.", p.Content.Title, due)
	}
	return fmt.Sprintf("%q was sending (begun %s; %d of %d tokens sent at the copy's instant).",
		p.Content.Title, when(a.Location(), p.StartedAt), p.Counts.Sent, p.Counts.Tokens)
}

// releaseConfirmPage asks before a held push is released.
func (d *dashboard) releaseConfirmPage(w http.ResponseWriter, r *http.Request) {
	a, p, ok := d.appPush(w, r)
	if !ok {
		return
	}
	c := confirmData{
		Question: "Release this held push?",
		Consequence: heldSummary(a, p) + " Released, it goes on where it stood at the copy's instant: what it had not sent is sent now, " +
			"and the messages that were in flight then are sent again (shown as resent), so a device may get those twice " +
			"if the original server sent them after the copy was taken.",
		Action: appPath(a.ID, "pushes", p.ID, "release"), Button: "Release the push", ButtonID: "confirm-release",
		Back: appPath(a.ID, "pushes", p.ID),
	}
	if !held(p) {
		c.Blocked = fmt.Sprintf("This push is %s, not held: only a push a restore held can be released.", p.Status)
	}
	d.render(w, r, http.StatusOK, "confirm", viewOf(c.Question, a, c))
}

// releasePush releases a held push and shows it.
func (d *dashboard) releasePush(w http.ResponseWriter, r *http.Request) {
	if !confirmed(r) {
		http.Redirect(w, r, r.URL.Path, http.StatusSeeOther) // to the confirmation page
		return
	}
	a, p, ok := d.appPush(w, r)
	if !ok {
		return
	}
	if _, err := d.Delivery.Release(r.Context(), p.ID); err != nil {
		d.fail(w, r, err)
		return
	}
	d.done(w, r, appPath(a.ID, "pushes", p.ID), flash{AppID: a.ID, Notice: "Held push released: it goes on where it stood."})
}

// heldCancelConfirm asks before a held push is cancelled.
func (d *dashboard) heldCancelConfirm(w http.ResponseWriter, r *http.Request, a herald.App, p herald.Push) {
	refund := "What it charged stands: it had begun sending."
	if p.StartedAt == nil {
		refund = fmt.Sprintf("Its %s Server Actions are refunded.", formatActions(p.ServerActionsHalf))
	}
	c := confirmData{
		Question:    "Cancel this held push?",
		Consequence: heldSummary(a, p) + " Cancelled, nothing more of it is sent. " + refund + " This cannot be undone.",
		Action:      appPath(a.ID, "scheduled", p.ID, "cancel"), Button: "Cancel the push", ButtonID: "confirm-cancel",
		Back: appPath(a.ID, "pushes", p.ID),
	}
	d.render(w, r, http.StatusOK, "confirm", viewOf(c.Question, a, c))
}

// cancelHeld cancels a held push and shows it.
func (d *dashboard) cancelHeld(w http.ResponseWriter, r *http.Request, a herald.App, p herald.Push) {
	if _, err := d.Delivery.CancelScheduled(r.Context(), p.ID); err != nil {
		d.fail(w, r, err)
		return
	}
	d.done(w, r, appPath(a.ID, "pushes", p.ID), flash{AppID: a.ID, Notice: "Held push cancelled: nothing more of it is sent."})
}
