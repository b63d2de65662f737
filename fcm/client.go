package fcm

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"

	"github.com/heraldpush/herald"
)

// DefaultEndpoint is the base URL of FCM.
const DefaultEndpoint = "https://fcm.googleapis.com"

// MessagingScope is the OAuth2 scope FCM sends require.
const MessagingScope = "https://www.googleapis.com/auth/firebase.messaging"

// defaultTimeout bounds one FCM request and one token exchange.
const defaultTimeout = 10 * time.Second

// maxErrorBody bounds how much of an error answer is read.
const maxErrorBody = 64 << 10

// ClientOptions configures a Client. The zero value is usable.
type ClientOptions struct {
	// Timeout bounds each FCM request and each token exchange (default 10s).
	Timeout time.Duration
	// AllowAnyTokenURI accepts service accounts whose token_uri is not
	// Google's (tests, the emulator).
	AllowAnyTokenURI bool
	// Now is the clock used to read Retry-After dates and to tell when a
	// cached access token is refreshed (default time.Now).
	Now func() time.Time
	// TokenRefreshMargin is how long before its expiry an access token is
	// replaced (default DefaultTokenRefreshMargin), at most half its
	// lifetime.
	TokenRefreshMargin time.Duration
	// Transport names what carries the sends: TransportLean (the
	// default, also for "") or TransportStandard (net/http's). Both go
	// through the proxy HTTPS_PROXY names unless NO_PROXY exempts FCM's
	// host, as net/http does.
	Transport string
}

// Credentials identify the app whose service account signs a send.
type Credentials struct {
	// Key identifies the app; its access token is cached under it until the
	// JSON changes or FCM refuses the token.
	Key string
	// JSON is the app's service-account file.
	JSON []byte
}

// Client sends messages to FCM HTTP v1. It is safe for concurrent use and
// keeps one cached access token per Credentials.Key.
type Client struct {
	endpoint string
	timeout  time.Duration
	allowAny bool
	now      func() time.Time
	margin   time.Duration // TokenRefreshMargin
	// sends carries the messages:send requests over HTTP/2 (the
	// transport ClientOptions.Transport names); nil when the endpoint is
	// not an http:// or https:// URL or the transport is unknown
	// (sendsErr says why). The token exchange stays on net/http
	// (tokenHTTP).
	sends     transport
	sendsErr  error
	tokenHTTP *http.Client

	mu       sync.Mutex
	accounts map[string]*account
}

// account is a loaded service account with its cached token source.
type account struct {
	sum       [sha256.Size]byte // of the service-account file it was loaded from
	projectID string
	sendPath  string // the project's messages:send, as the request's :path
	tokens    *tokenCache
}

