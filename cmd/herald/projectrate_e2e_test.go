package main

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald"
)

// TestFCMProjectRateSharedByNodes: two nodes on one PostgreSQL database
// share a project's rate as they share an app's: once each has seen the
// other, each paces the project to 5 a second of its 10, so the 40 sends
// of two apps of the project take at least 3.8 s whichever nodes send them
// (each node's bucket lets 1 go at once); the test asks 2.8 s. Were each
// node to pace to the whole project rate, they would take under 2 s.
func TestFCMProjectRateSharedByNodes(t *testing.T) {
	t.Parallel()
	if testEngine() != "postgres" {
		t.Skip("several nodes need PostgreSQL: set HERALD_TEST_DATABASE_URL")
	}
	tweak := func(c *config) { c.FCMProjectRate = "600" }
	e := start(t, tweak)
	second, err := startService(context.Background(), e.config(tweak), io.Discard, e.logs)
	if err != nil {
		t.Fatalf("second node: %v", err)
	}
	t.Cleanup(func() { second.shutdown() })
	waitFor(t, "both nodes to count two", 20*time.Second, func() bool {
		return strings.Count(e.logs.String(), `msg="nodes sharing the send rates" nodes=2`) == 2
	})
	const n, burst, perNode = 20, 2, 5.0 // burst: one per node
	shared, _ := e.PushProjects(n)
	floor := time.Duration(float64(2*n-burst)/(2*perNode)*float64(time.Second)) - time.Second
	if span := shared[2*n-1].Sub(shared[0]); span < floor {
		t.Errorf("the %d sends of one project arrived within %v, want at least %v at 10 a second over both nodes", 2*n, span, floor)
	} else {
		t.Logf("%d sends of two apps of one project over %v on two nodes", 2*n, span)
	}
}

// TestFCMProjectRateConfig: HERALD_FCM_PROJECT_RATE and --fcm-project-rate
// default to FCM's quota and take a whole number from 1 to 10,000,000;
// anything else stops serve naming the setting as given.
func TestFCMProjectRateConfig(t *testing.T) {
	t.Parallel()
	testWholeNumberSetting(t, "HERALD_FCM_PROJECT_RATE", "--fcm-project-rate", (*config).fcmProjectRate,
		[]settingCase{{"", nil, herald.DefaultFCMProjectRate}, {"1", nil, 1}, {"10000000", nil, 10_000_000},
			{"500", []string{"--fcm-project-rate", "1200"}, 1200}},
		[]string{"0", "-1", "10000001", "2.5", "fast", "6e5"})
}

// settingCase is a value of a setting, in the environment and the flags,
// and the number it reads as.
type settingCase struct {
	env  string
	args []string
	want int
}

// testWholeNumberSetting holds a whole-number setting, given by variable
// env and flag, to its reading: each good case reads as wanted, and each
// bad value stops serve naming the setting as given, in either form.
func testWholeNumberSetting(t *testing.T, env, flag string, read func(*config) (int, error), good []settingCase, bad []string) {
	t.Helper()
	load := func(vars map[string]string, args ...string) (config, error) {
		return loadConfig(args, func(k string) string { return vars[k] }, io.Discard)
	}
	for _, tc := range good {
		c, err := load(map[string]string{env: tc.env}, tc.args...)
		if err != nil {
			t.Errorf("%q %v: got %v", tc.env, tc.args, err)
			continue
		}
		if got, err := read(&c); got != tc.want || err != nil {
			t.Errorf("%q %v: got (%d, %v), want %d", tc.env, tc.args, got, err, tc.want)
		}
	}
	for _, v := range bad {
		if _, err := load(map[string]string{env: v}); err == nil || !strings.Contains(err.Error(), env) {
			t.Errorf("%s=%s: got %v, want an error naming it", env, v, err)
		}
		if _, err := load(nil, flag, v); err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("%s %s: got %v, want an error naming it", flag, v, err)
		}
	}
}
