package main

import (
	"io"
	"strings"
	"testing"
)

// TestFCMTransportConfig: HERALD_FCM_TRANSPORT and --fcm-transport
// default to lean and take lean or standard; anything else stops serve
// naming the setting as given.
func TestFCMTransportConfig(t *testing.T) {
	t.Parallel()
	load := func(vars map[string]string, args ...string) (config, error) {
		return loadConfig(args, func(k string) string { return vars[k] }, io.Discard)
	}
	for _, tc := range []struct {
		env  string
		args []string
		want string
	}{
		{"", nil, "lean"}, {"standard", nil, "standard"}, {"standard", []string{"--fcm-transport", "lean"}, "lean"},
	} {
		c, err := load(map[string]string{"HERALD_FCM_TRANSPORT": tc.env}, tc.args...)
		if err != nil || c.FCM.Client.Transport != tc.want {
			t.Errorf("%q %v: got %q, %v, want %q", tc.env, tc.args, c.FCM.Client.Transport, err, tc.want)
		}
	}
	if _, err := load(map[string]string{"HERALD_FCM_TRANSPORT": "fast"}); err == nil || !strings.Contains(err.Error(), "HERALD_FCM_TRANSPORT") {
		t.Errorf("HERALD_FCM_TRANSPORT=fast: got %v, want an error naming it", err)
	}
	if _, err := load(nil, "--fcm-transport", "h1"); err == nil || !strings.Contains(err.Error(), "--fcm-transport") {
		t.Errorf("--fcm-transport h1: got %v, want an error naming it", err)
	}
}
