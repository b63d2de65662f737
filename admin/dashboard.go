package admin

import (
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/identity"
)

// dashboardFiles holds the dashboard's page templates and style sheet, so
// the binary serves them without any file or network access.
//
//go:embed dashboard
var dashboardFiles embed.FS

// dashboard serves the operator's web pages on the admin listener. It is a
// browser front for the same store and scheduler calls as the JSON API;
// forms post back to it, protected by the session cookie and a CSRF token.
type dashboard struct {
	*server
	pages    map[string]*template.Template
	sessions identity.SessionStore
	hasher   *identity.Hasher
	// oidc is the single sign-on provider; nil when none is configured.
	oidc *oidcProvider
}

func newDashboard(s *server) *dashboard {
	funcs := template.FuncMap{
		"when":    when,
		"brief":   brief,
		"actions": formatActions,
		"rate":    openRate,
		"suffix":  herald.TokenSuffix,
		"short":   shortID,
		"ref":     ref,
		"plain":   plainFailure,
		"reason":  unreachableReason,
		"add":     func(a, b int) int { return a + b },
		"deref":   func(p *int64) int64 { return *p },
		"source":  sourceWords,
		"yesno":   yesNo,
		"ttl":     formatTTL,
		// route is a route's pattern as a person reads it: Go's "{$}"
		// (the exact path) dropped, so "GET /{$}" reads "GET /".
		"route": func(pattern string) string { return strings.ReplaceAll(pattern, "{$}", "") },
		// shown is a push's content as the pages list it (herald.App.ShownContent).
		"shown": func(a *herald.App, p herald.Push) herald.Content { return a.ShownContent(p) },
		"pushRows": func(a *herald.App, ps []herald.Push) pushRowsData {
			return pushRowsData{App: a, Pushes: ps, Loc: a.Location()}
		},
	}
	d := &dashboard{server: s, pages: map[string]*template.Template{}, sessions: s.Store, hasher: identity.NewHasher(), oidc: newOIDCProvider(s.Config)}
	// Each page template is rendered inside layout.html.
	for _, name := range []string{"login", "apps", "app", "pushes", "push", "group", "scheduled", "edit", "usage", "user", "error", "confirm", "consent", "overview", "users", "compose", "operators", "operator", "totp", "setup", "account", "access", "approvals"} {
		// The templates are part of the binary: a parse error is a build
		// mistake that every test catches, so it may panic.
		d.pages[name] = template.Must(template.New(name).Funcs(funcs).ParseFS(dashboardFiles,
			"dashboard/layout.html", "dashboard/pushtable.html", "dashboard/operatorfields.html", "dashboard/"+name+".html"))
	}
	return d
}

