package admin

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
	"github.com/heraldpush/herald/identity"
)

func tiers() []herald.Tier {
	return []herald.Tier{herald.TierFree, herald.TierBasic, herald.TierBusiness, herald.TierEnterprise}
}

// appForm is what the create form shows: the defaults, or what was posted.
type appForm struct {
	Name, Tier, TimeZone string
	AppUserEnabled       bool
}

type appsData struct {
	Apps  []herald.App
	Form  appForm
	Tiers []herald.Tier
}

// webhookEventChoice is one webhook event type on the app page.
type webhookEventChoice struct {
	Type herald.WebhookEvent
	On   bool
}

// webhookEventChoices lists every webhook event type, those on the app's
// list checked.
func webhookEventChoices(a herald.App) []webhookEventChoice {
	out := make([]webhookEventChoice, len(herald.WebhookEvents))
	for i, e := range herald.WebhookEvents {
		out[i] = webhookEventChoice{Type: e, On: slices.Contains(a.WebhookEventList(), e)}
	}
	return out
}

// settingsFrom reads app settings from a form, in the shape of the JSON
// body, so that appSettings.apply judges them. A check box comes after a
// hidden "false" of the same name: the last value wins, and a form without
// the field leaves the setting alone.
func settingsFrom(f url.Values) appSettings {
	text := func(k string) *string {
		if !f.Has(k) {
			return nil
		}
		v := f.Get(k)
		return &v
	}
	flag := func(k string) *bool {
		vs := f[k]
		if len(vs) == 0 {
			return nil
		}
		v := vs[len(vs)-1] == "true"
		return &v
	}
	p := appSettings{Name: text("name"), TimeZone: text("timeZone"), AppUserEnabled: flag("appUserEnabled"), Registered: flag("registered"),
		AdPrefixCheck: flag("adPrefixCheck"), Sandbox: flag("sandbox"), IdentityVerification: flag("identityVerification")}
	if t := text("tier"); t != nil {
		tier := herald.Tier(*t)
		p.Tier = &tier
	}
	if r := text("sendRatePerMinute"); r != nil {
		p.SendRatePerMinute = formNumber(*r)
	}
	adFromForm(&p, text("adSenderName"), text("adSenderContact"), text("adOptOut"))
	if f.Has("approval.mode") {
		mode := herald.ApprovalMode(f.Get("approval.mode"))
		p.Approval = &approvalSettings{Mode: &mode}
		if v := text("approval.minUsers"); v != nil {
			p.Approval.MinUsers = formNumber(*v)
		}
	}
	// The frequency cap's fields replace the setting, as a PATCH does; an
	// empty one is no cap in its window.
	if f.Has("marketingCap.perDay") || f.Has("marketingCap.perWeek") {
		p.MarketingCap = &marketingCapSettings{PerDay: capField(f.Get("marketingCap.perDay")), PerWeek: capField(f.Get("marketingCap.perWeek"))}
	}
	// The consent notice forms send every member of their setting, which
	// each replaces whole, as a PATCH does.
	if f.Has("consentNotice.title") {
		p.ConsentNotice = &noticeSettings{Enabled: flag("consentNotice.enabled"), Title: text("consentNotice.title"),
			Content: text("consentNotice.content")}
	}
	if f.Has("reconfirmation.title") {
		p.Reconfirmation = &reconfirmationSettings{Enabled: flag("reconfirmation.enabled"), Title: text("reconfirmation.title"),
			Content: text("reconfirmation.content")}
		if v := text("reconfirmation.leadDays"); v != nil {
			p.Reconfirmation.LeadDays = formNumber(*v)
		}
	}
	// The webhook events form lists every type, checked or not, and
	// marks that it was sent: its list replaces the app's, as a PATCH's.
	if f.Has("webhookEvents.form") {
		list := append([]string{}, f["webhookEvents"]...)
		p.WebhookEvents = &list
	}
	return p
}

// adFromForm reads the ad footer's fields: both sender fields empty clear
// the sender, an empty opt-out field clears it, as null does in JSON; a
// form without the fields leaves them alone.
func adFromForm(p *appSettings, name, contact, optOut *string) {
	if name != nil && contact != nil {
		if strings.TrimSpace(*name) == "" && strings.TrimSpace(*contact) == "" {
			p.clearAdSender = true
		} else {
			p.AdSender = &adSenderSettings{Name: name, Contact: contact}
		}
	}
	if optOut != nil {
		if strings.TrimSpace(*optOut) == "" {
			p.clearAdOptOut = true
		} else {
			p.AdOptOut = optOut
		}
	}
}

// formNumber reads a number typed into a form; text that is none reads as
// NaN, which every bound refuses, so the form names the field as the JSON
// API does.
func formNumber(s string) *float64 {
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.ReplaceAll(s, ",", "")), 64)
	if err != nil {
		v = math.NaN()
	}
	return &v
}

// capField reads a frequency cap's field: nil when empty (no cap), else
// as formNumber does.
func capField(s string) *float64 {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	return formNumber(s)
}

