// Package js_test runs the app-side SDK (sdk/js, TypeScript) in Chromium:
// the built bundle on a page of its own origin, calling a real Herald
// across origins, offline and back. The SDK's own tests are `npm test`;
// this package holds no Go code but this test.
package js_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/heraldpush/herald/api"
	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/internal/browsertest"
	"github.com/heraldpush/herald/internal/testenv"
	"github.com/heraldpush/herald/server"
)

// TestSDKBrowser: a page loads the built bundle and, with the default
// store (localStorage), registers a device for a user with consent and
// tags; a refusal surfaces as a HeraldError; offline, a consent change and
// a report wait in localStorage, survive a reload, and are sent by the
// new page's instance once the network is back.
func TestSDKBrowser(t *testing.T) {
	chrome := chromium(t)
	dist := buildBundle(t)
	h := testenv.Start(t)
	a := h.NewApp(nil)
	apiAddr := strings.TrimPrefix(h.API.URL, "http://")
	proxy := testenv.StartProxy(t, apiAddr) // the page's network, cut at will
	page := pageServer(t, dist)
	ctx := headless(t, chrome, 90*time.Second)

	start := `Herald.init({baseUrl: "http://` + proxy.Addr() + `", apiKey: "` + a.APIKey + `", appVersion: "3.0.0"})`
	open := func() {
		t.Helper()
		step(t, ctx, "open the page", chromedp.Navigate(page.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#ready")))
	}
	open()
	var online struct {
		DeviceID, Language, Refused string
	}
	eval(t, ctx, `(async () => {
		const h = `+start+`;
		await h.setUserId("web-user");
		await h.registerPushToken("web-token-1", {timeZone: "Asia/Seoul"});
		await h.setConsent({marketing: true});
		await h.setTags({plan: "gold"});
		const refused = await h.setTags({"not a tag name": 1}).then(() => "accepted",
			(e) => e instanceof HeraldError ? e.code + " " + e.status + " " + e.details[0].field : String(e));
		h.close();
		return JSON.stringify({deviceId: await h.deviceId(), language: navigator.language, refused});
	})()`, &online)
	if online.Refused != `ERR-AB-VAL-00 400 tags.not a tag name` {
		t.Errorf("a bad tag name: got %q, want the refusal as a HeraldError", online.Refused)
	}
	u := userView(t, h, a)
	if len(u.Devices) != 1 {
		t.Fatalf("devices of web-user: %+v", u.Devices)
	}
	d := u.Devices[0]
	got := []any{d.DeviceID, d.Platform, d.AppSourceVersion, d.Locale, d.TimeZone, d.Marketing, u.Tags["plan"]}
	want := []any{online.DeviceID, "web", "3.0.0", online.Language, "Asia/Seoul", true, "gold"}
	if !jsonEqual(got, want) {
		t.Errorf("web-user's device: got %v, want %v", got, want)
	}

	// A real push to the device, reported opened while offline.
	if _, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{"web-user"}, Title: "Hi", Content: "there"}); err != nil {
		t.Fatal(err)
	}
	var pushID string
	testenv.WaitFor(t, "the push at the emulator", 10*time.Second, func() bool {
		for _, m := range h.Received("web-token-1") {
			var msg struct{ Data map[string]string }
			if json.Unmarshal(m.Message, &msg) == nil {
				pushID = msg.Data["pushId"]
			}
		}
		return pushID != ""
	})
	h.WaitFinal(pushID, 10*time.Second)

	proxy.Stop()
	var pending int
	eval(t, ctx, `(async () => {
		const h = `+start+`;
		h.setConsent({marketing: false});
		h.reportOpened("`+pushID+`");
		await h.flush();
		const n = await h.pending();
		h.close();
		return n;
	})()`, &pending)
	if pending != 2 {
		t.Fatalf("calls queued offline: got %d, want 2", pending)
	}
	if d := userView(t, h, a).Devices[0]; !d.Marketing {
		t.Fatal("the consent change reached Herald while the network was cut")
	}
	open() // a reload: the instance that queued them is gone
	proxy.Restore()
	eval(t, ctx, `(async () => {
		const h = `+start+`;
		await h.flush();
		return await h.pending();
	})()`, &pending)
	if pending != 0 {
		t.Fatalf("calls left after the network came back: %d", pending)
	}
	if d := userView(t, h, a).Devices[0]; d.Marketing {
		t.Error("the consent change queued offline was not sent after the reload")
	}
	var p struct {
		Counts struct{ Received, Opened int }
	}
	if code := h.AdminJSON("GET", "/admin/v1/pushes/"+pushID, nil, &p); code != http.StatusOK || p.Counts.Received != 1 || p.Counts.Opened != 1 {
		t.Errorf("push %s (%d): got received %d opened %d, want 1 and 1", pushID, code, p.Counts.Received, p.Counts.Opened)
	}
}

