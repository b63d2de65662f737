package admin

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/access"
)

// Single sign-on by OpenID Connect (DESIGN 11): the authorization code
// flow with state, nonce and PKCE (S256). The operator is the one whose
// email the provider returns with email_verified true, matched as
// identity.EmailKey compares (ASCII letters only); the first sign-in binds
// the operator to the provider's (issuer, sub), and a later one with
// another subject for that email is refused as an unknown operator is, so
// a second account at the provider that claims the same email is no way
// in. Signing in never creates an operator, and the provider's own second
// factor stands for TOTP. It is not throttled: the provider authenticates.

// OIDCConfig is the single sign-on provider (HERALD_OIDC_ISSUER,
// HERALD_OIDC_CLIENT_ID, HERALD_OIDC_CLIENT_SECRET).
type OIDCConfig struct {
	Issuer, ClientID, ClientSecret string
}

// CheckOIDCIssuer refuses an issuer that is not an https URL, but for an
// http one on a loopback host (a provider on the same machine).
func CheckOIDCIssuer(issuer string) error {
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%q is not a URL", issuer)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		host := u.Hostname()
		if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
			return nil
		}
		return fmt.Errorf("%q: an http issuer is allowed only on a loopback address; use https", issuer)
	}
	return fmt.Errorf("%q is not an https URL", issuer)
}

const (
	// oidcCookie holds a sign-in's state, nonce and PKCE verifier, sealed
	// with the master key, between the redirect to the provider and its
	// answer. It is SameSite=Lax: the answer is a navigation from the
	// provider's site, which a Strict cookie would not come back with.
	oidcCookie = "herald_oidc"
	oidcTTL    = 10 * time.Minute
)

// oidcProvider is the configured provider, discovered at its first use (so
// a provider down at start delays no start) and again after a failure.
type oidcProvider struct {
	cfg      OIDCConfig
	redirect string

	mu       sync.Mutex
	provider *oidc.Provider
}

func newOIDCProvider(c Config) *oidcProvider {
	if c.OIDC.Issuer == "" {
		return nil
	}
	return &oidcProvider{cfg: c.OIDC, redirect: strings.TrimSuffix(c.AdminURL, "/") + "/oidc/callback"}
}

// discover returns the provider's endpoints and keys.
func (p *oidcProvider) discover(ctx context.Context) (*oidc.Provider, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.provider == nil {
		pr, err := oidc.NewProvider(ctx, p.cfg.Issuer)
		if err != nil {
			return nil, fmt.Errorf("single sign-on provider %s: %w", p.cfg.Issuer, err)
		}
		p.provider = pr
	}
	return p.provider, nil
}

func (p *oidcProvider) oauth2(pr *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{ClientID: p.cfg.ClientID, ClientSecret: p.cfg.ClientSecret, Endpoint: pr.Endpoint(),
		RedirectURL: p.redirect, Scopes: []string{oidc.ScopeOpenID, "email", "profile"}}
}

// oidcCookieName is the oidcCookie's name: __Secure- prefixed when the
// admin URL is https (its Path is /oidc/, which __Host- does not allow).
func (d *dashboard) oidcCookieName() string { return d.guard.SecureCookieName(oidcCookie) }

// oidcFlow is one sign-in's secrets, kept in the oidcCookie.
type oidcFlow struct {
	State    string `json:"state"`
	Nonce    string `json:"nonce"`
	Verifier string `json:"verifier"`
	Expires  int64  `json:"expires"`
}

// oidcLogin sends the browser to the provider.
func (d *dashboard) oidcLogin(w http.ResponseWriter, r *http.Request) {
	if d.oidc == nil {
		d.fail(w, r, herald.ErrNotFound)
		return
	}
	pr, err := d.oidc.discover(r.Context())
	if err != nil {
		d.oidcRefused(w, r, "", err, "The single sign-on provider could not be reached. Try again, or sign in with your password.")
		return
	}
	f := oidcFlow{State: rand.Text(), Nonce: rand.Text(), Verifier: oauth2.GenerateVerifier(), Expires: d.Now().Add(oidcTTL).Unix()}
	b, _ := json.Marshal(f)
	http.SetCookie(w, &http.Cookie{Name: d.oidcCookieName(), Value: base64.RawURLEncoding.EncodeToString(d.MasterKey.Seal(b)),
		Path: "/oidc/", MaxAge: int(oidcTTL.Seconds()), HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: d.guard.SecureCookies(r)})
	http.Redirect(w, r, d.oidc.oauth2(pr).AuthCodeURL(f.State, oidc.Nonce(f.Nonce), oauth2.S256ChallengeOption(f.Verifier)), http.StatusSeeOther)
}

