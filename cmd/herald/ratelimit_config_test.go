package main

import (
	"io"
	"strings"
	"testing"
)

func TestRateLimitConfig(t *testing.T) {
	t.Parallel()
	load := func(env map[string]string, args ...string) (config, error) {
		return loadConfig(args, func(k string) string { return env[k] }, io.Discard)
	}
	c, err := load(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.API.Server != 5000 || c.API.SDK != 3000 || c.API.SDKClient != 50 || c.API.AuthFailure != 10 {
		t.Errorf("defaults: got %v/%v/%v/%v, want 5000/3000/50/10", c.API.Server, c.API.SDK, c.API.SDKClient, c.API.AuthFailure)
	}
	c, err = load(map[string]string{"HERALD_SDK_RATE_LIMIT": "0", "HERALD_SDK_CLIENT_RATE_LIMIT": "7.5"}, "--auth-failure-rate-limit", "3")
	if err != nil || c.API.SDK != 0 || c.API.SDKClient != 7.5 || c.API.AuthFailure != 3 {
		t.Errorf("set: got (%v/%v/%v, %v), want (0/7.5/3, nil)", c.API.SDK, c.API.SDKClient, c.API.AuthFailure, err)
	}
	for _, bad := range []string{"-1", "fast", "Inf", "NaN"} {
		if _, err := load(map[string]string{"HERALD_AUTH_FAILURE_RATE_LIMIT": bad}); err == nil || !strings.Contains(err.Error(), "HERALD_AUTH_FAILURE_RATE_LIMIT") {
			t.Errorf("HERALD_AUTH_FAILURE_RATE_LIMIT=%s: got %v, want an error naming it", bad, err)
		}
	}
	if _, err := load(nil, "--sdk-client-rate-limit", "-2"); err == nil || !strings.Contains(err.Error(), "--sdk-client-rate-limit") {
		t.Errorf("--sdk-client-rate-limit -2: got %v, want an error naming it", err)
	}
}
