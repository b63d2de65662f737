package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
	"github.com/heraldpush/herald/identity"
	"github.com/heraldpush/herald/request"
	"github.com/heraldpush/herald/web"
)

// appJSON is the admin shape of an app.
type appJSON struct {
	AppID             string         `json:"appId"`
	Name              string         `json:"name"`
	APIKey            string         `json:"apiKey"`
	SecretKey         string         `json:"secretKey,omitempty"`
	Tier              herald.Tier    `json:"tier"`
	AppUserEnabled    bool           `json:"appUserEnabled"`
	Registered        bool           `json:"registered"`
	TimeZone          string         `json:"timeZone"`
	DefaultConsent    herald.Consent `json:"defaultConsent"`
	HasFCMCredentials bool           `json:"hasFcmCredentials"`
	WebhookURL        *string        `json:"webhookUrl"`
	// WebhookEvents are the webhook event types the app takes (its list,
	// or the default one).
	WebhookEvents []herald.WebhookEvent `json:"webhookEvents"`
	CreatedAt     time.Time             `json:"createdAt"`
	// AdPrefixCheck refuses a push marked options.isMarketing whose title
	// lacks "(광고)", and puts the ad footer on every marketing message
	// (default true).
	AdPrefixCheck bool `json:"adPrefixCheck"`
	// Sandbox: pushes are only validated by FCM and not charged.
	Sandbox bool `json:"sandbox"`
	// SendRatePerMinute paces the app's FCM sends.
	SendRatePerMinute int `json:"sendRatePerMinute"`
	// AdSender and AdOptOut make the footer of the app's advertising
	// (herald.App.AdFooter); null when unset.
	AdSender *adSenderJSON `json:"adSender"`
	AdOptOut *string       `json:"adOptOut"`
	// ConsentNotice and Reconfirmation are the consent notices, with
	// their defaults filled in.
	ConsentNotice  noticeJSON         `json:"consentNotice"`
	Reconfirmation reconfirmationJSON `json:"reconfirmation"`
	// IdentityVerification, HasIdentitySecret and IdentityRefusals are
	// the SDK's identity verification: whether it is on, whether a secret
	// was issued (the secret itself is shown only when issued), and the
	// SDK calls refused for a missing or wrong identityToken.
	IdentityVerification bool  `json:"identityVerification"`
	HasIdentitySecret    bool  `json:"hasIdentitySecret"`
	IdentityRefusals     int64 `json:"identityRefusals"`
	// Approval says which pushes wait for another operator's approval.
	Approval approvalJSON `json:"approval"`
	// MarketingCap bounds the marketing pushes one user receives.
	MarketingCap marketingCapJSON `json:"marketingCap"`
}

// marketingCapJSON is the admin shape of the frequency cap: each member
// null for no cap in its window.
type marketingCapJSON struct {
	PerDay  *int `json:"perDay"`
	PerWeek *int `json:"perWeek"`
}

// approvalJSON is the admin shape of the approval setting.
type approvalJSON struct {
	Mode     herald.ApprovalMode `json:"mode"`
	MinUsers int                 `json:"minUsers"`
}

// noticeJSON is the admin shape of the result notice setting.
type noticeJSON struct {
	Enabled bool   `json:"enabled"`
	Title   string `json:"title"`
	Content string `json:"content"`
}

// reconfirmationJSON is the admin shape of the re-confirmation setting.
type reconfirmationJSON struct {
	Enabled  bool   `json:"enabled"`
	Title    string `json:"title"`
	Content  string `json:"content"`
	LeadDays int    `json:"leadDays"`
}

// adSenderJSON is who sends an app's advertising.
type adSenderJSON struct {
	Name    string `json:"name"`
	Contact string `json:"contact"`
}

