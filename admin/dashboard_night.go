package admin

import (
	"fmt"
	"net/http"

	"github.com/heraldpush/herald"
)

// deferring reports whether p is a sending push whose deferred part (see
// herald.NightDefer) still waits for the morning.
func deferring(p herald.Push) bool {
	return p.Status == herald.StatusSending && p.DeferredUntil != nil
}

// deferCancelConfirm asks before the deferred part of a push is cancelled,
// saying what follows; past the deadline it says why it cannot be.
func (d *dashboard) deferCancelConfirm(w http.ResponseWriter, r *http.Request, a herald.App, p herald.Push) {
	c := confirmData{
		Question: "Cancel the deferred part of this push?",
		Consequence: fmt.Sprintf("The %d tokens of %q waiting for %s are not sent: they count as suppressed by the night, "+
			"and their users who were sent nothing else are refunded. This cannot be undone.",
			p.Counts.DeferredNight, p.Content.Title, when(a.Location(), p.DeferredUntil)),
		Action: appPath(a.ID, "scheduled", p.ID, "cancel"), Button: "Cancel the deferred part", ButtonID: "confirm-cancel",
		Back: appPath(a.ID, "pushes", p.ID),
	}
	if err := herald.CheckDeferCancel(*p.DeferredUntil, d.Now()); err != nil {
		c.Blocked = "The deferred part can no longer be cancelled: only until 5 minutes before it is sent."
	}
	d.render(w, r, http.StatusOK, "confirm", viewOf(c.Question, a, c))
}

// cancelDeferred cancels the deferred part of a push and shows the push.
func (d *dashboard) cancelDeferred(w http.ResponseWriter, r *http.Request, a herald.App, p herald.Push) {
	if _, err := d.Delivery.CancelScheduled(r.Context(), p.ID); err != nil {
		d.fail(w, r, err)
		return
	}
	d.done(w, r, appPath(a.ID, "pushes", p.ID), flash{AppID: a.ID, Notice: "Deferred part cancelled; its users were refunded."})
}
