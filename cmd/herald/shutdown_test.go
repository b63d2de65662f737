package main

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/fcm/emulator"
	"github.com/heraldpush/herald/fcm/fcmtest"
)

// TestShutdownLogs runs `herald serve` (run, as main does) and cancels its
// context with a cause, as signal.NotifyContext does on SIGTERM: the log
// has one line when shutting down begins, naming the cause, then one when
// the service has stopped, and run returns nil.
func TestShutdownLogs(t *testing.T) {
	t.Parallel()
	_, emuURL := fcmtest.StartEmulator(t, emulator.Options{})
	env := map[string]string{
		"HERALD_DATA_DIR": t.TempDir(), "HERALD_ADDR": "127.0.0.1:0", "HERALD_ADMIN_ADDR": "127.0.0.1:0",
		"HERALD_ADMIN_TOKEN": "ha_shutdownTestAdminToken0123456789abcdefg", "HERALD_FCM_ENDPOINT": emuURL,
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	stdout, logs := newSyncBuffer(), newSyncBuffer()
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve"}, func(k string) string { return env[k] }, stdout, logs) }()

	var public string
	waitFor(t, "herald to listen", 30*time.Second, func() bool {
		m := listeningLine.FindStringSubmatch(stdout.String())
		if m != nil {
			public = m[1]
		}
		return m != nil
	})
	resp, err := http.Get(public + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if strings.Contains(logs.String(), "shutting down") {
		t.Fatalf("log: got a shutdown line while serving")
	}

	cancel(errors.New("terminated signal received"))
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: got %v, want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("run did not return within 30s of the cancellation")
	}
	got := logs.String()
	begin := regexp.MustCompile(`level=INFO msg="shutting down" reason="terminated signal received"`).FindStringIndex(got)
	end := regexp.MustCompile(`level=INFO msg=stopped took=\S+`).FindStringIndex(got)
	if begin == nil || end == nil || begin[0] > end[0] {
		t.Fatalf("log: got\n%s\nwant a \"shutting down\" line with the cause, then a \"stopped\" line", got)
	}
	if n := strings.Count(got, "shutting down"); n != 1 {
		t.Errorf("log: got %d shutting-down lines, want 1", n)
	}
}

// TestShutdownLogsOnce: the harness's shutdown (no cause) logs both lines,
// and a second shutdown logs nothing more.
func TestShutdownLogsOnce(t *testing.T) {
	t.Parallel()
	e := start(t)
	e.stop()
	if err := e.svc.shutdown(); err != nil {
		t.Errorf("second shutdown: got %v, want nil", err)
	}
	got := e.logs.String()
	if strings.Count(got, `msg="shutting down"`) != 1 || strings.Count(got, "msg=stopped") != 1 {
		t.Errorf("log: got\n%s\nwant one shutting-down and one stopped line", got)
	}
}