func toJSON(a herald.App) appJSON {
	out := appJSON{
		AppID: a.ID, Name: a.Name, APIKey: a.APIKey, Tier: a.Tier, AppUserEnabled: a.AppUserEnabled,
		Registered: a.Registered, TimeZone: a.TimeZone, DefaultConsent: a.DefaultConsent,
		HasFCMCredentials: len(a.FCMCredentials) > 0, WebhookEvents: a.WebhookEventList(), CreatedAt: a.CreatedAt,
		AdPrefixCheck: !a.NoAdPrefixCheck, Sandbox: a.Sandbox, SendRatePerMinute: a.SendRate(),
		IdentityVerification: a.IdentityVerification, HasIdentitySecret: len(a.IdentitySecret) > 0,
		IdentityRefusals: a.IdentityRefusals, Approval: approvalJSON{a.Approval.ModeOrOff(), a.Approval.MinUsers},
		MarketingCap: marketingCapJSON{a.MarketingCap.PerDay, a.MarketingCap.PerWeek},
	}
	n, rc := a.ConsentNotice.WithDefaults(), a.Reconfirmation.WithDefaults()
	out.ConsentNotice = noticeJSON{n.Enabled, n.Title, n.Content}
	out.Reconfirmation = reconfirmationJSON{rc.Enabled, rc.Title, rc.Content, rc.LeadDays}
	if a.WebhookURL != "" {
		out.WebhookURL = &a.WebhookURL
	}
	if a.AdSenderName != "" || a.AdSenderContact != "" {
		out.AdSender = &adSenderJSON{Name: a.AdSenderName, Contact: a.AdSenderContact}
	}
	if a.AdOptOut != "" {
		out.AdOptOut = &a.AdOptOut
	}
	return out
}

// appSettings is the body of app create and patch: absent fields keep their
// value (or take the default on create).
type appSettings struct {
	Name           *string         `json:"name"`
	Tier           *herald.Tier    `json:"tier"`
	AppUserEnabled *bool           `json:"appUserEnabled"`
	Registered     *bool           `json:"registered"`
	TimeZone       *string         `json:"timeZone"`
	DefaultConsent *herald.Consent `json:"defaultConsent"`
	AdPrefixCheck  *bool           `json:"adPrefixCheck"`
	Sandbox        *bool           `json:"sandbox"`
	// SendRatePerMinute is read as any JSON number, so that a fraction is
	// named as out of bounds rather than as not a number.
	SendRatePerMinute *float64 `json:"sendRatePerMinute"`
	// AdSender is given whole, both members; AdOptOut alone. A member set
	// to null clears the setting (clearAdSender, clearAdOptOut).
	AdSender                     *adSenderSettings `json:"adSender"`
	AdOptOut                     *string           `json:"adOptOut"`
	clearAdSender, clearAdOptOut bool
	// ConsentNotice and Reconfirmation replace the whole setting: omitted
	// members take their defaults.
	ConsentNotice  *noticeSettings         `json:"consentNotice"`
	Reconfirmation *reconfirmationSettings `json:"reconfirmation"`
	// IdentityVerification turns the SDK's identity verification on or
	// off; on needs an identity secret issued first.
	IdentityVerification *bool `json:"identityVerification"`
	// WebhookEvents replaces the app's list of webhook event types.
	WebhookEvents *[]string `json:"webhookEvents"`
	// Approval replaces the approval setting; an omitted member keeps its
	// value. MinUsers is read as any JSON number, so that a fraction is
	// named as out of bounds.
	Approval *approvalSettings `json:"approval"`
	// MarketingCap replaces the frequency cap: an omitted or null member
	// is no cap in its window, and marketingCap null clears both
	// (clearMarketingCap). Members are read as any JSON number, so that a
	// fraction is named as out of bounds.
	MarketingCap      *marketingCapSettings `json:"marketingCap"`
	clearMarketingCap bool
}

// marketingCapSettings is marketingCap in a create or patch body.
type marketingCapSettings struct {
	PerDay  *float64 `json:"perDay"`
	PerWeek *float64 `json:"perWeek"`
}

// applyMarketingCap writes the frequency cap the body gives onto a.
func (p appSettings) applyMarketingCap(a *herald.App) []herald.Detail {
	switch {
	case p.clearMarketingCap:
		a.MarketingCap = herald.MarketingCap{}
	case p.MarketingCap != nil:
		a.MarketingCap = herald.MarketingCap{PerDay: herald.CapMember(p.MarketingCap.PerDay), PerWeek: herald.CapMember(p.MarketingCap.PerWeek)}
	}
	return a.MarketingCap.Problems("marketingCap")
}

