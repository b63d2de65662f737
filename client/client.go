// Package client is a Go client of Herald's public HTTP API: the Server API
// (x-api-key + x-secret-key, for app operators' back ends) and the SDK API
// (x-api-key only, what the mobile SDK calls), and through Admin the admin
// API (the `herald app` commands). Benchmarks, end-to-end tests and the
// CLI use it; it depends on the standard library only.
//
// Every method takes a context first. A non-2xx answer is returned as
// *Error. POST requests can carry an Idempotency-Key: attach one to the
// context with WithIdempotencyKey.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// Client calls one Herald app's API. A Client is safe for concurrent use.
type Client struct {
	baseURL   string
	apiKey    string
	secretKey string
	hc        *http.Client
}

// New returns a Client for the server at baseURL (e.g.
// "http://127.0.0.1:8080") using the app's apiKey and secretKey; the secret
// is sent only on Server API calls and may be empty for SDK-only use. A nil
// hc gets a client with a 30 s timeout and up to 256 idle connections per
// host, enough for benchmarks that call concurrently.
func New(baseURL, apiKey, secretKey string, hc *http.Client) *Client {
	if hc == nil {
		hc = defaultHTTPClient()
	}
	return &Client{
		baseURL:   strings.TrimRight(baseURL, "/"),
		apiKey:    apiKey,
		secretKey: secretKey,
		hc:        hc,
	}
}

// defaultHTTPClient is a fresh client: http.DefaultTransport keeps only two
// idle connections per host, which makes a concurrent benchmark re-dial.
func defaultHTTPClient() *http.Client {
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           dialer.DialContext,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          256,
			MaxIdleConnsPerHost:   256,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ExpectContinueTimeout: time.Second,
		},
	}
}

// idempotencyKeyCtx is the context key of WithIdempotencyKey.
type idempotencyKeyCtx struct{}

// WithIdempotencyKey returns a context whose requests carry the header
// Idempotency-Key: key. Herald replays the first answer to a repeated POST
// with the same key and body (within 24 h) and answers 409 ERR-AB-IDM-01
// when the body differs.
func WithIdempotencyKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, idempotencyKeyCtx{}, key)
}

// auth selects the credentials a request carries.
type auth int

const (
	serverAuth auth = iota // x-api-key + x-secret-key
	sdkAuth                // x-api-key only
)

// do sends in as the JSON body of method path, decodes a 2xx answer into out
// (unless out is nil) and returns the answer's headers.
func (c *Client) do(ctx context.Context, method, path string, a auth, in, out any) (http.Header, error) {
	req, err := c.newRequest(ctx, method, path, a, in)
	if err != nil {
		return nil, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("herald: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.Header, decodeError(resp)
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxErrorBody))
		return resp.Header, nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return resp.Header, fmt.Errorf("herald: %s %s: decode answer: %w", method, path, err)
	}
	return resp.Header, nil
}

// newRequest builds the request with its JSON body and headers.
func (c *Client) newRequest(ctx context.Context, method, path string, a auth, in any) (*http.Request, error) {
	body, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("herald: %s %s: encode request: %w", method, path, err)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.baseURL+path, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("herald: %s %s: %w", method, path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("x-api-key", c.apiKey)
	if a == serverAuth {
		req.Header.Set("x-secret-key", c.secretKey)
	}
	if key, ok := ctx.Value(idempotencyKeyCtx{}).(string); ok && key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	return req, nil
}
