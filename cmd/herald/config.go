package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/admin"
	"github.com/heraldpush/herald/api"
	"github.com/heraldpush/herald/fcm"
	"github.com/heraldpush/herald/server"
	"github.com/heraldpush/herald/webhook"
)

// config is the whole configuration of `herald serve`: defaults, then
// HERALD_* variables, then flags. It is validated once.
type config struct {
	Addr        string
	AdminAddr   string
	DataDir     string
	DatabaseURL string
	AdminToken  string
	MasterKey   string
	// FCM is how the node reaches FCM: its endpoint and client options
	// (FCM.Client.Transport is fcm.TransportLean or fcm.TransportStandard);
	// its ProjectRate is filled from FCMProjectRate once validated.
	FCM server.FCM
	// Webhook is how webhooks are sent (HERALD_WEBHOOK_ALLOW_PRIVATE).
	Webhook   webhook.SenderOptions
	LogLevel  string
	LogFormat string
	// API is the public API's rate limits: the Server and SDK APIs per app,
	// the SDK API per client address, and failed Server API
	// authentications per client address and per app (requests per second
	// on this node, bursts of twice that, zero for none).
	API  api.Limits
	Demo bool
	// DemoFCMAddr is where --demo serves its FCM emulator: a fixed port,
	// so that apps set up against the demo keep working after a restart.
	DemoFCMAddr string
	// Admin is the admin listener's settings: TrustProxy trusts
	// X-Forwarded-Proto and X-Forwarded-For (its session cookie is Secure
	// behind a TLS proxy, and failed sign-ins are counted per real
	// client); AdminURL is its address as browsers reach it, which setup
	// links and single sign-on's redirect URI (AdminURL + "/oidc/callback")
	// start with ("" is http:// and the admin listener's address);
	// RequireTOTP makes admins enrol TOTP before any dashboard page; OIDC
	// configures single sign-on (none when the issuer is empty).
	Admin admin.Options
	// FCMProjectRate is HERALD_FCM_PROJECT_RATE as given: sends a minute
	// of all apps of one FCM project together (see fcmProjectRate).
	FCMProjectRate string
	// RetentionDays is HERALD_RETENTION_DAYS as given: how long a finished
	// push's body and rows are kept (see retentionDays).
	RetentionDays string
	// typed holds the flags given on the command line, so that errors name
	// a setting as the user gave it.
	typed map[string]bool
	// overrides are what tests change in the node (server.Overrides);
	// `herald serve` sets none.
	overrides server.Overrides
}

// clock returns the configured clock, the real one by default.
func (c *config) clock() func() time.Time {
	if c.overrides.Clock != nil {
		return c.overrides.Clock
	}
	return time.Now
}

// loadConfig reads the configuration of `herald serve`; --help is written
// to stdout.
func loadConfig(args []string, getenv func(string) string, stdout io.Writer) (config, error) {
	return loadConfigFor("serve", args, getenv, stdout)
}

