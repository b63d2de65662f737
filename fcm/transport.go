package fcm

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"golang.org/x/net/http/httpproxy"
)

// The transports a Client sends through (ClientOptions.Transport).
const (
	// TransportLean is Herald's own HTTP/2 client (h2Pool): the default.
	TransportLean = "lean"
	// TransportStandard is net/http's transport speaking HTTP/2 only.
	TransportStandard = "standard"
)

// transport carries messages:send requests to FCM's origin. Two
// implementations sit behind it, the lean client (h2Pool) and net/http's
// (stdTransport), and one conformance suite (transport_test.go) runs
// both.
type transport interface {
	// post sends one POST to path with the authorization and JSON body and
	// returns the answer, ended by ctx or at the deadline (zero: none). An
	// error wrapping errUnprocessed says the request did not reach the
	// server (it is safe to send again); any other error says it may
	// have. When the status arrived but the body was cut off, the
	// response comes with the error.
	post(ctx context.Context, deadline time.Time, path, authorization string, body []byte) (response, error)
	// closeIdle closes the connections that carry no request.
	closeIdle()
}

// response is the part of an answer a send reads.
type response struct {
	status     int
	retryAfter string
	body       []byte // at most maxErrorBody bytes of it
}

// errUnprocessed marks a request the server did not process (refused its
// stream, announced GOAWAY below it, or it was never written): it is
// safe to send again.
var errUnprocessed = errors.New("fcm: request not processed by the server")

// Unprocessed reports whether err (from Send or Deliver) says the request
// never reached FCM, so that sending it again cannot deliver it twice.
// Any other error of a send may come after FCM accepted the message.
func Unprocessed(err error) bool { return errors.Is(err, errUnprocessed) }

// proxyFunc says which proxy, if any, a request to a URL goes through;
// nil: none.
type proxyFunc func(*url.URL) (*url.URL, error)

// environmentProxy reads HTTPS_PROXY, HTTP_PROXY and NO_PROXY (and their
// lower-case forms) now, with http.ProxyFromEnvironment's semantics.
// (ProxyFromEnvironment itself reads them once per process.)
func environmentProxy() proxyFunc {
	return httpproxy.FromEnvironment().ProxyFunc()
}

// transportConfig is what both transports are built from.
type transportConfig struct {
	scheme, host string      // of the FCM endpoint
	tlsConfig    *tls.Config // the TLS settings to start from (tests: their roots); nil: the defaults
	proxy        proxyFunc
}

// newTransport returns the transport named kind ("" is TransportLean).
func newTransport(kind string, cfg transportConfig) (transport, error) {
	// Each case returns nil, not a nil pointer, on failure: the Client
	// tells a missing transport by a nil interface.
	switch kind {
	case "", TransportLean:
		p, err := newH2Pool(cfg)
		if err != nil {
			return nil, err
		}
		return p, nil
	case TransportStandard:
		t, err := newStdTransport(cfg)
		if err != nil {
			return nil, err
		}
		return t, nil
	}
	return nil, fmt.Errorf("fcm: transport %q is neither %q nor %q", kind, TransportLean, TransportStandard)
}

// stdTransport is net/http's transport restricted to HTTP/2: over TLS
// (ALPN h2) for https, with prior knowledge for http. It retries what it
// knows unprocessed itself; an error it returns cannot say whether the
// request reached the server, except a failed dial.
type stdTransport struct {
	base string // scheme://host
	rt   *http.Transport
}

func newStdTransport(cfg transportConfig) (*stdTransport, error) {
	if cfg.scheme != "http" && cfg.scheme != "https" {
		return nil, fmt.Errorf("fcm: endpoint scheme %q is neither http nor https", cfg.scheme)
	}
	if cfg.host == "" {
		return nil, errors.New("fcm: endpoint has no host")
	}
	rt := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: h2DialTimeout, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout: h2DialTimeout,
		IdleConnTimeout:     h2IdleTimeout,
		Protocols:           new(http.Protocols),
		HTTP2:               &http.HTTP2Config{SendPingTimeout: h2PingAfter, PingTimeout: h2PingTimeout},
	}
	if cfg.scheme == "https" {
		rt.Protocols.SetHTTP2(true)
	} else {
		rt.Protocols.SetUnencryptedHTTP2(true)
	}
	if cfg.tlsConfig != nil {
		rt.TLSClientConfig = cfg.tlsConfig.Clone()
	}
	if cfg.proxy != nil && cfg.scheme == "https" { // as the lean client: see dialTCP
		proxy := cfg.proxy
		rt.Proxy = func(r *http.Request) (*url.URL, error) { return proxy(r.URL) }
	}
	return &stdTransport{base: cfg.scheme + "://" + cfg.host, rt: rt}, nil
}

// post sends the request with net/http; see transport.
func (t *stdTransport) post(ctx context.Context, deadline time.Time, path, authorization string, body []byte) (response, error) {
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.base+path, bytes.NewReader(body))
	if err != nil {
		return response{}, err
	}
	req.Header = http.Header{
		"Content-Type":  {"application/json"},
		"Authorization": {authorization},
	}
	resp, err := t.rt.RoundTrip(req)
	if err != nil {
		if dialFailed(err) {
			err = fmt.Errorf("%w: %w", errUnprocessed, err)
		}
		return response{}, err
	}
	defer resp.Body.Close()
	r := response{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After")}
	if r.status >= 200 && r.status < 300 {
		_, err = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
	} else {
		r.body, err = io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	}
	return r, err
}

// dialFailed reports whether err is net/http's failure to connect: the
// request was never written.
func dialFailed(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && (op.Op == "dial" || op.Op == "proxyconnect")
}

// closeIdle closes net/http's idle connections.
func (t *stdTransport) closeIdle() { t.rt.CloseIdleConnections() }

// statusOf parses an HTTP/2 :status: exactly three digits (RFC 9110
// 15), so "+200" or "20" is no status.
func statusOf(s string) (int, bool) {
	if len(s) != 3 {
		return 0, false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 100
}
