package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHealthcheck: a success for a ready service, an error naming the
// status for a 503, and the listener's address asked on loopback.
func TestHealthcheck(t *testing.T) {
	t.Parallel()
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(status)
		w.Write([]byte(`{"status":"ready"}`))
	}))
	defer srv.Close()
	port := srv.Listener.Addr().String()[strings.LastIndex(srv.Listener.Addr().String(), ":"):]
	getenv := func(k string) string {
		if k == "HERALD_ADDR" {
			return "0.0.0.0" + port
		}
		return ""
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"healthcheck"}, getenv, &out, &out); err != nil {
		t.Fatalf("ready service: got %v, want success", err)
	}
	status = http.StatusServiceUnavailable
	err := run(context.Background(), []string{"healthcheck", "--url", srv.URL + "/readyz"}, getenv, &out, &out)
	if err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("unready service: got %v, want an error naming 503", err)
	}
	for addr, want := range map[string]string{"": "127.0.0.1:8080", ":9000": "127.0.0.1:9000", "[::]:9000": "127.0.0.1:9000", "10.0.0.5:80": "10.0.0.5:80"} {
		if got := loopbackAddr(addr); got != want {
			t.Errorf("loopbackAddr(%q): got %q, want %q", addr, got, want)
		}
	}
}

// TestHealthcheckAsksReadinessOnly: --url given the admin listener's base
// (whose / redirects a browser to the login page) asks its /readyz, and
// an answer that is not a readiness answer — a redirect, or a 200 page
// that is not /readyz's — fails with a message saying so instead of
// printing the page and exiting 0.
func TestHealthcheckAsksReadinessOnly(t *testing.T) {
	noEnv := func(string) string { return "" }
	e := start(t)
	var out bytes.Buffer
	if err := run(context.Background(), []string{"healthcheck", "--url", e.svc.AdminURL}, noEnv, &out, &out); err != nil {
		t.Fatalf("admin base %s: got %v, want success", e.svc.AdminURL, err)
	}
	if !strings.Contains(out.String(), `"status":"ready"`) {
		t.Errorf("admin base: printed %q, want the /readyz answer", out.String())
	}

	for path, want := range map[string]string{
		"/login":  "not a readiness answer", // the login page: a 200 of HTML
		"/apps/x": "a redirect",             // a dashboard page: redirects to the login page
	} {
		out.Reset()
		err := run(context.Background(), []string{"healthcheck", "--url", e.svc.AdminURL + path}, noEnv, &out, &out)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--url %s: got %v, want an error saying %q", path, err, want)
		}
		if strings.Contains(out.String(), "<") {
			t.Errorf("--url %s: printed %q, want no HTML", path, out.String())
		}
	}
}