// approvalSettings is approval in a create or patch body.
type approvalSettings struct {
	Mode     *herald.ApprovalMode `json:"mode"`
	MinUsers *float64             `json:"minUsers"`
}

// applyApproval writes the approval setting the body gives onto a.
func (p appSettings) applyApproval(a *herald.App) []herald.Detail {
	if p.Approval == nil {
		return nil
	}
	if p.Approval.Mode != nil {
		a.Approval.Mode = *p.Approval.Mode
	}
	if v := p.Approval.MinUsers; v != nil {
		a.Approval.MinUsers = -1 // out of bounds unless whole
		if *v == float64(int(*v)) {
			a.Approval.MinUsers = int(*v)
		}
	}
	a.Approval.Mode = a.Approval.ModeOrOff()
	return a.Approval.Problems("approval")
}

// noticeSettings is consentNotice in a create or patch body.
type noticeSettings struct {
	Enabled *bool   `json:"enabled"`
	Title   *string `json:"title"`
	Content *string `json:"content"`
}

// reconfirmationSettings is reconfirmation in a create or patch body.
type reconfirmationSettings struct {
	Enabled  *bool    `json:"enabled"`
	Title    *string  `json:"title"`
	Content  *string  `json:"content"`
	LeadDays *float64 `json:"leadDays"`
}

// setting returns the notice the members give, defaults for the rest.
func (n noticeSettings) setting() herald.ConsentNotice {
	out := herald.ConsentNotice{}.WithDefaults()
	if n.Enabled != nil {
		out.Enabled = *n.Enabled
	}
	if n.Title != nil {
		out.Title = *n.Title
	}
	if n.Content != nil {
		out.Content = *n.Content
	}
	return out
}

// applyNotices replaces the consent notice settings the body gives.
func (p appSettings) applyNotices(a *herald.App) []herald.Detail {
	var d []herald.Detail
	if p.ConsentNotice != nil {
		a.ConsentNotice = p.ConsentNotice.setting()
		d = append(d, a.ConsentNotice.Problems("consentNotice")...)
	}
	if q := p.Reconfirmation; q != nil {
		n := noticeSettings{q.Enabled, q.Title, q.Content}.setting()
		r := herald.Reconfirmation{Enabled: n.Enabled, Title: n.Title, Content: n.Content, LeadDays: herald.DefaultLeadDays}
		if q.Title == nil {
			r.Title = herald.DefaultReconfirmationTitle
		}
		if q.Content == nil {
			r.Content = herald.DefaultReconfirmationContent
		}
		if q.LeadDays != nil {
			r.LeadDays = -1 // out of bounds unless whole
			if v := *q.LeadDays; v == float64(int(v)) {
				r.LeadDays = int(v)
			}
		}
		a.Reconfirmation = r
		d = append(d, r.Problems("reconfirmation")...)
	}
	return d
}

// adSenderSettings is the adSender member of app settings.
type adSenderSettings struct {
	Name    *string `json:"name"`
	Contact *string `json:"contact"`
}

// decodeSettings reads the body of app create or patch; a null adSender or
// adOptOut clears the setting, where any other null leaves a setting alone.
func decodeSettings(r *http.Request) (appSettings, error) {
	var p appSettings
	body, err := readBody(r)
	if err == nil {
		err = decodeBody(body, &p)
	}
	if err != nil {
		return p, err
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) == nil {
		p.clearAdSender = string(bytes.TrimSpace(m["adSender"])) == "null"
		p.clearAdOptOut = string(bytes.TrimSpace(m["adOptOut"])) == "null"
		p.clearMarketingCap = string(bytes.TrimSpace(m["marketingCap"])) == "null"
	}
	return p, nil
}

