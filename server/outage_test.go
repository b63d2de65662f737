package server

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald"
)

// TestOutageLogsOnce drives the outage log with a probe the test sets:
// River's failed polls and lines carrying an unavailable store error are
// held back while the probe fails; the outage is one start line and one
// end line that counts them; lines of anything else pass.
func TestOutageLogsOnce(t *testing.T) {
	t.Parallel()
	logs := newSyncBuffer()
	var mu sync.Mutex
	var probeErr error
	setProbe := func(err error) { mu.Lock(); probeErr = err; mu.Unlock() }
	o := newOutage(slog.New(slog.NewTextHandler(logs, nil)), func(context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		return probeErr
	})
	defer o.close()
	river := slog.New(o.quiet(slog.NewTextHandler(logs, nil), true))
	main := slog.New(o.quiet(slog.NewTextHandler(logs, nil), false))
	count := func(s string) int { return strings.Count(logs.String(), s) }
	const polls = `msg="producer: Error fetching jobs"`

	river.Error("producer: Error fetching jobs", "err", "a bug, not an outage")
	main.Error("push failed", "err", errors.New("FCM said no"))
	if count(polls) != 1 || count("push failed") != 1 || count(outageStart) != 0 {
		t.Fatalf("with the store up, lines pass and no outage starts; got\n%s", logs)
	}

	setProbe(errors.New("database unreachable: connection refused"))
	for range 5 {
		river.Error("producer: Error fetching jobs", "err", "connection refused")
	}
	river.Warn("notifier: Error running listener", "err", "connection refused")
	main.Warn("node heartbeat", "err", herald.Unavailable(errors.New("connection refused")))
	main.Error("something else entirely", "err", errors.New("a bug"))
	o.suspect(herald.Unavailable(errors.New("connection refused"))) // a request's store call
	if got := count(polls); got != 1 {
		t.Errorf("River's failed polls: got %d lines, want the first only (before the outage)", got)
	}
	if count("node heartbeat") != 0 || count("something else entirely") != 1 || count(outageStart) != 1 {
		t.Errorf("during the outage: got\n%s\nwant one start line, the heartbeat held, the other error written", logs)
	}

	setProbe(nil)
	waitFor(t, "the end of the outage", 10*time.Second, func() bool { return count(outageEnd) == 1 })
	if got := logs.String(); !strings.Contains(got, "heldLines=7") || count(outageStart) != 1 {
		t.Errorf("got\n%s\nwant one start and one end line counting 7 held lines", got)
	}
	river.Error("notifier: Error running listener", "err", "conn closed")
	if count("Error running listener") != 0 {
		t.Errorf("an echo of the outage just after it: got\n%s\nwant it held", logs)
	}
	o.mu.Lock()
	o.echoFor = 0
	o.mu.Unlock()
	river.Error("producer: Error fetching jobs", "err", "a bug again")
	if count(polls) != 2 {
		t.Errorf("after the outage River's errors pass again; got\n%s", logs)
	}

	debug := newSyncBuffer()
	o.observe(errors.New("database unreachable"), nil)
	slog.New(o.quiet(slog.NewTextHandler(debug, &slog.HandlerOptions{Level: slog.LevelDebug}), true)).Error("producer: Error fetching jobs")
	if got := debug.String(); !strings.Contains(got, `level=DEBUG msg="producer: Error fetching jobs"`) {
		t.Errorf("a held line with DEBUG enabled: got %q, want it written at DEBUG", got)
	}
}

// syncBuffer is a bytes.Buffer safe for a logger's concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{} }

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// The lines that start and end an outage.
const (
	outageStart = "database unavailable"
	outageEnd   = "database available again"
)

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond) // polling interval, not a wait for work
	}
}