// oidcFlowOf reads and clears the flow's cookie.
func (d *dashboard) oidcFlowOf(w http.ResponseWriter, r *http.Request) (oidcFlow, bool) {
	var f oidcFlow
	c, err := r.Cookie(d.oidcCookieName())
	if err != nil {
		return f, false
	}
	http.SetCookie(w, &http.Cookie{Name: d.oidcCookieName(), Path: "/oidc/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: d.guard.SecureCookies(r)})
	sealed, err := base64.RawURLEncoding.DecodeString(c.Value)
	if err != nil {
		return f, false
	}
	b, err := d.MasterKey.Open(sealed)
	if err != nil || json.Unmarshal(b, &f) != nil || d.Now().Unix() >= f.Expires {
		return f, false
	}
	return f, true
}

// oidcCallback takes the provider's answer: it checks the state, redeems
// the code with the verifier, verifies the ID token and its nonce, and
// signs in the enabled operator with the token's verified email.
func (d *dashboard) oidcCallback(w http.ResponseWriter, r *http.Request) {
	if d.oidc == nil {
		d.fail(w, r, herald.ErrNotFound)
		return
	}
	q := r.URL.Query()
	f, ok := d.oidcFlowOf(w, r)
	if !ok || subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(f.State)) != 1 {
		d.oidcRefused(w, r, "", nil, "This single sign-on answer does not belong to a sign-in begun here, or came too late. Start again.")
		return
	}
	if e := q.Get("error"); e != "" {
		d.oidcRefused(w, r, "", nil, "The single sign-on provider refused: "+e+".")
		return
	}
	id, err := d.oidcIdentity(r.Context(), q.Get("code"), f)
	email := id.Email
	if err != nil {
		d.oidcRefused(w, r, "", err, "The single sign-on provider's answer could not be verified. Start again.")
		return
	}
	if !id.Verified {
		d.oidcRefused(w, r, email, nil, "Your single sign-on provider has not verified the email "+email+".")
		return
	}
	op, _, err := d.Store.OperatorByEmail(r.Context(), email)
	if err != nil && !errors.Is(err, herald.ErrNotFound) {
		d.failOn(w, r, err, "login", d.loginView(""))
		return
	}
	bound := false
	if err == nil && !op.Disabled {
		if bound, err = d.Store.BindOIDC(r.Context(), op.ID, id.Issuer, id.Subject); err != nil {
			d.failOn(w, r, err, "login", d.loginView(""))
			return
		}
	}
	if !bound {
		d.oidcRefused(w, r, email, nil, "No operator of this dashboard has the email "+email+" (or it is disabled). Ask an admin to add you.")
		return
	}
	access.NoteOf(r.Context()).SignIn(email, op)
	if err := d.startSession(w, r, op, false); err != nil {
		d.failOn(w, r, err, "login", d.loginView(""))
		return
	}
	d.continueTo(w, d.landing(op))
}

// oidcID is who the provider says signed in: its (issuer, subject), and
// the email with whether the provider verified it.
type oidcID struct {
	Issuer, Subject, Email string
	Verified               bool
}

// oidcIdentity redeems the code and returns the verified ID token's
// identity.
func (d *dashboard) oidcIdentity(ctx context.Context, code string, f oidcFlow) (oidcID, error) {
	pr, err := d.oidc.discover(ctx)
	if err != nil {
		return oidcID{}, err
	}
	tok, err := d.oidc.oauth2(pr).Exchange(ctx, code, oauth2.VerifierOption(f.Verifier))
	if err != nil {
		return oidcID{}, fmt.Errorf("redeem the code: %w", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return oidcID{}, errors.New("the token answer has no id_token")
	}
	idt, err := pr.Verifier(&oidc.Config{ClientID: d.oidc.cfg.ClientID, Now: d.Now}).Verify(ctx, raw)
	if err != nil {
		return oidcID{}, err
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(f.Nonce)) != 1 {
		return oidcID{}, errors.New("the ID token's nonce is not this sign-in's")
	}
	var claims struct {
		Email         string `json:"email"`
		EmailVerified bool   `json:"email_verified"`
	}
	if err := idt.Claims(&claims); err != nil {
		return oidcID{}, err
	}
	switch {
	case claims.Email == "":
		return oidcID{}, errors.New("the ID token has no email (is the email scope allowed?)")
	case idt.Subject == "":
		return oidcID{}, errors.New("the ID token has no sub")
	}
	return oidcID{Issuer: idt.Issuer, Subject: idt.Subject, Email: claims.Email, Verified: claims.EmailVerified}, nil
}

// oidcRefused answers a single sign-on that signed no one in, on the
// sign-in page; err, when set, is logged.
func (d *dashboard) oidcRefused(w http.ResponseWriter, r *http.Request, email string, err error, message string) {
	access.NoteOf(r.Context()).SignIn(email, herald.Operator{})
	if err != nil {
		d.Logger.WarnContext(r.Context(), "single sign-on failed", "err", err)
	}
	v := d.loginView("")
	v.Problem = &problem{Code: herald.ErrUnauthorized.Code, Message: message}
	d.render(w, r, http.StatusUnauthorized, "login", v)
}

// continuePage sends the browser on from the provider's answer by a page
// of this site rather than a redirect: a redirect would keep the
// navigation cross-site, which the SameSite=Strict session cookie does
// not come back with.
var continuePage = template.Must(template.New("continue").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="0;url={{.}}"><title>Signed in · Herald</title></head>
<body><p>Signed in. <a href="{{.}}" id="continue">Continue</a></p></body></html>
`))

func (d *dashboard) continueTo(w http.ResponseWriter, to string) {
	securityHeaders(w.Header())
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	continuePage.Execute(w, to)
}