// routes lists the dashboard's pages and forms, each with what it needs of
// the signed-in operator (the same rules as the JSON API's routes). They
// are not part of Routes(): that list is the JSON API the OpenAPI document
// describes.
func (d *dashboard) routes() []route {
	return []route{
		{"GET /login", identity.NeedPublic, d.loginPage},
		{"POST /login", identity.NeedPublic, d.sameOrigin(d.login)},
		{"GET /login/totp", identity.NeedPublic, d.totpPage},
		{"POST /login/totp", identity.NeedPublic, d.totpLogin},
		{"GET /setup", identity.NeedPublic, d.setupPage},
		{"POST /setup", identity.NeedPublic, d.sameOrigin(d.setup)},
		{"GET /oidc/login", identity.NeedPublic, d.oidcLogin},
		{"GET /oidc/callback", identity.NeedPublic, d.oidcCallback},
		{"POST /logout", identity.NeedSignedIn, d.logout},
		{"GET /account", identity.NeedAccount, d.accountPage},
		{"POST /account/totp", identity.NeedAccount, d.enrolTOTP},
		{"POST /account/totp/confirm", identity.NeedAccount, d.confirmTOTP},
		{"GET /dashboard.css", identity.NeedPublic, d.asset("dashboard/dashboard.css", "text/css; charset=utf-8")},
		{"GET /dashboard.js", identity.NeedPublic, d.asset("dashboard/dashboard.js", "text/javascript; charset=utf-8")},
		{"GET /{$}", identity.NeedViewer, d.appsPage},
		{"POST /apps", identity.NeedEveryApp, d.createApp},
		{"GET /apps/{appId}", identity.NeedViewer, d.appPage},
		{"POST /apps/{appId}/settings", identity.NeedAdmin, d.updateApp},
		{"GET /apps/{appId}/secret-key", identity.NeedAdmin, d.confirmPage(confirmReissue)},
		{"POST /apps/{appId}/secret-key", identity.NeedAdmin, d.reissueSecret},
		{"GET /apps/{appId}/identity-secret", identity.NeedAdmin, d.confirmPage(confirmIdentitySecret)},
		{"POST /apps/{appId}/identity-secret", identity.NeedAdmin, d.rotateIdentitySecret},
		{"POST /apps/{appId}/fcm-credentials", identity.NeedAdmin, d.putFCMCredentials},
		{"GET /apps/{appId}/fcm-credentials/delete", identity.NeedAdmin, d.confirmPage(confirmRemoveFCM)},
		{"POST /apps/{appId}/fcm-credentials/delete", identity.NeedAdmin, d.deleteFCMCredentials},
		{"POST /apps/{appId}/webhook", identity.NeedAdmin, d.putWebhook},
		{"GET /apps/{appId}/webhook/delete", identity.NeedAdmin, d.confirmPage(confirmRemoveWebhook)},
		{"POST /apps/{appId}/webhook/delete", identity.NeedAdmin, d.deleteWebhook},
		{"POST /apps/{appId}/test-push", identity.NeedOperator, d.dashboardTestPush},
		{"POST /apps/{appId}/delete", identity.NeedEveryApp, d.deleteApp},
		{"GET /apps/{appId}/pushes", identity.NeedViewer, d.historyPage},
		{"GET /apps/{appId}/pushes/{pushId}", identity.NeedViewer, d.pushPage},
		{"GET /apps/{appId}/pushes/{pushId}/recipients", identity.NeedOperator, d.dashboardRecipients},
		{"GET /apps/{appId}/pushes/{pushId}/release", identity.NeedOperator, d.releaseConfirmPage},
		{"POST /apps/{appId}/pushes/{pushId}/release", identity.NeedOperator, d.releasePush},
		{"GET /apps/{appId}/groups/{requestGroupId}", identity.NeedViewer, d.groupPage},
		{"GET /apps/{appId}/scheduled", identity.NeedViewer, d.scheduledPage},
		{"GET /apps/{appId}/approvals", identity.NeedViewer, d.approvalsPage},
		{"POST /apps/{appId}/pushes/{pushId}/approve", identity.NeedOperator, d.approvePush},
		{"POST /apps/{appId}/pushes/{pushId}/reject", identity.NeedOperator, d.rejectPush},
		{"GET /apps/{appId}/scheduled/{pushId}", identity.NeedOperator, d.editPage},
		{"POST /apps/{appId}/scheduled/{pushId}", identity.NeedOperator, d.editPush},
		{"GET /apps/{appId}/scheduled/{pushId}/cancel", identity.NeedOperator, d.cancelConfirmPage},
		{"POST /apps/{appId}/scheduled/{pushId}/cancel", identity.NeedOperator, d.cancelPush},
		{"GET /apps/{appId}/overview", identity.NeedViewer, d.overviewPage},
		{"GET /apps/{appId}/compose", identity.NeedOperator, d.composePage},
		{"POST /apps/{appId}/compose", identity.NeedOperator, d.compose},
		{"POST /apps/{appId}/audience/count", identity.NeedOperator, d.audienceCount},
		{"GET /apps/{appId}/usage", identity.NeedViewer, d.usagePage},
		{"GET /apps/{appId}/users", identity.NeedOperator, d.userPage},
		{"GET /apps/{appId}/users/export", identity.NeedOperator, d.dashboardExport},
		{"POST /apps/{appId}/users/consent", identity.NeedOperator, d.setUserConsent},
		{"POST /apps/{appId}/users/tags", identity.NeedOperator, d.setUserTags},
		{"GET /apps/{appId}/consent", identity.NeedOperator, d.consentPage},
		{"GET /apps/{appId}/consent-due.csv", identity.NeedOperator, d.consentCSV},
		{"POST /apps/{appId}/reconfirmation/run", identity.NeedOperator, d.runReconfirmation},
		{"GET /operators", identity.NeedEveryApp, d.operatorsPage},
		{"POST /operators", identity.NeedEveryApp, d.addOperatorForm},
		{"GET /operators/{operatorId}", identity.NeedEveryApp, d.operatorPage},
		{"POST /operators/{operatorId}", identity.NeedEveryApp, d.editOperatorForm},
		{"POST /operators/{operatorId}/disabled", identity.NeedEveryApp, d.disableOperatorForm},
		{"GET /operators/{operatorId}/delete", identity.NeedEveryApp, d.deleteOperatorConfirm},
		{"POST /operators/{operatorId}/delete", identity.NeedEveryApp, d.deleteOperatorForm},
		{"POST /operators/{operatorId}/setup-link", identity.NeedEveryApp, d.setupLinkForm},
		{"POST /operators/{operatorId}/totp/delete", identity.NeedEveryApp, d.resetTOTPForm},
		{"POST /operators/{operatorId}/tokens", identity.NeedEveryApp, d.createTokenForm},
		{"POST /operators/{operatorId}/tokens/{tokenId}/delete", identity.NeedEveryApp, d.deleteTokenForm},
		{"GET /access", identity.NeedEveryApp, d.accessPage},
		{"GET /access/records.jsonl", identity.NeedEveryApp, d.accessDownload},
	}
}