// appFormOf is the create form as posted, to show it again.
func appFormOf(f url.Values) appForm {
	on := settingsFrom(f).AppUserEnabled
	return appForm{Name: f.Get("name"), Tier: f.Get("tier"), TimeZone: f.Get("timeZone"), AppUserEnabled: on != nil && *on}
}

func (d *dashboard) appsView(r *http.Request, form appForm) (view, error) {
	apps, err := d.Store.ListApps(r.Context())
	if err != nil {
		return view{}, err
	}
	apps = identity.VisibleApps(identity.RequestOperator(r), apps)
	return view{Title: "Apps", Data: appsData{Apps: apps, Form: form, Tiers: tiers()}}, nil
}

func (d *dashboard) appsPage(w http.ResponseWriter, r *http.Request) {
	v, err := d.appsView(r, appForm{Tier: string(herald.TierFree), TimeZone: herald.DefaultTimeZone})
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.render(w, r, http.StatusOK, "apps", v)
}

func (d *dashboard) createApp(w http.ResponseWriter, r *http.Request) {
	a, secret, details := d.newApp(settingsFrom(r.PostForm))
	var err error
	if len(details) > 0 {
		err = herald.Invalid(details...)
	} else {
		err = d.Store.CreateApp(r.Context(), a)
	}
	if err != nil {
		v, lerr := d.appsView(r, appFormOf(r.PostForm))
		if lerr != nil {
			d.fail(w, r, lerr)
			return
		}
		d.failOn(w, r, err, "apps", v)
		return
	}
	access.NoteOf(r.Context()).About(a.ID, "")
	d.done(w, r, "/apps/"+a.ID, flash{AppID: a.ID, Notice: "App created.", SecretLabel: "Secret key", SecretValue: secret})
}

// app loads the app named in the path, or shows why it cannot.
func (d *dashboard) app(w http.ResponseWriter, r *http.Request) (herald.App, bool) {
	a, err := d.Store.App(r.Context(), r.PathValue("appId"))
	if err != nil {
		d.fail(w, r, err)
		return a, false
	}
	return a, true
}

// appPageData is what the app page shows beside the app.
type appPageData struct {
	Tiers []herald.Tier
	// FCM describes the stored service-account file; nil when none is.
	FCM      *fcmAccount
	TestPush testPushForm
	// WebhookEvents are the webhook event types, each with whether the
	// app takes it.
	WebhookEvents []webhookEventChoice
}

// fcmAccount is what the app page tells of the stored service account.
type fcmAccount struct {
	ProjectID, ClientEmail string
	// Unreadable: the file cannot be opened with this master key.
	Unreadable bool
}

// testPushForm is the "send a test push" form: empty, or as posted. It
// names a user or a token.
type testPushForm struct{ UserID, Token, Title, Content string }

// fcmAccountOf opens the app's sealed service-account file to show which
// project and account it is.
func (d *dashboard) fcmAccountOf(a herald.App) *fcmAccount {
	if len(a.FCMCredentials) == 0 {
		return nil
	}
	b, err := d.MasterKey.Open(a.FCMCredentials)
	var sa struct {
		ProjectID   string `json:"project_id"`
		ClientEmail string `json:"client_email"`
	}
	if err != nil || json.Unmarshal(b, &sa) != nil {
		return &fcmAccount{Unreadable: true}
	}
	return &fcmAccount{ProjectID: sa.ProjectID, ClientEmail: sa.ClientEmail}
}

// appView is the app page of a, with the test push form as given.
func (d *dashboard) appView(a herald.App, form testPushForm) view {
	return viewOf(a.Name, a, appPageData{Tiers: tiers(), FCM: d.fcmAccountOf(a), TestPush: form,
		WebhookEvents: webhookEventChoices(a)})
}

func (d *dashboard) appPage(w http.ResponseWriter, r *http.Request) {
	if a, ok := d.app(w, r); ok {
		d.render(w, r, http.StatusOK, "app", d.appView(a, testPushForm{}))
	}
}

// failOnApp shows err on the app page, above the form that was posted.
func (d *dashboard) failOnApp(w http.ResponseWriter, r *http.Request, a herald.App, err error) {
	d.failOn(w, r, err, "app", d.appView(a, testPushForm{}))
}

// appDone redirects to the app page with a notice.
func (d *dashboard) appDone(w http.ResponseWriter, r *http.Request, appID string, f flash) {
	f.AppID = appID
	d.done(w, r, "/apps/"+url.PathEscape(appID), f)
}

func (d *dashboard) updateApp(w http.ResponseWriter, r *http.Request) {
	a, ok := d.app(w, r)
	if !ok {
		return
	}
	stored := a
	if details := settingsFrom(r.PostForm).apply(&a); len(details) > 0 {
		d.failOnApp(w, r, stored, herald.Invalid(details...))
		return
	}
	if err := d.Store.UpdateApp(r.Context(), a); err != nil {
		d.failOnApp(w, r, stored, err)
		return
	}
	d.appDone(w, r, a.ID, flash{Notice: "Settings saved."})
}