// loadConfigFor reads the configuration of serve or migrate: defaults,
// HERALD_* variables, then the command's flags.
func loadConfigFor(name string, args []string, getenv func(string) string, stdout io.Writer) (config, error) {
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	envBool := func(name string) bool { b, _ := strconv.ParseBool(getenv(name)); return b }
	c := config{
		Addr:        env("HERALD_ADDR", "127.0.0.1:8080"),
		AdminAddr:   env("HERALD_ADMIN_ADDR", "127.0.0.1:8081"),
		DataDir:     env("HERALD_DATA_DIR", "./herald-data"),
		DatabaseURL: getenv("HERALD_DATABASE_URL"),
		AdminToken:  getenv("HERALD_ADMIN_TOKEN"),
		MasterKey:   getenv("HERALD_MASTER_KEY"),
		FCM: server.FCM{Endpoint: env("HERALD_FCM_ENDPOINT", "https://fcm.googleapis.com"), Client: fcm.ClientOptions{
			AllowAnyTokenURI: envBool("HERALD_FCM_ALLOW_ANY_TOKEN_URI"), Transport: env("HERALD_FCM_TRANSPORT", fcm.TransportLean)}},
		FCMProjectRate: env("HERALD_FCM_PROJECT_RATE", strconv.Itoa(herald.DefaultFCMProjectRate)),
		RetentionDays:  env("HERALD_RETENTION_DAYS", strconv.Itoa(herald.DefaultRetentionDays)),
		Webhook:        webhook.SenderOptions{AllowPrivate: envBool("HERALD_WEBHOOK_ALLOW_PRIVATE")},
		Admin: admin.Options{TrustProxy: envBool("HERALD_TRUST_PROXY"), RequireTOTP: envBool("HERALD_REQUIRE_TOTP"),
			AdminURL: getenv("HERALD_ADMIN_URL"), OIDC: admin.OIDCConfig{Issuer: getenv("HERALD_OIDC_ISSUER"),
				ClientID: getenv("HERALD_OIDC_CLIENT_ID"), ClientSecret: getenv("HERALD_OIDC_CLIENT_SECRET")}},
		DemoFCMAddr: "127.0.0.1:9099",
		LogLevel:    env("HERALD_LOG_LEVEL", "info"),
		LogFormat:   env("HERALD_LOG_FORMAT", "text"),
		API:         api.Limits{Server: 5000, SDK: 3000, SDKClient: 50, AuthFailure: 10},
	}
	var errs []error
	for _, r := range []struct {
		name  string
		field *float64
	}{
		{"HERALD_RATE_LIMIT", &c.API.Server}, {"HERALD_SDK_RATE_LIMIT", &c.API.SDK},
		{"HERALD_SDK_CLIENT_RATE_LIMIT", &c.API.SDKClient}, {"HERALD_AUTH_FAILURE_RATE_LIMIT", &c.API.AuthFailure},
	} {
		errs = append(errs, envRate(getenv, r.name, r.field))
	}
	if err := errors.Join(errs...); err != nil {
		return c, err
	}
	cmd := configCommand(name)
	c.flags(cmd.fs, name)
	if _, err := cmd.parse(args, stdout); err != nil {
		return c, err
	}
	c.typed = map[string]bool{}
	cmd.fs.Visit(func(f *flag.Flag) { c.typed[f.Name] = true })
	return c, c.validate()
}

// configCommand is the help of serve or migrate.
func configCommand(name string) *command {
	if name == "migrate" {
		return newCommand("migrate", "herald migrate [flags]",
			"Applies the database migrations of this version and exits; `serve` applies them too at start.\nSettings come from HERALD_* variables; a flag overrides its variable.")
	}
	return newCommand("serve", "herald serve [--demo] [flags]",
		"Runs the public API (Server API and SDK API), the admin listener (dashboard, admin API, /metrics)\nand the delivery workers until SIGINT or SIGTERM. Settings come from HERALD_* variables;\na flag overrides its variable.")
}