// pushRowsData is what the "pushtable" template lists.
type pushRowsData struct {
	App    *herald.App
	Pushes []herald.Push
	Loc    *time.Location
}

// view is what every page template gets.
type view struct {
	Title string
	// CSRF is the session's form token; empty on the login page.
	CSRF string
	// App is the app the page is about, for the navigation; nil for none.
	App *herald.App
	// Loc is the time zone times are shown in: the app's, else UTC.
	Loc     *time.Location
	Notice  string
	Secret  *shownSecret
	Problem *problem
	Data    any
	// Op is the signed-in operator; the pages show only the links and
	// forms Op may use (Can).
	Op herald.Operator
}

// Can reports whether the signed-in operator may do what the named need
// asks: "viewer", "operator", "admin" or "everyApp".
func (v view) Can(name string) bool { return identity.Can(v.Op, name) }

// shownSecret is a secret shown once, right after it was made.
type shownSecret struct{ Label, Value string }

// problem is an error as a page shows it.
type problem struct {
	Code, Message string
	Details       []herald.Detail
}

func (v view) appID() string {
	if v.App == nil {
		return ""
	}
	return v.App.ID
}

// viewOf starts the view of a page about app a.
func viewOf(title string, a herald.App, data any) view {
	return view{Title: title, App: &a, Loc: a.Location(), Data: data}
}

// render writes a page: the notice left by the previous POST (when it was
// about the same app), the session's CSRF token, then the template, buffered
// so that a template error becomes a clean error page.
func (d *dashboard) render(w http.ResponseWriter, r *http.Request, status int, page string, v view) {
	if v.Loc == nil {
		v.Loc = time.UTC
	}
	if sess, ok := sessionFrom(r); ok {
		v.Op = sess.op
		v.CSRF = identity.CSRFToken(sess.secret)
		if f, ok := d.takeFlash(w, r, sess); ok && f.AppID == v.appID() {
			v.Notice = f.Notice
			if f.SecretValue != "" {
				v.Secret = &shownSecret{f.SecretLabel, f.SecretValue}
			}
		}
	}
	var buf bytes.Buffer
	if err := d.pages[page].ExecuteTemplate(&buf, "layout", v); err != nil {
		d.Logger.ErrorContext(r.Context(), "dashboard template", "page", page, "err", err)
		http.Error(w, "Internal server error.", http.StatusInternalServerError)
		return
	}
	securityHeaders(w.Header())
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// securityHeaders keeps the pages, which show keys and secrets, out of
// caches and frames, and allows nothing but this origin's style sheet and
// script (the copy buttons).
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
}

