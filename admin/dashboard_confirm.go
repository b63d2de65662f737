package admin

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/heraldpush/herald"
)

// A destructive action (reissue the secret, remove the FCM credentials or
// the webhook, cancel a scheduled push) takes two steps without script: its
// button opens a page that says what will happen, whose form posts the
// action with confirmed=yes. A post without it is sent to that page.

// confirmData is what a confirmation page shows.
type confirmData struct {
	// Question is the page's heading; Consequence says what follows.
	Question, Consequence string
	// Action is the form's target; Button its label and ButtonID its id.
	Action, Button, ButtonID string
	// Back is where "Keep it" leads.
	Back string
	// Blocked, when set, says why the action cannot be taken now.
	Blocked string
}

// confirmed reports whether a posted form carries the confirmation.
func confirmed(r *http.Request) bool { return r.PostFormValue("confirmed") == "yes" }

// confirmedApp loads the app of a destructive POST; an unconfirmed post
// is sent to its confirmation page (the GET of the same path).
func (d *dashboard) confirmedApp(w http.ResponseWriter, r *http.Request) (herald.App, bool) {
	if !confirmed(r) {
		http.Redirect(w, r, r.URL.Path, http.StatusSeeOther)
		return herald.App{}, false
	}
	return d.app(w, r)
}

// confirmPage serves the confirmation page that ask builds for the app.
func (d *dashboard) confirmPage(ask func(a herald.App) confirmData) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		a, ok := d.app(w, r)
		if !ok {
			return
		}
		c := ask(a)
		d.render(w, r, http.StatusOK, "confirm", viewOf(c.Question, a, c))
	}
}

func confirmReissue(a herald.App) confirmData {
	return confirmData{
		Question:    "Reissue the secret key?",
		Consequence: "A new secret key is made and shown once. The current one stops working at once: every back end that calls the Server API for " + a.Name + " is refused (401) until it has the new key.",
		Action:      appPath(a.ID, "secret-key"), Button: "Reissue the secret key", ButtonID: "confirm-reissue", Back: appPath(a.ID),
	}
}

func confirmIdentitySecret(a herald.App) confirmData {
	c := confirmData{
		Question: "Issue an identity secret?",
		Consequence: "A secret is made and shown once. " + a.Name + "'s back end signs each userId with it (identityToken, " +
			"see docs/operations.md); identity verification can then be turned on.",
		Action: appPath(a.ID, "identity-secret"), Button: "Issue the identity secret", ButtonID: "confirm-identity-secret", Back: appPath(a.ID),
	}
	if len(a.IdentitySecret) > 0 {
		c.Question, c.Button = "Rotate the identity secret?", "Rotate the identity secret"
		c.Consequence = "A new secret is made and shown once. Tokens made with the current one keep working for 24 hours, then stop"
		if a.IdentityVerification {
			c.Consequence += ": after that, every SDK call of " + a.Name +
				" that sets a userId or changes a user's consent is refused (401 ERR-AB-SDK-31) unless the back end signs with the new secret"
		}
		c.Consequence += "."
	}
	return c
}

func confirmRemoveFCM(a herald.App) confirmData {
	return confirmData{
		Question:    "Remove the FCM credentials?",
		Consequence: "The service-account file is deleted. Pushes of " + a.Name + " are refused (404 ERR-AB-PSS-92) until a new one is uploaded; scheduled pushes that come due meanwhile fail.",
		Action:      appPath(a.ID, "fcm-credentials", "delete"), Button: "Remove the credentials", ButtonID: "confirm-fcm-remove", Back: appPath(a.ID),
	}
}

func confirmRemoveWebhook(a herald.App) confirmData {
	return confirmData{
		Question:    "Remove the webhook?",
		Consequence: "Unreachable users of later pushes are no longer reported to " + a.WebhookURL + ", and its signing secret is deleted.",
		Action:      appPath(a.ID, "webhook", "delete"), Button: "Remove the webhook", ButtonID: "confirm-webhook-remove", Back: appPath(a.ID),
	}
}

// cancelConfirmPage asks before a scheduled push is cancelled, saying what
// is refunded; a push that can no longer be cancelled says why instead.
func (d *dashboard) cancelConfirmPage(w http.ResponseWriter, r *http.Request) {
	a, p, ok := d.appPush(w, r)
	if !ok {
		return
	}
	if deferring(p) {
		d.deferCancelConfirm(w, r, a, p)
		return
	}
	if held(p) {
		d.heldCancelConfirm(w, r, a, p)
		return
	}
	if awaiting(p) {
		d.awaitingCancelConfirm(w, r, a, p)
		return
	}
	c := confirmData{
		Question: "Cancel this scheduled push?",
		Consequence: fmt.Sprintf("%q, due %s, is not sent, and its %s Server Actions are refunded. This cannot be undone.",
			p.Content.Title, when(a.Location(), p.ScheduledAt), formatActions(p.ServerActionsHalf)),
		Action: appPath(a.ID, "scheduled", p.ID, "cancel"), Button: "Cancel the push", ButtonID: "confirm-cancel",
		Back: appPath(a.ID, "scheduled"),
	}
	if err := p.CheckEditable(d.Now()); err != nil {
		c.Blocked = "This push can no longer be cancelled: only a scheduled push can be, until 5 minutes before its send time."
	}
	d.render(w, r, http.StatusOK, "confirm", viewOf(c.Question, a, c))
}

// dashboardTestPush sends the app page's test push and shows the push.
func (d *dashboard) dashboardTestPush(w http.ResponseWriter, r *http.Request) {
	a, ok := d.app(w, r)
	if !ok {
		return
	}
	f := testPushForm{UserID: strings.TrimSpace(r.PostFormValue("userId")), Token: strings.TrimSpace(r.PostFormValue("token")),
		Title: strings.ReplaceAll(r.PostFormValue("title"), "\r\n", "\n"), Content: strings.ReplaceAll(r.PostFormValue("content"), "\r\n", "\n")}
	q := testPushRequest{Title: &f.Title, Content: &f.Content}
	if f.UserID != "" {
		q.UserID, _ = json.Marshal(f.UserID)
	}
	if f.Token != "" {
		q.Token = &f.Token
	}
	t, details := q.problems()
	var id string
	var err error
	if len(details) > 0 {
		err = herald.Invalid(details...)
	} else {
		id, err = d.sendTestPush(r.Context(), a, t)
	}
	if err != nil {
		d.failOn(w, r, err, "app", d.appView(a, f))
		return
	}
	to := "user " + t.UserID
	if t.Token != "" {
		to = "the device holding token …" + herald.TokenSuffix(t.Token)
	}
	d.done(w, r, appPath(a.ID, "pushes", id), flash{AppID: a.ID,
		Notice: fmt.Sprintf("Test push sent to %s, not charged. This page shows how it went; reload it to follow.", to)})
}