// NewClient returns a Client for the FCM base URL endpoint (DefaultEndpoint
// when empty). An http:// endpoint is spoken to in cleartext HTTP/2 with prior
// knowledge, an https:// one in HTTP/2 over TLS.
func NewClient(endpoint string, opts ClientOptions) *Client {
	if endpoint == "" {
		endpoint = DefaultEndpoint
	}
	if opts.Timeout <= 0 {
		opts.Timeout = defaultTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.TokenRefreshMargin <= 0 {
		opts.TokenRefreshMargin = DefaultTokenRefreshMargin
	}
	endpoint = strings.TrimRight(endpoint, "/")
	c := &Client{
		endpoint:  endpoint,
		timeout:   opts.Timeout,
		allowAny:  opts.AllowAnyTokenURI,
		now:       opts.Now,
		margin:    opts.TokenRefreshMargin,
		tokenHTTP: &http.Client{Timeout: opts.Timeout, Transport: http.DefaultTransport.(*http.Transport).Clone()},
		accounts:  make(map[string]*account),
	}
	u, err := url.Parse(endpoint)
	if err == nil {
		c.sends, err = newTransport(opts.Transport, transportConfig{scheme: u.Scheme, host: u.Host, proxy: environmentProxy()})
	}
	if err != nil {
		c.sendsErr = fmt.Errorf("fcm: endpoint %q: %w", endpoint, err)
	}
	return c
}

// Close releases idle connections.
func (c *Client) Close() {
	if c.sends != nil {
		c.sends.closeIdle()
	}
	c.tokenHTTP.CloseIdleConnections()
}

// Send sends msg with the app's credentials. It returns nil when FCM accepted
// the message and a *herald.SendError otherwise: herald.SendAuth when the credentials are
// refused, herald.SendRetry for network errors, timeouts and outages (of FCM or of
// the token endpoint), and FCM's answer classified otherwise. An access token
// FCM refuses (revoked, or stale after a restart of FCM's front end) is
// dropped and the send tried once more with a fresh one; only a refusal of
// the fresh token is herald.SendAuth. Unprocessed tells, of a
// herald.SendRetry, whether the message surely never reached FCM.
func (c *Client) Send(ctx context.Context, cred Credentials, msg Message) error {
	return c.send(ctx, cred, sendRequest{Message: msg})
}

// send posts one messages:send request; see Send.
func (c *Client) send(ctx context.Context, cred Credentials, req sendRequest) error {
	body, err := json.Marshal(req)
	if err != nil {
		return &herald.SendError{Class: herald.SendRejected, Message: err.Error(), Err: err}
	}
	return c.sendBody(ctx, newCredKey(cred), body)
}

// sendBody posts a messages:send body with the app's credentials, once
// more with a fresh access token when FCM refuses the cached one.
func (c *Client) sendBody(ctx context.Context, ck credKey, body []byte) error {
	acct, auth, err := c.authorization(ctx, ck)
	if err != nil {
		return err
	}
	err = c.postTimed(ctx, acct, auth, body)
	if unauthenticated(err) == nil {
		return err
	}
	c.forget(ck.key, acct)
	if acct, auth, err = c.authorization(ctx, ck); err != nil {
		return err
	}
	err = c.postTimed(ctx, acct, auth, body)
	if se := unauthenticated(err); se != nil {
		c.forget(ck.key, acct)
		se.Message = "a fresh access token was refused: " + se.Message
	}
	return err
}

// Authorize makes sure an access token for cred is at hand, fetching one
// when none is cached, so a caller can learn before a batch of sends that
// the credentials are refused (herald.SendAuth) or the token endpoint is
// unreachable (herald.SendRetry), instead of learning it once per send.
func (c *Client) Authorize(ctx context.Context, cred Credentials) error {
	_, _, err := c.authorization(ctx, newCredKey(cred))
	return err
}

// authorization returns the app's account and a valid access token, as
// the authorization header sends it ("Bearer " and the token).
func (c *Client) authorization(ctx context.Context, ck credKey) (*account, string, error) {
	acct, err := c.account(ctx, ck)
	if err != nil {
		return nil, "", &herald.SendError{Class: herald.SendAuth, Message: err.Error(), Err: err}
	}
	auth, err := acct.tokens.Authorization()
	if err != nil {
		return nil, "", tokenError(err)
	}
	return acct, auth, nil
}

// postTimed is post bounded by the client's timeout. The bound is a
// deadline the connection watches, not a context of each request's own:
// deriving one from the caller's, shared by a window of sends, cost each
// send about 3 µs of registering with it and unregistering.
func (c *Client) postTimed(ctx context.Context, acct *account, authorization string, body []byte) error {
	return c.post(ctx, time.Now().Add(c.timeout), acct.sendPath, authorization, body)
}

// forget drops a cached account, unless another send replaced it already.
func (c *Client) forget(key string, acct *account) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.accounts[key] == acct {
		delete(c.accounts, key)
	}
}

// credKey is Credentials with the file's hash taken: the account cache's
// key and the check that the cached account was loaded from this file.
type credKey struct {
	json []byte
	key  string
	sum  [sha256.Size]byte
}

func newCredKey(cred Credentials) credKey {
	ck := credKey{json: cred.JSON, key: cred.Key, sum: sha256.Sum256(cred.JSON)}
	if ck.key == "" {
		// Never let apps that forgot their Key share one cache entry.
		ck.key = "sha256:" + hex.EncodeToString(ck.sum[:])
	}
	return ck
}