// applyAd writes the ad footer's settings onto a and returns the problems.
func (p appSettings) applyAd(a *herald.App) []herald.Detail {
	var d []herald.Detail
	check := func(field string, v *string, max int, dst *string) {
		if v == nil {
			d = append(d, herald.Detail{Field: field, Reason: "is required"})
			return
		}
		if reason := herald.AdSettingProblem(*v, max); reason != "" {
			d = append(d, herald.Detail{Field: field, Reason: reason})
		}
		*dst = *v
	}
	switch {
	case p.clearAdSender:
		a.AdSenderName, a.AdSenderContact = "", ""
	case p.AdSender != nil:
		check("adSender.name", p.AdSender.Name, herald.MaxAdSenderName, &a.AdSenderName)
		check("adSender.contact", p.AdSender.Contact, herald.MaxAdSenderContact, &a.AdSenderContact)
	}
	switch {
	case p.clearAdOptOut:
		a.AdOptOut = ""
	case p.AdOptOut != nil:
		check("adOptOut", p.AdOptOut, herald.MaxAdOptOut, &a.AdOptOut)
	}
	return d
}

// apply writes the given settings onto a and returns the problems.
func (p appSettings) apply(a *herald.App) []herald.Detail {
	before := *a
	var d []herald.Detail
	if p.Name != nil {
		if n := strings.TrimSpace(*p.Name); n == "" || utf8.RuneCountInString(n) > 200 {
			d = append(d, herald.Detail{Field: "name", Reason: "must be 1 to 200 characters"})
		} else if !utf8.ValidString(n) {
			d = append(d, herald.Detail{Field: "name", Reason: herald.ReasonInvalidUTF8}) // a dashboard form is not checked as JSON is
		}
		a.Name = strings.TrimSpace(*p.Name)
	}
	if p.Tier != nil {
		if !p.Tier.Valid() {
			d = append(d, herald.Detail{Field: "tier", Reason: "must be free, basic, business or enterprise"})
		}
		a.Tier = *p.Tier
	}
	if p.AppUserEnabled != nil {
		a.AppUserEnabled = *p.AppUserEnabled
	}
	if p.Registered != nil {
		a.Registered = *p.Registered
	}
	if p.TimeZone != nil {
		if !herald.ValidTimeZone(*p.TimeZone) {
			d = append(d, herald.Detail{Field: "timeZone", Reason: "must be an IANA time zone name such as Asia/Seoul"})
		}
		a.TimeZone = *p.TimeZone
	}
	if p.DefaultConsent != nil {
		if p.DefaultConsent.MarketingNight && !p.DefaultConsent.Marketing {
			d = append(d, herald.Detail{Field: "defaultConsent.marketingNight", Reason: "cannot be true when marketing is false"})
		}
		a.DefaultConsent = *p.DefaultConsent
	}
	if p.AdPrefixCheck != nil {
		a.NoAdPrefixCheck = !*p.AdPrefixCheck
	}
	if p.Sandbox != nil {
		a.Sandbox = *p.Sandbox
	}
	if p.SendRatePerMinute != nil {
		rate, ok := herald.SendRateOf(*p.SendRatePerMinute)
		if !ok {
			d = append(d, herald.Detail{Field: "sendRatePerMinute", Reason: herald.ReasonSendRate})
		}
		a.SendRatePerMinute = rate
	}
	if p.IdentityVerification != nil {
		if *p.IdentityVerification && len(a.IdentitySecret) == 0 {
			d = append(d, herald.Detail{Field: "identityVerification", Reason: herald.ReasonNoIdentitySecret})
		}
		a.IdentityVerification = *p.IdentityVerification
	}
	if p.WebhookEvents != nil {
		d = append(d, herald.WebhookEventsProblems("webhookEvents", *p.WebhookEvents)...)
		a.WebhookEvents = make([]herald.WebhookEvent, len(*p.WebhookEvents))
		for i, e := range *p.WebhookEvents {
			a.WebhookEvents[i] = herald.WebhookEvent(e)
		}
	}
	d = append(d, p.applyAd(a)...)
	d = append(d, p.applyNotices(a)...)
	d = append(d, p.applyApproval(a)...)
	d = append(d, p.applyMarketingCap(a)...)
	return append(d, appUserProblem(before, *a)...)
}

