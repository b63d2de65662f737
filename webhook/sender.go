package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"syscall"
	"time"

	"github.com/heraldpush/herald"
)

// DefaultTimeout bounds one delivery attempt when SenderOptions.Timeout is
// zero.
const DefaultTimeout = 10 * time.Second

// maxDrain is how much of a receiver's answer is read so the connection can
// be reused; the content itself is ignored.
const maxDrain = 64 << 10

// SenderOptions configures a Sender.
type SenderOptions struct {
	// AllowPrivate permits http URLs and loopback or private addresses
	// (HERALD_WEBHOOK_ALLOW_PRIVATE; tests and local use).
	AllowPrivate bool
	// Timeout bounds one attempt, connection to answer; DefaultTimeout when 0.
	Timeout time.Duration
	// Now is the clock stamping webhook-timestamp; time.Now when nil.
	Now func() time.Time
}

// Sender POSTs signed webhook messages. It follows no redirects and, unless
// private addresses are allowed, refuses to connect to a non-public address
// after DNS resolution, so a host name that resolves (or is rebound) to an
// internal address cannot be used to reach the operator's network. A Sender
// is safe for concurrent use.
type Sender struct {
	allowPrivate bool
	now          func() time.Time
	client       *http.Client
}

// DeliveryError is a failed delivery attempt: the receiver answered a
// non-2xx Status, or the request failed (Status 0) with Err, e.g. a timeout,
// a network error or a refused private address. Every DeliveryError is
// worth retrying (herald.WebhookRetry gives the schedule).
type DeliveryError struct {
	Status int
	Err    error
}

// Error describes the failed attempt.
func (e *DeliveryError) Error() string {
	if e.Err != nil {
		return "webhook: delivery failed: " + e.Err.Error()
	}
	return "webhook: receiver answered HTTP " + strconv.Itoa(e.Status)
}

// Unwrap returns the underlying transport error, if any.
func (e *DeliveryError) Unwrap() error { return e.Err }

// NewSender returns a Sender configured by opts.
func NewSender(opts SenderOptions) *Sender {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Sender{
		allowPrivate: opts.AllowPrivate,
		now:          opts.Now,
		client:       newHTTPClient(opts.AllowPrivate, opts.Timeout),
	}
}

// newHTTPClient builds the guarded client: no proxy (a proxy would make the
// dial guard check the proxy instead of the receiver), no redirects.
func newHTTPClient(allowPrivate bool, timeout time.Duration) *http.Client {
	dialer := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		dialer.Control = refusePrivate
	}
	transport := &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
	}
	return &http.Client{
		Transport: transport,
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}

// refusePrivate is a net.Dialer Control function: it runs after DNS
// resolution, on the address actually dialled.
func refusePrivate(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: unparsable address %q", ErrPrivateAddress, address)
	}
	if !IsPublicAddr(ap.Addr()) {
		return fmt.Errorf("%w: refusing %s", ErrPrivateAddress, ap.Addr())
	}
	return nil
}

// Send delivers body (a JSON event) to url as message msgID, signed with
// secret and stamped with the Sender's clock. Reuse the same msgID on every
// retry of one message so receivers can deduplicate. A url that ValidateURL
// refuses or an invalid secret gives an error wrapping herald.ErrNoRetry
// (retrying cannot help); a non-2xx answer, a timeout or a network error
// gives a *DeliveryError.
func (s *Sender) Send(ctx context.Context, url, secret, msgID string, body []byte) error {
	if err := ValidateURL(url, s.allowPrivate); err != nil {
		return fmt.Errorf("webhook: invalid url: %w (%w)", err, herald.ErrNoRetry)
	}
	req, err := s.newRequest(ctx, url, secret, msgID, body)
	if err != nil {
		return fmt.Errorf("%w (%w)", err, herald.ErrNoRetry)
	}
	return s.do(req)
}

// Report sends a push's undeliverable report as one signed message.
func (s *Sender) Report(ctx context.Context, url, secret string, r herald.UndeliverableReport) error {
	body, err := Body(r)
	if err != nil {
		return err
	}
	return s.Send(ctx, url, secret, r.ID, body)
}

// ConsentChanged sends the consent.changed event of a record as one signed
// message, under the record's own webhook-id (herald.ConsentEventID).
func (s *Sender) ConsentChanged(ctx context.Context, url, secret string, r herald.ConsentRecord) error {
	body, err := ConsentBody(r)
	if err != nil {
		return fmt.Errorf("%w (%w)", err, herald.ErrNoRetry)
	}
	return s.Send(ctx, url, secret, herald.ConsentEventID(r.AppID, r.ID), body)
}

// ApprovalRequested sends a push's push.approval_requested event as one
// signed message, under the request's own webhook-id.
func (s *Sender) ApprovalRequested(ctx context.Context, url, secret string, r herald.ApprovalRequest) error {
	body, err := ApprovalBody(r)
	if err != nil {
		return fmt.Errorf("%w (%w)", err, herald.ErrNoRetry)
	}
	return s.Send(ctx, url, secret, r.ID, body)
}

// newRequest builds the signed POST.
func (s *Sender) newRequest(ctx context.Context, url, secret, msgID string, body []byte) (*http.Request, error) {
	ts := s.now()
	sig, err := Sign(secret, msgID, ts, body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("webhook: build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Herald-Webhooks/1")
	req.Header.Set(HeaderID, msgID)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set(HeaderSignature, sig)
	return req, nil
}

// do sends req and turns anything but a 2xx answer into a *DeliveryError.
func (s *Sender) do(req *http.Request) error {
	resp, err := s.client.Do(req)
	if err != nil {
		// Not the *url.Error itself: it names the URL, whose query may hold
		// the receiver's own secret, and this error is logged and stored.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return &DeliveryError{Err: err}
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &DeliveryError{Status: resp.StatusCode}
	}
	return nil
}
