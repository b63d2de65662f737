package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
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