// appUserProblem refuses a change that leaves the app-user feature on below
// the business tier, by turning it on or by lowering the tier: the app would
// look enabled while its app-user endpoints answer 403. An app stored so
// before this rule keeps its settings until one of the two changes.
func appUserProblem(before, after herald.App) []herald.Detail {
	if !after.AppUserEnabled || after.Tier.AtLeastBusiness() || !after.Tier.Valid() {
		return nil
	}
	switch {
	case !before.AppUserEnabled:
		return []herald.Detail{{Field: "appUserEnabled", Reason: fmt.Sprintf("needs the business tier or higher (the tier is %s)", after.Tier)}}
	case before.Tier != after.Tier:
		return []herald.Detail{{Field: "tier", Reason: fmt.Sprintf("%s is below business, which the app-user feature needs: turn appUserEnabled off in the same request", after.Tier)}}
	}
	return nil
}

// newApp makes an app from create settings with fresh keys and the
// defaults of POST /admin/v1/apps. It returns the secret key, which is kept
// only as a hash, and the problems of the settings.
func (s *server) newApp(p appSettings) (herald.App, string, []herald.Detail) {
	secret := herald.NewSecretKey()
	a := herald.App{
		ID: herald.NewID("app_", s.Now()), APIKey: herald.NewAPIKey(), SecretHash: herald.HashSecret(secret),
		Tier: herald.TierFree, Registered: true, TimeZone: herald.DefaultTimeZone, CreatedAt: s.Now().UTC().Truncate(time.Millisecond),
	}
	details := p.apply(&a)
	if p.Name == nil {
		details = append(details, herald.Detail{Field: "name", Reason: "is required"})
	}
	return a, secret, details
}

func (s *server) createApp(w http.ResponseWriter, r *http.Request) {
	p, err := decodeSettings(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	a, secret, details := s.newApp(p)
	if len(details) > 0 {
		web.Error(w, r, herald.Invalid(details...))
		return
	}
	if err := s.Store.CreateApp(r.Context(), a); err != nil {
		web.Error(w, r, err)
		return
	}
	access.NoteOf(r.Context()).About(a.ID, "")
	out := toJSON(a)
	out.SecretKey = secret
	web.JSON(w, http.StatusCreated, out)
}

func (s *server) listApps(w http.ResponseWriter, r *http.Request) {
	apps, err := s.Store.ListApps(r.Context())
	if err != nil {
		web.Error(w, r, err)
		return
	}
	op := identity.RequestOperator(r)
	apps = identity.VisibleApps(op, apps)
	out := make([]appJSON, len(apps))
	for i, a := range apps {
		out[i] = shownTo(op, toJSON(a))
	}
	web.JSON(w, http.StatusOK, map[string]any{"apps": out})
}

// app loads the app named in the path; it writes the error itself.
func (s *server) app(w http.ResponseWriter, r *http.Request) (herald.App, bool) {
	a, err := s.Store.App(r.Context(), r.PathValue("appId"))
	if err != nil {
		web.Error(w, r, err)
		return a, false
	}
	return a, true
}

func (s *server) getApp(w http.ResponseWriter, r *http.Request) {
	if a, ok := s.app(w, r); ok {
		web.JSON(w, http.StatusOK, shownTo(identity.RequestOperator(r), toJSON(a)))
	}
}

// shownTo is an app as op may see it: a viewer does not see the webhook's
// URL (DESIGN 11), which may carry a secret of its receiver in its path
// or query; it reads null, as for an app without a webhook.
func shownTo(op herald.Operator, a appJSON) appJSON {
	if !op.Role.Includes(herald.RoleOperator) {
		a.WebhookURL = nil
	}
	return a
}

func (s *server) patchApp(w http.ResponseWriter, r *http.Request) {
	a, ok := s.app(w, r)
	if !ok {
		return
	}
	p, err := decodeSettings(r)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	if d := p.apply(&a); len(d) > 0 {
		web.Error(w, r, herald.Invalid(d...))
		return
	}
	if err := s.Store.UpdateApp(r.Context(), a); err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, toJSON(a))
}

