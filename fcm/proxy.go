package fcm

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"
)

// dialTCP connects to the pool's origin, through the proxy its proxy
// function names for it (an HTTP CONNECT tunnel, as net/http opens one
// for an https URL), or directly. Only https origins are proxied: a
// cleartext HTTP/2 origin (the emulator, tests) cannot be reached
// through a CONNECT proxy by net/http either.
func (p *h2Pool) dialTCP(ctx context.Context) (net.Conn, error) {
	var proxyURL *url.URL
	if p.proxy != nil && p.scheme == "https" {
		var err error
		if proxyURL, err = p.proxy(&url.URL{Scheme: p.scheme, Host: p.authority}); err != nil {
			return nil, fmt.Errorf("proxy: %w", err)
		}
	}
	if proxyURL == nil {
		return p.dialer.DialContext(ctx, "tcp", p.addr)
	}
	return p.dialProxy(ctx, proxyURL)
}

// dialProxy opens a CONNECT tunnel to the origin through the proxy at u
// (http:// or https://, with its user info as Basic credentials).
func (p *h2Pool) dialProxy(ctx context.Context, u *url.URL) (net.Conn, error) {
	addr := u.Host
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		addr = net.JoinHostPort(u.Hostname(), port)
	}
	nc, err := p.dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("proxy %s: %w", addr, err)
	}
	switch u.Scheme {
	case "http":
	case "https":
		tc := tls.Client(nc, &tls.Config{ServerName: u.Hostname(), MinVersion: tls.VersionTLS12})
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = nc.Close()
			return nil, fmt.Errorf("proxy %s: %w", addr, err)
		}
		nc = tc
	default:
		_ = nc.Close()
		return nil, fmt.Errorf("proxy scheme %q is neither http nor https", u.Scheme)
	}
	if err := connect(ctx, nc, p.addr, u.User); err != nil {
		_ = nc.Close()
		return nil, fmt.Errorf("proxy %s: %w", addr, err)
	}
	return nc, nil
}

// connect asks the proxy on nc for a tunnel to addr and reads its answer.
// The proxy speaks only after the client's preface, so nothing of the
// tunnel's traffic is read past the answer.
func connect(ctx context.Context, nc net.Conn, addr string, user *url.Userinfo) error {
	if dl, ok := ctx.Deadline(); ok {
		_ = nc.SetDeadline(dl)
		defer func() { _ = nc.SetDeadline(time.Time{}) }()
	}
	req := "CONNECT " + addr + " HTTP/1.1\r\nHost: " + addr + "\r\n"
	if user != nil {
		pass, _ := user.Password()
		req += "Proxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(user.Username()+":"+pass)) + "\r\n"
	}
	if _, err := nc.Write([]byte(req + "\r\n")); err != nil {
		return err
	}
	// One byte at a time, so the reader keeps nothing of the tunnel.
	resp, err := http.ReadResponse(bufio.NewReaderSize(byteReader{nc}, 16), &http.Request{Method: http.MethodConnect})
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("CONNECT %s: %s", addr, resp.Status)
	}
	return nil
}

// byteReader reads one byte at a time, so a bufio.Reader on it holds
// nothing past what it was asked for.
type byteReader struct{ r net.Conn }

func (b byteReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return b.r.Read(p[:1])
}