// sendRequest is the body of messages:send.
type sendRequest struct {
	// ValidateOnly has FCM check the message without delivering it.
	ValidateOnly bool    `json:"validate_only,omitempty"`
	Message      Message `json:"message"`
}

// post sends one messages:send request, ended at the deadline, and
// classifies the answer.
func (c *Client) post(ctx context.Context, deadline time.Time, path, authorization string, body []byte) error {
	if c.sends == nil {
		return &herald.SendError{Class: herald.SendRetry, Message: c.sendsErr.Error(), Err: c.sendsErr}
	}
	resp, err := c.sends.post(ctx, deadline, path, authorization, body)
	switch {
	case resp.status >= 200 && resp.status < 300:
		return nil // a body cut off after a success changes nothing
	case err != nil:
		return &herald.SendError{Class: herald.SendRetry, Status: resp.status, Message: err.Error(), Err: err}
	}
	return classify(resp.status, resp.retryAfter, resp.body, c.now())
}

// account returns the cached account for cred.Key, loading it on first use
// and again when the service-account file changed. A load that fails is not
// cached, so fixed credentials work at once.
func (c *Client) account(ctx context.Context, ck credKey) (*account, error) {
	key, sum := ck.key, ck.sum
	c.mu.Lock()
	acct, ok := c.accounts[key]
	c.mu.Unlock()
	if ok && acct.sum == sum {
		return acct, nil
	}
	acct, err := c.loadAccount(ctx, ck.json)
	if err != nil {
		return nil, err
	}
	acct.sum = sum
	c.mu.Lock()
	defer c.mu.Unlock()
	if cached, ok := c.accounts[key]; ok && cached.sum == sum {
		return cached, nil // another send loaded it meanwhile; share its token
	}
	c.accounts[key] = acct
	return acct, nil
}

// loadAccount validates a service-account file and builds its token source.
func (c *Client) loadAccount(ctx context.Context, data []byte) (*account, error) {
	sa, err := ParseServiceAccount(data, c.allowAny)
	if err != nil {
		return nil, err
	}
	// The token source outlives this send and fetches with the context it
	// was built with: detach it from this send's cancellation and bound each
	// exchange with the token client's timeout instead.
	tokenCtx := context.WithValue(context.WithoutCancel(ctx), oauth2.HTTPClient, c.tokenHTTP)
	creds, err := google.CredentialsFromJSONWithType(tokenCtx, data, google.ServiceAccount, MessagingScope)
	if err != nil {
		return nil, err
	}
	// The token is cached by tokenCache, on the client's clock, and
	// fetched again after a failure.
	sendURL, err := url.Parse(c.endpoint + "/v1/projects/" + url.PathEscape(sa.ProjectID) + "/messages:send")
	if err != nil {
		return nil, err
	}
	return &account{projectID: sa.ProjectID, tokens: newTokenCache(creds.TokenSource, c.now, c.margin), sendPath: sendURL.RequestURI()}, nil
}

// tokenError classifies a failed token exchange: a refusal by the token
// endpoint (a 4xx answer such as invalid_grant) is herald.SendAuth, anything else
// (network error, timeout, 5xx, 429) is herald.SendRetry.
func tokenError(err error) *herald.SendError {
	e := &herald.SendError{Class: herald.SendRetry, Message: "access token: " + err.Error(), Err: err}
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) {
		return e
	}
	if re.Response != nil {
		e.Status = re.Response.StatusCode
	}
	if e.Status >= 400 && e.Status < 500 && e.Status != http.StatusTooManyRequests && e.Status != http.StatusRequestTimeout {
		e.Class = herald.SendAuth
	}
	// The JWT flow leaves the OAuth2 error in the body unparsed.
	var body struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	_ = json.Unmarshal(re.Body, &body)
	e.Code = cmp.Or(re.ErrorCode, body.Error)
	if desc := cmp.Or(re.ErrorDescription, body.Description); desc != "" {
		e.Message = "access token: " + desc
	}
	return e
}