func (s *server) deleteApp(w http.ResponseWriter, r *http.Request) {
	if err := s.Store.DeleteApp(r.Context(), r.PathValue("appId")); err != nil {
		web.Error(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *server) reissueSecret(w http.ResponseWriter, r *http.Request) {
	secret := herald.NewSecretKey()
	if err := s.Store.SetSecretHash(r.Context(), r.PathValue("appId"), herald.HashSecret(secret)); err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, map[string]string{"secretKey": secret})
}

// issueIdentitySecret makes the app a fresh identity secret and stores it
// sealed; tokens of the old one keep verifying for herald.IdentityRotationGrace. It returns the
// secret, shown this once.
func (s *server) issueIdentitySecret(ctx context.Context, appID string) (string, error) {
	secret := herald.NewIdentitySecret()
	return secret, s.Store.SetIdentitySecret(ctx, appID, s.MasterKey.Seal([]byte(secret)))
}

func (s *server) rotateIdentitySecret(w http.ResponseWriter, r *http.Request) {
	secret, err := s.issueIdentitySecret(r.Context(), r.PathValue("appId"))
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, map[string]string{"identitySecret": secret})
}

// maxServiceAccount bounds an uploaded service-account file.
const maxServiceAccount = 64 << 10

// storeCredentials validates a service-account file and stores it sealed;
// field names the input in the 400's details.
func (s *server) storeCredentials(ctx context.Context, appID string, file []byte, field string) error {
	if len(file) > maxServiceAccount {
		return herald.Invalid(herald.Detail{Field: field, Reason: fmt.Sprintf("must be a service-account file of at most %d bytes", maxServiceAccount)})
	}
	if d := request.TextProblems(file); len(d) > 0 {
		return herald.Invalid(d...)
	}
	if !utf8.Valid(file) {
		return herald.Invalid(herald.Detail{Field: field, Reason: "must be UTF-8 text"})
	}
	if err := s.Checks.FCMCredentials(file); err != nil {
		return herald.Invalid(herald.Detail{Field: field, Reason: err.Error()})
	}
	return s.Store.SetFCMCredentials(ctx, appID, s.MasterKey.Seal(file))
}

// setWebhook validates a webhook URL, makes its signing secret and stores
// both; it returns the secret, shown once.
func (s *server) setWebhook(ctx context.Context, appID, url string) (string, error) {
	if err := s.Checks.WebhookURL(url); err != nil {
		return "", herald.Invalid(herald.Detail{Field: "url", Reason: err.Error()})
	}
	secret, err := s.Checks.NewWebhookSecret()
	if err != nil {
		return "", fmt.Errorf("webhook secret: %w", err)
	}
	return secret, s.Store.SetWebhook(ctx, appID, url, s.MasterKey.Seal([]byte(secret)))
}

func (s *server) putFCMCredentials(w http.ResponseWriter, r *http.Request) {
	if _, ok := s.app(w, r); !ok {
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxServiceAccount+1))
	if err == nil {
		err = s.storeCredentials(r.Context(), r.PathValue("appId"), body, "body")
	}
	if err != nil {
		web.Error(w, r, err)
		return
	}
	s.getApp(w, r) // the app, now with hasFcmCredentials; never the file
}

func (s *server) deleteFCMCredentials(w http.ResponseWriter, r *http.Request) {
	if err := s.Store.SetFCMCredentials(r.Context(), r.PathValue("appId"), nil); err != nil {
		web.Error(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *server) putWebhook(w http.ResponseWriter, r *http.Request) {
	var p struct {
		URL *string `json:"url"`
	}
	if err := decode(r, &p); err != nil {
		web.Error(w, r, err)
		return
	}
	if p.URL == nil {
		web.Error(w, r, herald.Invalid(herald.Detail{Field: "url", Reason: "is required"}))
		return
	}
	secret, err := s.setWebhook(r.Context(), r.PathValue("appId"), *p.URL)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.JSON(w, http.StatusOK, map[string]string{"url": *p.URL, "secret": secret})
}

func (s *server) deleteWebhook(w http.ResponseWriter, r *http.Request) {
	if err := s.Store.SetWebhook(r.Context(), r.PathValue("appId"), "", nil); err != nil {
		web.Error(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