// flags registers the flags of serve, or the few of migrate.
func (c *config) flags(fs *flag.FlagSet, name string) {
	fs.StringVar(&c.DataDir, "data-dir", c.DataDir, "data directory of the embedded store (HERALD_DATA_DIR)")
	fs.StringVar(&c.DatabaseURL, "database-url", c.DatabaseURL, "postgres:// URL; empty for embedded SQLite (HERALD_DATABASE_URL)")
	fs.StringVar(&c.LogLevel, "log-level", c.LogLevel, "debug|info|warn|error (HERALD_LOG_LEVEL)")
	fs.StringVar(&c.LogFormat, "log-format", c.LogFormat, "text|json (HERALD_LOG_FORMAT)")
	if name == "migrate" {
		return
	}
	fs.StringVar(&c.Addr, "addr", c.Addr, "public listener address (HERALD_ADDR)")
	fs.StringVar(&c.AdminAddr, "admin-addr", c.AdminAddr, "admin listener address (HERALD_ADMIN_ADDR)")
	fs.StringVar(&c.AdminToken, "admin-token", c.AdminToken, "admin bearer token (HERALD_ADMIN_TOKEN)")
	fs.StringVar(&c.MasterKey, "master-key", c.MasterKey, "base64 32-byte key for secrets at rest (HERALD_MASTER_KEY)")
	fs.StringVar(&c.FCM.Endpoint, "fcm-endpoint", c.FCM.Endpoint, "FCM base URL (HERALD_FCM_ENDPOINT)")
	fs.StringVar(&c.FCM.Client.Transport, "fcm-transport", c.FCM.Client.Transport, "what sends to FCM: lean (Herald's HTTP/2 client) or standard (net/http's) (HERALD_FCM_TRANSPORT)")
	fs.StringVar(&c.FCMProjectRate, "fcm-project-rate", c.FCMProjectRate, "FCM sends a minute of all apps whose service accounts name one project, together: 1 to 10000000 (HERALD_FCM_PROJECT_RATE)")
	fs.StringVar(&c.RetentionDays, "retention-days", c.RetentionDays, fmt.Sprintf("days a finished push's body, deliveries and events are kept: a whole number, at least %d (HERALD_RETENTION_DAYS)", herald.MinRetentionDays))
	fs.BoolVar(&c.FCM.Client.AllowAnyTokenURI, "fcm-allow-any-token-uri", c.FCM.Client.AllowAnyTokenURI, "accept service accounts with any token_uri (HERALD_FCM_ALLOW_ANY_TOKEN_URI)")
	fs.BoolVar(&c.Webhook.AllowPrivate, "webhook-allow-private", c.Webhook.AllowPrivate, "allow http and private webhook addresses (HERALD_WEBHOOK_ALLOW_PRIVATE)")
	fs.StringVar(&c.Admin.AdminURL, "admin-url", c.Admin.AdminURL, "the admin listener's URL as browsers reach it, which setup links and single sign-on's redirect start with; http:// and the admin address by default (HERALD_ADMIN_URL)")
	fs.BoolVar(&c.Admin.TrustProxy, "trust-proxy", c.Admin.TrustProxy, "the admin listener is behind a proxy that sets X-Forwarded-Proto and X-Forwarded-For: trust them (HERALD_TRUST_PROXY)")
	fs.BoolVar(&c.Admin.RequireTOTP, "require-totp", c.Admin.RequireTOTP, "admins must set up TOTP before any other dashboard page (HERALD_REQUIRE_TOTP)")
	fs.StringVar(&c.Admin.OIDC.Issuer, "oidc-issuer", c.Admin.OIDC.Issuer, "OpenID Connect issuer URL for dashboard single sign-on; https, or http on loopback (HERALD_OIDC_ISSUER)")
	fs.StringVar(&c.Admin.OIDC.ClientID, "oidc-client-id", c.Admin.OIDC.ClientID, "OpenID Connect client ID (HERALD_OIDC_CLIENT_ID)")
	fs.StringVar(&c.Admin.OIDC.ClientSecret, "oidc-client-secret", c.Admin.OIDC.ClientSecret, "OpenID Connect client secret (HERALD_OIDC_CLIENT_SECRET)")
	fs.Float64Var(&c.API.Server, "rate-limit", c.API.Server, "Server API requests per second per app on this node, 0 for none (HERALD_RATE_LIMIT)")
	fs.Float64Var(&c.API.SDK, "sdk-rate-limit", c.API.SDK, "SDK API requests per second per app on this node, 0 for none (HERALD_SDK_RATE_LIMIT)")
	fs.Float64Var(&c.API.SDKClient, "sdk-client-rate-limit", c.API.SDKClient, "SDK API requests per second per client address on this node, 0 for none (HERALD_SDK_CLIENT_RATE_LIMIT)")
	fs.Float64Var(&c.API.AuthFailure, "auth-failure-rate-limit", c.API.AuthFailure, "failed Server API authentications per second per client address and per app on this node, 0 for none (HERALD_AUTH_FAILURE_RATE_LIMIT)")
	fs.BoolVar(&c.Demo, "demo", false, "start an in-process FCM emulator and a demo app")
	fs.StringVar(&c.DemoFCMAddr, "demo-fcm-addr", c.DemoFCMAddr, "address of the demo's FCM emulator (with --demo)")
}

// node is the node's configuration (server.Config) but for its secrets
// and logs, which startService adds.
func (c *config) node() server.Config {
	fcmConfig := c.FCM
	fcmConfig.ProjectRate, _ = c.fcmProjectRate() // validated by loadConfig
	days, _ := c.retentionDays()
	return server.Config{Database: server.Database{URL: c.DatabaseURL, SQLitePath: c.sqlitePath()},
		FCM: fcmConfig, Webhook: c.Webhook, API: c.API, Admin: c.Admin, RetentionDays: days}
}

// source names a setting as the user gave it: the flag when one was typed,
// else the environment variable.
func (c *config) source(flagName, envName string) string {
	if c.typed[flagName] {
		return "--" + flagName
	}
	return envName
}

