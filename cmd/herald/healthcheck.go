package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// runHealthcheck is `herald healthcheck`: one GET of the public listener's
// /readyz, a success only for 200. It lets a container image without a
// shell or curl declare a health check on the binary it already holds.
func runHealthcheck(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	cmd := newCommand("healthcheck", "herald healthcheck [--url URL]",
		"Asks the service's /readyz and exits 0 when it answers 200, else 1 with the reason: the health\n"+
			"check of a container (the database reachable, migrations current, writes possible).")
	target := cmd.fs.String("url", "", "the `URL` to ask (default http://$HERALD_ADDR/readyz, an unspecified host asked on loopback)")
	if _, err := cmd.parse(args, stdout); err != nil {
		return err
	}
	u := *target
	if u == "" {
		u = "http://" + loopbackAddr(getenv("HERALD_ADDR")) + "/readyz"
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %d: %s", u, resp.StatusCode, body)
	}
	_, err = fmt.Fprintf(stdout, "%s", body)
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
