package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/heraldpush/herald/fcm/fcmtest"
)

func TestAppCommands(t *testing.T) {
	t.Parallel()
	e := start(t)
	getenv := func(string) string { return "" }
	herald := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		args = append(args, "--server", e.svc.AdminURL, "--token", e.adminTok)
		if err := run(context.Background(), args, getenv, &out, &errOut); err != nil {
			t.Fatalf("herald %v: %v (%s)", args, err, errOut.String())
		}
		return out.String()
	}
	var created struct{ AppID, APIKey, SecretKey, Tier string }
	if err := json.Unmarshal([]byte(herald("app", "create", "--name", "Shop", "--tier", "business", "--app-user", "--json")), &created); err != nil {
		t.Fatal(err)
	}
	if created.Tier != "business" || !strings.HasPrefix(created.SecretKey, "hs_") {
		t.Fatalf("got %+v, want a business app with its secret key", created)
	}
	if out := herald("app", "list"); !strings.Contains(out, created.AppID) || !strings.Contains(out, "Shop") {
		t.Fatalf("app list: got %q, want the new app", out)
	}
	var shown struct{ AppID, SecretKey string }
	json.Unmarshal([]byte(herald("app", "show", created.AppID, "--json")), &shown)
	if shown.AppID != created.AppID || shown.SecretKey != "" {
		t.Fatalf("app show: got %+v, want the app without its secret", shown)
	}
	if out := herald("app", "show", created.AppID); !strings.Contains(out, "ad footer: not set: advertising pushes are refused") {
		t.Errorf("app show without the footer's settings: got %q, want it to say ads are refused", out)
	}
	var ad struct {
		AppID    string
		AdSender struct{ Name, Contact string }
		AdOptOut string
	}
	json.Unmarshal([]byte(herald("app", "create", "--name", "Ads", "--ad-sender-name", "(주)헤럴드", "--ad-sender-contact", "080-123-4567",
		"--ad-opt-out", "수신거부: 마이 > 설정", "--json")), &ad)
	if ad.AdSender.Name != "(주)헤럴드" || ad.AdSender.Contact != "080-123-4567" || ad.AdOptOut != "수신거부: 마이 > 설정" {
		t.Errorf("app create with the footer's flags: got %+v", ad)
	}
	if out := herald("app", "show", ad.AppID); !strings.Contains(out, `ad footer: "\n(주)헤럴드 080-123-4567\n수신거부: 마이 > 설정"`) {
		t.Errorf("app show: got %q, want the footer", out)
	}
	var out, errOut bytes.Buffer
	err := run(context.Background(), []string{"app", "show", "app_missing", "--server", e.svc.AdminURL, "--token", e.adminTok}, getenv, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("show of a missing app: got %v, want a 404 error", err)
	}
}