func (d *dashboard) reissueSecret(w http.ResponseWriter, r *http.Request) {
	a, ok := d.confirmedApp(w, r)
	if !ok {
		return
	}
	secret := herald.NewSecretKey()
	if err := d.Store.SetSecretHash(r.Context(), a.ID, herald.HashSecret(secret)); err != nil {
		d.failOnApp(w, r, a, err)
		return
	}
	d.appDone(w, r, a.ID, flash{Notice: "New secret key issued; the old one no longer works.", SecretLabel: "Secret key", SecretValue: secret})
}

// rotateIdentitySecret issues the app a new identity secret, once
// confirmed, and shows it once.
func (d *dashboard) rotateIdentitySecret(w http.ResponseWriter, r *http.Request) {
	a, ok := d.confirmedApp(w, r)
	if !ok {
		return
	}
	secret, err := d.issueIdentitySecret(r.Context(), a.ID)
	if err != nil {
		d.failOnApp(w, r, a, err)
		return
	}
	notice := "Identity secret issued."
	if len(a.IdentitySecret) > 0 {
		notice = "New identity secret issued; tokens made with the old one no longer verify."
	}
	d.appDone(w, r, a.ID, flash{Notice: notice, SecretLabel: "Identity secret", SecretValue: secret})
}

// serviceAccountFrom returns the uploaded file, else the pasted text.
func serviceAccountFrom(r *http.Request) ([]byte, error) {
	if r.MultipartForm != nil {
		if fhs := r.MultipartForm.File["file"]; len(fhs) > 0 && fhs[0].Size > 0 {
			f, err := fhs[0].Open()
			if err != nil {
				return nil, err
			}
			defer f.Close()
			return io.ReadAll(io.LimitReader(f, maxServiceAccount+1))
		}
	}
	return []byte(r.PostFormValue("serviceAccount")), nil
}

func (d *dashboard) putFCMCredentials(w http.ResponseWriter, r *http.Request) {
	a, ok := d.app(w, r)
	if !ok {
		return
	}
	body, err := serviceAccountFrom(r)
	switch {
	case err != nil:
	case len(strings.TrimSpace(string(body))) == 0:
		err = herald.Invalid(herald.Detail{Field: "serviceAccount", Reason: "is required: choose the file or paste its content"})
	default:
		err = d.storeCredentials(r.Context(), a.ID, body, "serviceAccount")
	}
	if err != nil {
		d.failOnApp(w, r, a, err)
		return
	}
	d.appDone(w, r, a.ID, flash{Notice: "FCM credentials saved."})
}

func (d *dashboard) deleteFCMCredentials(w http.ResponseWriter, r *http.Request) {
	a, ok := d.confirmedApp(w, r)
	if !ok {
		return
	}
	if err := d.Store.SetFCMCredentials(r.Context(), a.ID, nil); err != nil {
		d.failOnApp(w, r, a, err)
		return
	}
	d.appDone(w, r, a.ID, flash{Notice: "FCM credentials removed."})
}

func (d *dashboard) putWebhook(w http.ResponseWriter, r *http.Request) {
	a, ok := d.app(w, r)
	if !ok {
		return
	}
	u := strings.TrimSpace(r.PostFormValue("url"))
	var secret string
	var err error = herald.Invalid(herald.Detail{Field: "url", Reason: "is required"})
	if u != "" {
		secret, err = d.setWebhook(r.Context(), a.ID, u)
	}
	if err != nil {
		d.failOnApp(w, r, a, err)
		return
	}
	d.appDone(w, r, a.ID, flash{Notice: "Webhook set.", SecretLabel: "Webhook signing secret", SecretValue: secret})
}

func (d *dashboard) deleteWebhook(w http.ResponseWriter, r *http.Request) {
	a, ok := d.confirmedApp(w, r)
	if !ok {
		return
	}
	if err := d.Store.SetWebhook(r.Context(), a.ID, "", nil); err != nil {
		d.failOnApp(w, r, a, err)
		return
	}
	d.appDone(w, r, a.ID, flash{Notice: "Webhook removed."})
}

// deleteApp deletes the app once its name was typed to confirm: a plain
// form needs no script for that.
func (d *dashboard) deleteApp(w http.ResponseWriter, r *http.Request) {
	a, ok := d.app(w, r)
	if !ok {
		return
	}
	if strings.TrimSpace(r.PostFormValue("confirm")) != a.Name {
		d.failOnApp(w, r, a, herald.Invalid(herald.Detail{Field: "confirm", Reason: "must be the app's name, to confirm the deletion"}))
		return
	}
	if err := d.Store.DeleteApp(r.Context(), a.ID); err != nil {
		d.failOnApp(w, r, a, err)
		return
	}
	d.done(w, r, "/", flash{Notice: fmt.Sprintf("App %q deleted.", a.Name)})
}
