package main

import (
	"io"
	"strings"
	"testing"

	"github.com/heraldpush/herald"
)

// TestRetentionDaysConfig: HERALD_RETENTION_DAYS and --retention-days
// default to 400 days and take a whole number of at least 31; anything
// else stops serve naming the setting as given.
func TestRetentionDaysConfig(t *testing.T) {
	t.Parallel()
	load := func(env map[string]string, args ...string) (config, error) {
		return loadConfig(args, func(k string) string { return env[k] }, io.Discard)
	}
	for _, tc := range []struct {
		env  string
		args []string
		want int
	}{
		{"", nil, herald.DefaultRetentionDays},
		{"31", nil, 31},
		{"3650", nil, 3650},
		{"500", []string{"--retention-days", "90"}, 90},
	} {
		c, err := load(map[string]string{"HERALD_RETENTION_DAYS": tc.env}, tc.args...)
		if err != nil {
			t.Errorf("%q %v: got %v", tc.env, tc.args, err)
			continue
		}
		if got, err := c.retentionDays(); got != tc.want || err != nil {
			t.Errorf("%q %v: got (%d, %v), want %d", tc.env, tc.args, got, err, tc.want)
		}
	}
	for _, bad := range []string{"30", "0", "-400", "400.5", "a year", "4e2"} {
		if _, err := load(map[string]string{"HERALD_RETENTION_DAYS": bad}); err == nil || !strings.Contains(err.Error(), "HERALD_RETENTION_DAYS") {
			t.Errorf("HERALD_RETENTION_DAYS=%s: got %v, want an error naming it", bad, err)
		}
		if _, err := load(nil, "--retention-days", bad); err == nil || !strings.Contains(err.Error(), "--retention-days") {
			t.Errorf("--retention-days %s: got %v, want an error naming it", bad, err)
		}
	}
	_, _, err := heraldCLI(t, func(string) string { return "" }, "serve", "--data-dir", t.TempDir(), "--retention-days", "30")
	if err == nil || !strings.Contains(err.Error(), `--retention-days: "30" is not a whole number of days of at least 31`) {
		t.Errorf("serve --retention-days 30: got %v, want it refused naming the flag", err)
	}
}
