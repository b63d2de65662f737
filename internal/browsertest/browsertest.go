// Package browsertest starts the headless Chromium that the browser tests
// (the dashboard's, the app-side SDK's) drive with chromedp.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Chromium returns the path of a Chromium to drive, or skips the test,
// saying which (what) in the message.
func Chromium(t *testing.T, what string) string {
	t.Helper()
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	t.Skip("skipping " + what + ": no Chromium at /usr/bin/chromium or as `chromium` on PATH")
	return ""
}

// Headless starts the Chromium at path headless with a fresh profile,
// stopped when the test ends, and returns its browsing context, bounded
// by timeout.
func Headless(t *testing.T, path string, timeout time.Duration) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-sync", true),
	}
	ctx, cancelTimeout := context.WithTimeout(context.Background(), timeout)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
		cancelTimeout()
	})
	// The first run starts the browser, which lives as long as browserCtx.
	if err := chromedp.Do(browserCtx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return browserCtx
}

// Step runs browser actions with a deadline of their own (15 s).
func Step(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}