// problemOf turns err into what a page shows and the status it answers
// with. An error without a code is logged here, once, and shown only as
// "Internal server error.", like the JSON API's ERR-AB-SYS-00.
func (d *dashboard) problemOf(r *http.Request, err error) (int, *problem) {
	e := herald.AsError(err)
	if e == nil && errors.Is(r.Context().Err(), context.DeadlineExceeded) {
		e = herald.ErrUnavailable // the store did not answer within the request's deadline
	}
	if e == nil {
		d.Logger.ErrorContext(r.Context(), "internal error", "path", r.URL.Path, "err", err)
		e = herald.ErrInternal
	}
	p := &problem{Code: e.Code, Message: e.Message, Details: e.Details}
	switch e.Code {
	case herald.ErrScheduleLocked.Code:
		p.Message = "This push can no longer be changed: a scheduled push can be edited or cancelled only while it is still scheduled, until 5 minutes before its send time."
	case herald.ErrInvalidRequest.Code:
		p.Message = "Please correct the following and try again."
	case herald.ErrNotFound.Code:
		p.Message = "Not found: it does not exist, or it was deleted."
	case herald.ErrUnavailable.Code:
		p.Message = "The database is not answering (unreachable, full or read-only). Try again in a few seconds."
		p.Details = nil
	}
	return e.Status, p
}

// fail shows err on the error page.
func (d *dashboard) fail(w http.ResponseWriter, r *http.Request, err error) {
	status, p := d.problemOf(r, err)
	d.render(w, r, status, "error", view{Title: "Error", Problem: p})
}

// failOn shows err on page v, typically the form that was posted.
func (d *dashboard) failOn(w http.ResponseWriter, r *http.Request, err error, page string, v view) {
	status, p := d.problemOf(r, err)
	v.Problem = p
	d.render(w, r, status, page, v)
}

// done ends a successful POST: it leaves a notice (and a secret to show
// once) for the next page and redirects there, so reloading it posts nothing.
func (d *dashboard) done(w http.ResponseWriter, r *http.Request, to string, f flash) {
	if sess, ok := sessionFrom(r); ok {
		d.setFlash(w, r, sess, f)
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// asset serves one of the embedded files; the browser may keep it an hour.
func (d *dashboard) asset(name, contentType string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		b, err := dashboardFiles.ReadFile(name)
		if err != nil {
			d.fail(w, r, err)
			return
		}
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Cache-Control", "max-age=3600")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Write(b)
	}
}

// formatActions writes half Server Actions as Server Actions: 3 → "1.5".
func formatActions(half int64) string {
	return strconv.FormatFloat(herald.ServerActions(half), 'f', -1, 64)
}

// formatTTL says a push's options.ttl in words.
func formatTTL(ttl *int) string {
	switch {
	case ttl == nil:
		return "FCM's default (4 weeks)"
	case *ttl == 0:
		return "0: delivered now or never"
	}
	return fmt.Sprintf("%d s (%s) from each send", *ttl, time.Duration(*ttl)*time.Second)
}

// openRate formats a push's open rate (opened / sent) as a percentage;
// "—" when nothing was sent.
func openRate(c herald.Counts) string {
	r, ok := c.OpenRate()
	if !ok {
		return "—"
	}
	return strconv.FormatFloat(100*r, 'f', 1, 64) + "%"
}

// brief formats a time to the minute in loc, for the columns of a list
// whose heading names the zone; "—" for none.
func brief(loc *time.Location, t any) string {
	s := when(loc, t)
	if len(s) < 16 {
		return s
	}
	return s[:16]
}

// when formats a time (time.Time or *time.Time) in loc; "—" for none.
func when(loc *time.Location, t any) string {
	var tt time.Time
	switch v := t.(type) {
	case time.Time:
		tt = v
	case *time.Time:
		if v != nil {
			tt = *v
		}
	}
	if tt.IsZero() {
		return "—"
	}
	return tt.In(loc).Format("2006-01-02 15:04:05 MST")
}

// unknownPages answers a browser asking for a page the admin listener does
// not have with an HTML page; API clients (and every path under /admin/)
// keep the JSON error of next.
func (d *dashboard) unknownPages(mux *http.ServeMux, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); pattern != "" || !wantsPage(r) {
			next.ServeHTTP(w, r)
			return
		}
		if sess, ok := d.session(r); ok {
			r = r.WithContext(context.WithValue(r.Context(), sessionKey{}, sess))
		}
		d.render(w, r, http.StatusNotFound, "error", view{Title: "Page not found",
			Problem: &problem{Code: herald.ErrRouteNotFound.Code, Message: "There is no such page on this dashboard."}})
	})
}

// wantsPage reports whether a request comes from a browser navigating to a
// page rather than from an API client.
func wantsPage(r *http.Request) bool {
	return !strings.HasPrefix(r.URL.Path, "/admin/") && strings.Contains(r.Header.Get("Accept"), "text/html")
}
