// Package handler assembles Herald's two listeners: New builds the public
// handler (Server API and SDK API) and the admin handler (admin API and
// dashboard) from one Deps. server.New calls it, for `herald serve` and
// for every test that runs a node (directly or through internal/testenv).
package handler

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/admin"
	"github.com/heraldpush/herald/api"
	"github.com/heraldpush/herald/fcm"
	"github.com/heraldpush/herald/metrics"
	"github.com/heraldpush/herald/web"
	"github.com/heraldpush/herald/webhook"
)

// Store is what both listeners need of storage (sqlstore.Store).
type Store interface {
	api.Store
	admin.Store
	herald.EventStore
}

// Delivery is what both listeners need of delivery (delivery.Service).
type Delivery interface {
	api.Pusher
	admin.Delivery
}

// Deps are the dependencies of both listeners.
type Deps struct {
	Store Store
	// Delivery accepts, edits and cancels pushes; nil in tests that send
	// none (push endpoints then fail).
	Delivery  Delivery
	MasterKey *herald.MasterKey
	// AdminToken is the admin API's bearer token.
	AdminToken string
	Logger     *slog.Logger
	// Metrics, when set, is told of every request and event and serves the
	// admin listener's /metrics.
	Metrics *metrics.Metrics
	// Ready reports whether the service can take traffic (/readyz).
	Ready func(*http.Request) web.Readiness
	// Now is the handlers' clock (time.Now when nil).
	Now func() time.Time
	// API is the public API's rate limits and Admin the admin listener's
	// settings, as the operator set them (server.Config).
	API   api.Limits
	Admin admin.Options
	// FCM and Webhook are how the node sends; their AllowAnyTokenURI and
	// AllowPrivate relax the admin API's checks of uploads.
	FCM     fcm.ClientOptions
	Webhook webhook.SenderOptions
}

// New returns the public and the admin listeners' handlers.
func New(d Deps) (public, adminHandler http.Handler) {
	pc := api.Config{Store: d.Store, Events: d.Store, Pushes: d.Delivery, Logger: d.Logger, Ready: d.Ready, Now: d.Now,
		MasterKey: d.MasterKey, Limits: d.API}
	ac := admin.Config{Store: d.Store, Delivery: d.Delivery, MasterKey: d.MasterKey, Token: d.AdminToken, Logger: d.Logger,
		Ready: d.Ready, Now: d.Now, Options: d.Admin,
		Checks: admin.Checks{OpenAPI: api.OpenAPI, FCMCredentials: fcmCredentials(d.FCM.AllowAnyTokenURI),
			WebhookURL: webhookURL(d.Webhook.AllowPrivate), NewWebhookSecret: webhook.NewSecret}}
	if d.Metrics != nil {
		pc.Observe, pc.CountEvent = d.Metrics.Observer("public"), d.Metrics.Event
		ac.Observe, ac.Metrics = d.Metrics.Observer("admin"), d.Metrics.Handler()
	}
	return api.NewHandler(pc), admin.NewHandler(ac)
}

// fcmCredentials validates an uploaded service-account file. A token_uri
// other than Google's refused because the server does not allow any says
// which setting would (the FCM emulator's file is the usual case).
func fcmCredentials(allowAnyTokenURI bool) func([]byte) error {
	return func(b []byte) error {
		_, err := fcm.ParseServiceAccount(b, allowAnyTokenURI)
		if e, ok := errors.AsType[*fcm.InvalidServiceAccountError](err); ok && e.Field == "token_uri" && !allowAnyTokenURI {
			return fmt.Errorf("%w; another token endpoint (the FCM emulator's, for tests) is accepted only when the server "+
				"runs with HERALD_FCM_ALLOW_ANY_TOKEN_URI=true (serve --fcm-allow-any-token-uri)", err)
		}
		return err
	}
}

// webhookURL validates a webhook URL. An http URL or a private host
// refused because the server does not allow them says which setting
// would.
func webhookURL(allowPrivate bool) func(string) error {
	return func(u string) error {
		err := webhook.ValidateURL(u, allowPrivate)
		if err == nil || allowPrivate || webhook.ValidateURL(u, true) != nil {
			return err
		}
		return fmt.Errorf("%w; http and private addresses (tests, local use) are accepted only when the server runs with "+
			"HERALD_WEBHOOK_ALLOW_PRIVATE=true (serve --webhook-allow-private)", err)
	}
}
