package main

import (
	"io"
	"strings"
	"testing"
)

// TestSignInConfig: HERALD_REQUIRE_TOTP, HERALD_ADMIN_URL and the single
// sign-on settings, by variable and by flag; an http issuer is refused but
// on a loopback address, and an issuer needs a client ID.
func TestSignInConfig(t *testing.T) {
	t.Parallel()
	load := func(env map[string]string, args ...string) (config, error) {
		return loadConfig(args, func(k string) string { return env[k] }, io.Discard)
	}
	c, err := load(map[string]string{"HERALD_REQUIRE_TOTP": "true", "HERALD_ADMIN_URL": "https://admin.example.com",
		"HERALD_OIDC_ISSUER": "https://id.example.com", "HERALD_OIDC_CLIENT_ID": "herald", "HERALD_OIDC_CLIENT_SECRET": "s"})
	if err != nil || !c.Admin.RequireTOTP || c.Admin.AdminURL != "https://admin.example.com" || c.Admin.OIDC.Issuer != "https://id.example.com" || c.Admin.OIDC.ClientID != "herald" || c.Admin.OIDC.ClientSecret != "s" {
		t.Errorf("by variables: got %+v, %v", c, err)
	}
	c, err = load(nil, "--require-totp", "--oidc-issuer", "http://127.0.0.1:5556/dex", "--oidc-client-id", "herald")
	if err != nil || !c.Admin.RequireTOTP || c.Admin.OIDC.Issuer != "http://127.0.0.1:5556/dex" {
		t.Errorf("by flags, http on loopback: got %+v, %v", c, err)
	}
	for _, bad := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"HERALD_OIDC_ISSUER": "http://id.example.com", "HERALD_OIDC_CLIENT_ID": "h"}, "HERALD_OIDC_ISSUER"},
		{map[string]string{"HERALD_OIDC_ISSUER": "ftp://id.example.com", "HERALD_OIDC_CLIENT_ID": "h"}, "HERALD_OIDC_ISSUER"},
		{map[string]string{"HERALD_OIDC_ISSUER": "https://id.example.com"}, "HERALD_OIDC_CLIENT_ID"},
		{map[string]string{"HERALD_OIDC_CLIENT_ID": "h"}, "HERALD_OIDC_ISSUER"},
		{map[string]string{"HERALD_ADMIN_URL": "admin.example.com"}, "HERALD_ADMIN_URL"},
	} {
		if _, err := load(bad.env); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%v: got %v, want an error naming %s", bad.env, err, bad.want)
		}
	}
}
