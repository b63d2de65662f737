package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// runHealthcheck is `herald healthcheck`: one GET of the public listener's
// /readyz, a success only for a 200 that is a readiness answer. It lets a
// container image without a shell or curl declare a health check on the
// binary it already holds.
func runHealthcheck(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	cmd := newCommand("healthcheck", "herald healthcheck [--url URL]",
		"Asks the service's /readyz and exits 0 when it answers 200 with {\"status\":\"ready\"}, else 1 with\n"+
			"the reason: the health check of a container (the database reachable, migrations current, writes\n"+
			"possible). A redirect is not followed: it is a failure.")
	target := cmd.fs.String("url", "", "the `URL` to ask: a listener's base (http://host:port, /readyz added) or its /readyz (default http://$HERALD_ADDR/readyz, an unspecified host asked on loopback)")
	if _, err := cmd.parse(args, stdout); err != nil {
		return err
	}
	u, err := readyzURL(*target)
	if err != nil {
		return err
	}
	if *target == "" {
		u = "http://" + loopbackAddr(getenv("HERALD_ADDR")) + "/readyz"
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	// A redirect means the URL is not a readiness probe (the admin
	// listener's / sends a browser to its login page): following it would
	// count a login page as ready.
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return readiness(u, resp, body, stdout)
}

// readyzURL is the URL healthcheck asks for --url raw: a listener's base
// (no path, or /) gets /readyz, any other path is asked as given.
func readyzURL(raw string) (string, error) {
	if raw == "" {
		return "", nil
	}
	p, err := url.Parse(raw)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return "", fmt.Errorf("healthcheck: --url %q is not an http(s) URL: give a listener's base (http://127.0.0.1:8080) or its /readyz", raw)
	}
	if p.Path == "" || p.Path == "/" {
		p.Path = "/readyz"
	}
	return p.String(), nil
}

// readiness judges the answer of u: a success only for a 200 whose body is
// /readyz's {"status":"ready"}; anything else is an error that says what
// came back instead.
func readiness(u string, resp *http.Response, body []byte, stdout io.Writer) error {
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		return fmt.Errorf("healthcheck: %s answered %d, a redirect to %q, not a readiness answer: give a listener's base URL or its /readyz", u, resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %d: %s", u, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	var h struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal(body, &h); err != nil || h.Status != "ready" {
		return errors.New("healthcheck: " + u + " answered 200 but not a readiness answer ({\"status\":\"ready\"}): give a listener's base URL or its /readyz")
	}
	_, err := fmt.Fprintf(stdout, "%s", body)
	return err
}

// loopbackAddr is the address to reach a listener bound to addr from the
// same host: the default when addr is empty, and loopback when it names
// every interface (0.0.0.0, [::] or no host).
func loopbackAddr(addr string) string {
	if addr == "" {
		return "127.0.0.1:8080"
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}
