package admin

import (
	"strings"
	"testing"
)

func TestPlainFailure(t *testing.T) {
	t.Parallel()
	cases := []struct{ raw, want string }{
		{"", ""},
		{"unregistered: fcm: send failed (unregistered, status 404, UNREGISTERED): Requested entity was not found.", "uninstalled"},
		{"third_party_auth: fcm: send failed (third_party_auth, status 401, THIRD_PARTY_AUTH_ERROR): Auth error from APNS", "APNs (iOS) or web-push credentials"},
		{"third_party_auth: fcm: send failed (third_party_auth, status 401, APNS_AUTH_ERROR): Auth error from APNS", "APNs (iOS) or web-push credentials"},
		{"gave up retrying after 1h0m0s: retry: fcm: send failed (retry, status 503, UNAVAILABLE): down", "FCM was unavailable; it was retried for 1h0m0s, then given up."},
		{"FCM refused the app's credentials: auth: fcm: send failed (auth, status 400, invalid_grant): Invalid JWT Signature.", "invalid_grant"},
		{"invalid_token: fcm: send failed (invalid_token, status 403, SENDER_ID_MISMATCH)", "another Firebase project"},
		{"FCM credentials were removed", "removed before the push was sent"},
		{"something new", "something new"},
	}
	for _, c := range cases {
		got := plainFailure(c.raw)
		if !strings.Contains(got, c.want) || (c.want == "" && got != "") {
			t.Errorf("plainFailure(%q): got %q, want it to say %q", c.raw, got, c.want)
		}
		if c.raw != "" && c.raw != c.want && strings.Contains(got, "fcm: send failed") {
			t.Errorf("plainFailure(%q): got %q, want no raw error chain", c.raw, got)
		}
	}
}

func TestShortID(t *testing.T) {
	t.Parallel()
	cases := []struct{ id, want string }{
		{"push_0a1b2c3d4e5f6g7h8i9j0k1l2m", "push_…9j0k1l2m"},
		{"app_0a1b2c3d4e5f6g7h8i9j", "app_…6g7h8i9j"},
		{"push_short", "push_short"},
		{"device-7", "device-7"},
		{"a-long-device-identifier-123456", "…r-123456"},
	}
	for _, c := range cases {
		if got := shortID(c.id); got != c.want {
			t.Errorf("shortID(%q): got %q, want %q", c.id, got, c.want)
		}
	}
}