// envRate reads a rate limit variable into field when it is set.
func envRate(getenv func(string) string, name string, field *float64) error {
	v := getenv(name)
	if v == "" {
		return nil
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil || n < 0 || math.IsInf(n, 0) || math.IsNaN(n) {
		return fmt.Errorf("%s: %q is not a non-negative number", name, v)
	}
	*field = n
	return nil
}

func (c *config) validate() error {
	var errs []error
	for _, r := range []struct {
		flag string
		v    float64
	}{
		{"rate-limit", c.API.Server}, {"sdk-rate-limit", c.API.SDK},
		{"sdk-client-rate-limit", c.API.SDKClient}, {"auth-failure-rate-limit", c.API.AuthFailure},
	} {
		if r.v < 0 || math.IsInf(r.v, 0) || math.IsNaN(r.v) {
			errs = append(errs, fmt.Errorf("%s: %v is not a non-negative number", c.source(r.flag, "HERALD_"+strings.ToUpper(strings.ReplaceAll(r.flag, "-", "_"))), r.v))
		}
	}
	if c.DatabaseURL != "" {
		errs = append(errs, c.postgresProblems()...)
	}
	if c.AdminToken != "" {
		errs = append(errs, checkAdminToken(c.AdminToken, c.source("admin-token", "HERALD_ADMIN_TOKEN")))
	}
	if c.MasterKey != "" {
		if _, err := herald.ParseMasterKey(c.MasterKey); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", c.source("master-key", "HERALD_MASTER_KEY"), err))
		}
	}
	if _, err := c.level(); err != nil {
		errs = append(errs, err)
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		errs = append(errs, fmt.Errorf("%s: %q is not text or json", c.source("log-format", "HERALD_LOG_FORMAT"), c.LogFormat))
	}
	if _, err := c.fcmProjectRate(); err != nil {
		errs = append(errs, err)
	}
	if c.Admin.AdminURL != "" {
		if u, err := url.Parse(c.Admin.AdminURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			errs = append(errs, fmt.Errorf("%s: %q is not an http(s) URL such as https://herald-admin.example.com", c.source("admin-url", "HERALD_ADMIN_URL"), c.Admin.AdminURL))
		}
	}
	if _, err := c.retentionDays(); err != nil {
		errs = append(errs, err)
	}
	if !strings.HasPrefix(c.FCM.Endpoint, "http://") && !strings.HasPrefix(c.FCM.Endpoint, "https://") {
		errs = append(errs, fmt.Errorf("%s: %q is not an http(s) URL", c.source("fcm-endpoint", "HERALD_FCM_ENDPOINT"), c.FCM.Endpoint))
	}
	if t := c.FCM.Client.Transport; t != "" && t != fcm.TransportLean && t != fcm.TransportStandard {
		errs = append(errs, fmt.Errorf("%s: %q is neither %s nor %s", c.source("fcm-transport", "HERALD_FCM_TRANSPORT"), t, fcm.TransportLean, fcm.TransportStandard))
	}
	return errors.Join(append(errs, c.oidcProblems()...)...)
}

// oidcProblems checks the single sign-on settings: an issuer needs a
// client ID, and is https but on a loopback address.
func (c *config) oidcProblems() []error {
	oidc := c.Admin.OIDC
	if oidc.Issuer == "" {
		if oidc.ClientID != "" || oidc.ClientSecret != "" {
			return []error{fmt.Errorf("%s: a client is set without an issuer", c.source("oidc-issuer", "HERALD_OIDC_ISSUER"))}
		}
		return nil
	}
	var errs []error
	if err := admin.CheckOIDCIssuer(oidc.Issuer); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", c.source("oidc-issuer", "HERALD_OIDC_ISSUER"), err))
	}
	if oidc.ClientID == "" {
		errs = append(errs, fmt.Errorf("%s: required with an issuer", c.source("oidc-client-id", "HERALD_OIDC_CLIENT_ID")))
	}
	return errs
}

// fcmProjectRate returns the FCM project rate: a whole number from 1 to
// 10,000,000 sends a minute, as an app's rate is bounded; the default when
// unset (a configuration built in code).
func (c *config) fcmProjectRate() (int, error) {
	if c.FCMProjectRate == "" {
		return herald.DefaultFCMProjectRate, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(c.FCMProjectRate))
	if err != nil || n < 1 || n > herald.MaxSendRatePerMinute {
		return 0, fmt.Errorf("%s: %q is not a whole number from 1 to %d (sends a minute per FCM project)",
			c.source("fcm-project-rate", "HERALD_FCM_PROJECT_RATE"), c.FCMProjectRate, herald.MaxSendRatePerMinute)
	}
	return n, nil
}