// TestAppUpdateCredentialsWebhook: app update changes only the settings
// whose flags are given, refusals name the flag, and app credentials and
// app webhook upload, set and remove through the admin API.
func TestAppUpdateCredentialsWebhook(t *testing.T) {
	t.Parallel()
	e := start(t)
	herald, must := e.cli(t)
	a := e.NewAppWithoutFCM(map[string]any{"name": "Shop"})

	must("app", "update", a.ID, "--tier", "business", "--app-user", "--time-zone", "Europe/Berlin", "--send-rate", "1200")
	var got struct {
		Name, Tier, TimeZone string
		AppUserEnabled       bool
		SendRatePerMinute    int
	}
	e.AdminJSON("GET", "/admin/v1/apps/"+a.ID, nil, &got)
	if got.Name != "Shop" || got.Tier != "business" || !got.AppUserEnabled || got.TimeZone != "Europe/Berlin" || got.SendRatePerMinute != 1200 {
		t.Fatalf("after app update: got %+v, want the name kept and the four settings changed", got)
	}
	must("app", "update", a.ID, "--app-user=false")
	e.AdminJSON("GET", "/admin/v1/apps/"+a.ID, nil, &got)
	if got.AppUserEnabled || got.Tier != "business" {
		t.Fatalf("after --app-user=false: got %+v, want the feature off and the tier kept", got)
	}
	var events struct{ WebhookEvents []string }
	must("app", "update", a.ID, "--webhook-events", "push.sent, push.failed")
	if e.AdminJSON("GET", "/admin/v1/apps/"+a.ID, nil, &events); !slices.Equal(events.WebhookEvents, []string{"push.sent", "push.failed"}) {
		t.Errorf("after --webhook-events: got %v, want push.sent and push.failed", events.WebhookEvents)
	}
	must("app", "update", a.ID, "--webhook-events", "")
	if e.AdminJSON("GET", "/admin/v1/apps/"+a.ID, nil, &events); len(events.WebhookEvents) != 0 {
		t.Errorf("after --webhook-events \"\": got %v, want none", events.WebhookEvents)
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"app", "update", a.ID, "--tier", "gold"}, "--tier:"},
		{[]string{"app", "update", a.ID, "--send-rate", "0"}, "--send-rate:"},
		{[]string{"app", "update", a.ID}, "no setting given"},
		{[]string{"app", "update", a.ID, "--ad-sender-name", "Shop"}, "--ad-sender-contact"},
		{[]string{"app", "update", a.ID, "--webhook-events", "push.sent,push.sent"}, "webhookEvents[1]"},
		{[]string{"app", "update", a.ID, "--webhook-events", "push.bogus"}, "webhookEvents[0]"},
		{[]string{"app", "credentials", a.ID}, "give --file FILE or --delete"},
		{[]string{"app", "credentials", a.ID, "--file", filepath.Join(t.TempDir(), "missing.json")}, "--file:"},
		{[]string{"app", "webhook", a.ID, "--url", "http://x", "--delete"}, "give --url URL or --delete"},
		{[]string{"app", "webhook", a.ID, "--url", "ftp://example.com/hook"}, "--url:"},
	} {
		if _, err := herald(tt.args...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("herald %v: got %v, want an error with %q", tt.args, err, tt.want)
		}
	}
	e.AdminJSON("GET", "/admin/v1/apps/"+a.ID, nil, &got)
	if got.Tier != "business" || got.SendRatePerMinute != 1200 {
		t.Fatalf("after refused updates: got %+v, want nothing changed", got)
	}

	// The ad footer: set, and shown by app show.
	must("app", "update", a.ID, "--ad-sender-name", "Shop Inc.", "--ad-sender-contact", "02-123-4567", "--ad-opt-out", "수신거부: 설정")
	if out := must("app", "show", a.ID); !strings.Contains(out, `ad footer: "\nShop Inc. 02-123-4567\n수신거부: 설정"`) {
		t.Errorf("app show after the ad settings: got %q, want the footer", out)
	}

	file := filepath.Join(t.TempDir(), "service-account.json")
	if err := os.WriteFile(file, fcmtest.ServiceAccountJSON(t, "shop-project", e.emuURL+"/token"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := must("app", "credentials", a.ID, "--file", file); !strings.Contains(out, "Firebase project: shop-project\n") ||
		!strings.Contains(out, "service account: ") || strings.Contains(out, "APP ID") {
		t.Errorf("app credentials: got %q, want the Firebase project and service account stored, not the app table", out)
	}
	var creds struct{ HasFcmCredentials bool }
	if e.AdminJSON("GET", "/admin/v1/apps/"+a.ID, nil, &creds); !creds.HasFcmCredentials {
		t.Fatal("after app credentials --file: the app has no FCM credentials")
	}
	must("app", "credentials", a.ID, "--delete")
	if e.AdminJSON("GET", "/admin/v1/apps/"+a.ID, nil, &creds); creds.HasFcmCredentials {
		t.Fatal("after app credentials --delete: the app still has FCM credentials")
	}

	out := must("app", "webhook", a.ID, "--url", "http://127.0.0.1:9/hook")
	if !strings.Contains(out, "url: http://127.0.0.1:9/hook") || !strings.Contains(out, "secret: whsec_") {
		t.Errorf("app webhook: got %q, want the url and its whsec_ secret", out)
	}
	var hook struct{ WebhookURL *string }
	if e.AdminJSON("GET", "/admin/v1/apps/"+a.ID, nil, &hook); hook.WebhookURL == nil || *hook.WebhookURL != "http://127.0.0.1:9/hook" {
		t.Fatalf("after app webhook: got %v, want the url", hook.WebhookURL)
	}
	// app show without --json: every setting an operator sets, the
	// table's and the rest.
	must("app", "update", a.ID, "--sandbox")
	shown := must("app", "show", a.ID)
	for _, want := range []string{"sandbox: on", "send rate: 1200 a minute\n", "ad prefix check: on\n", "webhook: http://127.0.0.1:9/hook\n",
		"consent notice: off\n", "reconfirmation: off\n", `ad footer: "\nShop Inc.`} {
		if !strings.Contains(shown, want) {
			t.Errorf("app show: got %q, want a line %q", shown, want)
		}
	}
	must("app", "webhook", a.ID, "--delete")
	hook.WebhookURL = nil
	if e.AdminJSON("GET", "/admin/v1/apps/"+a.ID, nil, &hook); hook.WebhookURL != nil {
		t.Fatalf("after app webhook --delete: got %v, want none", *hook.WebhookURL)
	}
}
