package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// running is a command run in-process by run(), in the background.
type running struct {
	t      *testing.T
	out    *syncBuffer
	cancel context.CancelFunc
	done   chan error
}

// runInBackground runs `herald args…` until stop (or the test's end).
func runInBackground(t *testing.T, getenv func(string) string, args ...string) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{t: t, out: newSyncBuffer(), cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- run(ctx, args, getenv, r.out, newSyncBuffer()) }()
	t.Cleanup(func() { r.stop() })
	return r
}

// waitOutput waits until the output matches re and returns the submatches.
func (r *running) waitOutput(re *regexp.Regexp) []string {
	r.t.Helper()
	var m []string
	waitFor(r.t, "output matching "+re.String(), 20*time.Second, func() bool {
		select {
		case err := <-r.done:
			r.done <- err
			r.t.Fatalf("command ended before printing %s: %v\n%s", re, err, r.out.String())
		default:
		}
		m = re.FindStringSubmatch(r.out.String())
		return m != nil
	})
	return m
}

// stop cancels the command (as SIGINT does) and waits for it to end.
func (r *running) stop() error {
	r.cancel()
	select {
	case err := <-r.done:
		r.done <- err
		return err
	case <-time.After(30 * time.Second):
		r.t.Fatalf("command did not stop within 30 s")
		return nil
	}
}

// freeAddr returns a loopback address with a port that was free a moment
// ago, for a listener that must keep one port across restarts.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

var listening = regexp.MustCompile(`public API on (\S+), admin on (\S+)\n`)

// readAdminToken reads the admin token generated into a data dir.
func readAdminToken(t *testing.T, dataDir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dataDir, "admin-token"))
	if err != nil {
		t.Fatalf("admin token: %v", err)
	}
	return strings.TrimSpace(string(b))
}