// TestSDKBrowserRetryAfter: in Chromium, a call Herald answers 429 is
// retried no sooner than the answer's Retry-After, which the page can read
// across origins only when Herald exposes it.
func TestSDKBrowserRetryAfter(t *testing.T) {
	chrome := chromium(t)
	dist := buildBundle(t)
	// One SDK request a second per client address, bursts of two.
	h := testenv.Start(t, testenv.Options{Config: server.Config{API: api.Limits{SDKClient: 1}}})
	a := h.NewApp(nil)
	page := pageServer(t, dist)
	ctx := headless(t, chrome, 60*time.Second)
	step(t, ctx, "open the page", chromedp.Navigate(page.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#ready")))
	var got struct {
		Waits []int
		Plan  string
	}
	eval(t, ctx, `(async () => {
		const waits = [];
		const h = Herald.init({baseUrl: "`+h.API.URL+`", apiKey: "`+a.APIKey+`", retry: {baseMs: 1, maxMs: 1},
			schedule: (fn, ms) => { waits.push(ms); const t = setTimeout(fn, ms); return () => clearTimeout(t); }});
		const [, , , tags] = await Promise.all([h.registerPushToken("web-token-2"), h.setUserId("web-user-2"),
			h.setConsent({marketing: true}), h.setTags({plan: "silver"})]);
		h.close();
		return JSON.stringify({waits, plan: tags.tags.plan});
	})()`, &got)
	if got.Plan != "silver" || len(got.Waits) == 0 {
		t.Fatalf("got %+v, want every call through and at least one 429 retried", got)
	}
	for _, w := range got.Waits {
		if w < 1000 {
			t.Fatalf("a 429 was retried after %d ms, before its Retry-After of 1 s (%d retries)", w, len(got.Waits))
		}
	}
}

// buildBundle builds sdk/js into dist/ (npm ci first when node_modules is
// missing) and returns dist's path; it skips the test without npm or when
// npm cannot install the compiler.
func buildBundle(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("skipping the SDK's browser test: npm is not installed (it builds sdk/js)")
	}
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "typescript")); err != nil {
		if out, err := exec.Command("npm", "ci", "--no-audit", "--no-fund").CombinedOutput(); err != nil {
			t.Skipf("skipping the SDK's browser test: npm ci failed (is the npm registry reachable?): %v\n%s", err, out)
		}
	}
	dist := filepath.Join(dir, "dist")
	if stale(t, filepath.Join(dist, "index.js"), "src", "tsconfig.json", "package-lock.json") {
		if out, err := exec.Command("npm", "run", "build").CombinedOutput(); err != nil {
			t.Fatalf("npm run build: %v\n%s", err, out)
		}
	}
	return dist
}

// stale reports whether built is missing or older than a file under any
// of sources (tsc takes seconds; a bundle built from the same sources is
// reused).
func stale(t *testing.T, built string, sources ...string) bool {
	t.Helper()
	b, err := os.Stat(built)
	if err != nil {
		return true
	}
	newer := false
	for _, src := range sources {
		err := filepath.WalkDir(src, func(_ string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if info, err := d.Info(); err == nil && info.ModTime().After(b.ModTime()) {
				newer = true
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return newer
}

// pageServer serves a page that imports the bundle, on an origin of its
// own: the SDK calls Herald across origins, as a web app does.
func pageServer(t *testing.T, dist string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("GET /dist/", http.StripPrefix("/dist/", http.FileServer(http.Dir(dist))))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<!doctype html><title>SDK</title><script type="module">
import { Herald, HeraldError } from "/dist/index.js";
Object.assign(window, { Herald, HeraldError });
document.body.insertAdjacentHTML("beforeend", '<p id="ready">ready</p>');
</script><body></body>`))
	})
	mux.HandleFunc("GET /favicon.ico", http.NotFound)
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

type userRecord struct {
	Devices []struct {
		DeviceID, Platform, AppSourceVersion, Locale, TimeZone string
		Marketing                                              bool
	}
	Tags map[string]any
}

func userView(t *testing.T, h *testenv.Harness, a testenv.App) userRecord {
	t.Helper()
	var u userRecord
	if code := h.AdminJSON("GET", "/admin/v1/apps/"+a.ID+"/users/"+url.PathEscape("web-user"), nil, &u); code != http.StatusOK {
		t.Fatalf("get web-user: %d", code)
	}
	return u
}

// eval runs an async script in the page and decodes what it returns (a
// JSON string into a struct, or a number).
func eval(t *testing.T, ctx context.Context, script string, out any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](script, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("script: %v", err)
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		v = json.RawMessage(s)
	}
	if err := json.Unmarshal(v, out); err != nil {
		t.Fatalf("script's answer %s: %v", v, err)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// chromium returns the path of a Chromium to drive, or skips the test.
func chromium(t *testing.T) string {
	t.Helper()
	return browsertest.Chromium(t, "the SDK's browser test")
}

var (
	headless = browsertest.Headless
	step     = browsertest.Step
)