// retentionDays returns the retention: a whole number of days, at least
// herald.MinRetentionDays; the default when unset (a configuration built
// in code).
func (c *config) retentionDays() (int, error) {
	if c.RetentionDays == "" {
		return herald.DefaultRetentionDays, nil
	}
	n, err := herald.ParseRetentionDays(c.RetentionDays)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", c.source("retention-days", "HERALD_RETENTION_DAYS"), err)
	}
	return n, nil
}

// minAdminToken is the shortest admin token accepted: the token is the
// admin API's and the dashboard's only credential.
const minAdminToken = 16

// checkAdminToken refuses an admin token too short to guess slowly;
// source names where it was set.
func checkAdminToken(token, source string) error {
	if n := utf8.RuneCountInString(token); n < minAdminToken {
		return fmt.Errorf("%s: the admin token is %d characters; it must be at least %d (generate one with: head -c 24 /dev/urandom | base64)",
			source, n, minAdminToken)
	}
	return nil
}

// postgresProblems checks what PostgreSQL needs: a postgres:// URL, and the
// master key and admin token set, since several nodes must share them and
// none keeps a data dir to generate them in.
func (c *config) postgresProblems() []error {
	var errs []error
	url := c.source("database-url", "HERALD_DATABASE_URL")
	if !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://") {
		errs = append(errs, fmt.Errorf("%s: must be a postgres:// URL (leave it empty for the embedded SQLite store)", url))
	}
	if c.MasterKey == "" {
		errs = append(errs, fmt.Errorf("%s is required with %s: every node must seal and open secrets with the same key (generate one with: head -c 32 /dev/urandom | base64)",
			c.source("master-key", "HERALD_MASTER_KEY"), url))
	}
	if c.AdminToken == "" {
		errs = append(errs, fmt.Errorf("%s is required with %s: every node must accept the same admin token",
			c.source("admin-token", "HERALD_ADMIN_TOKEN"), url))
	}
	return errs
}

func (c *config) level() (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return l, fmt.Errorf("%s: %q is not debug, info, warn or error", c.source("log-level", "HERALD_LOG_LEVEL"), c.LogLevel)
	}
	return l, nil
}

func (c *config) logger(w io.Writer) *slog.Logger {
	level, _ := c.level()
	return c.loggerAt(w, level)
}

// loggerAt returns a logger that writes from level up (at least the
// configured level).
func (c *config) loggerAt(w io.Writer, level slog.Level) *slog.Logger {
	if l, _ := c.level(); l > level {
		level = l
	}
	opts := &slog.HandlerOptions{Level: level}
	if c.LogFormat == "json" {
		opts.ReplaceAttr = durationsInMilliseconds
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// durationsInMilliseconds writes a duration in JSON logs as a number of
// milliseconds (fractions kept), the unit docs/operations.md gives, instead
// of slog's integer nanoseconds.
func durationsInMilliseconds(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		return slog.Float64(a.Key, float64(a.Value.Duration())/float64(time.Millisecond))
	}
	return a
}

// announce prints a line of the service's start (its listeners, a
// generated admin token) on stdout: as text, or with --log-format json as
// one JSON object like the log lines, so that a log collector reading
// stdout parses every line.
func (c *config) announce(stdout io.Writer, text, msg string, attrs ...any) {
	if c.LogFormat != "json" {
		fmt.Fprintln(stdout, text)
		return
	}
	slog.New(slog.NewJSONHandler(stdout, nil)).Info(msg, attrs...)
}

// secretFile returns the content of name in the data dir, creating it with
// mode 0600 from gen when absent; created reports that it was new.
func (c *config) secretFile(name string, gen func() string) (value string, created bool, err error) {
	path := filepath.Join(c.DataDir, name)
	b, err := os.ReadFile(path)
	if err == nil {
		return strings.TrimSpace(string(b)), false, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", false, err
	}
	value = gen()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", false, err
	}
	if _, err := f.WriteString(value + "\n"); err != nil {
		f.Close()
		return "", false, err
	}
	return value, true, f.Close()
}
