package storetest

import (
	"bytes"
	"testing"
	"time"

	"github.com/heraldpush/herald"
)

var appTests = []test{
	{"CreateApp/RoundTrip", testCreateAppRoundTrip},
	{"CreateApp/ErrDuplicate", testCreateAppDuplicate},
	{"AppByAPIKey", testAppByAPIKey},
	{"ListApps", testListApps},
	{"UpdateApp", testUpdateApp},
	{"DeleteApp", testDeleteApp},
	{"SetSecretHash", testSetSecretHash},
	{"SetFCMCredentials", testSetFCMCredentials},
	{"SetWebhook", testSetWebhook},
	{"ErrNotFound", testAppErrNotFound},
	{"Sandbox/NotCharged", testSandboxNotCharged},
	{"SendRate/Default", testSendRateDefault},
	{"AdFooterSettings", testAdFooterSettings},
}

// testAdFooterSettings: the ad footer's settings are stored on create and
// update, verbatim (line breaks and spaces kept), and cleared with "".
func testAdFooterSettings(t *testing.T, b *bundle) {
	a := b.app
	a.ID, a.APIKey, a.Name = herald.NewID("app_", b.now), herald.NewAPIKey(), "with footer"
	a.AdSenderName, a.AdSenderContact, a.AdOptOut = "(주)헤럴드 ", "080-123-4567", "수신거부:\n 마이 > 설정 > 알림"
	must(t, "CreateApp", b.s.CreateApp(b.ctx, a))
	got, err := b.s.App(b.ctx, a.ID)
	must(t, "App", err)
	if got.AdSenderName != a.AdSenderName || got.AdSenderContact != a.AdSenderContact || got.AdOptOut != a.AdOptOut {
		t.Errorf("created: got %q %q %q, want %q %q %q", got.AdSenderName, got.AdSenderContact, got.AdOptOut,
			a.AdSenderName, a.AdSenderContact, a.AdOptOut)
	}
	got.AdSenderName, got.AdOptOut = "Other Co.", ""
	must(t, "UpdateApp", b.s.UpdateApp(b.ctx, got))
	again, err := b.s.App(b.ctx, a.ID)
	must(t, "App", err)
	if again.AdSenderName != "Other Co." || again.AdSenderContact != a.AdSenderContact || again.AdOptOut != "" {
		t.Errorf("updated: got %q %q %q, want the new name, the contact kept, no opt-out", again.AdSenderName,
			again.AdSenderContact, again.AdOptOut)
	}
}

func testCreateAppRoundTrip(t *testing.T, b *bundle) {
	a := herald.App{ID: herald.NewID("app_", b.now), Name: "full", APIKey: herald.NewAPIKey(), SecretHash: herald.HashSecret("x"),
		Tier: herald.TierEnterprise, AppUserEnabled: true, Registered: false, TimeZone: "America/New_York",
		DefaultConsent: consent(true, true), FCMCredentials: []byte("sealed"), WebhookURL: "https://h.example/x",
		WebhookSecret: []byte("sealed-secret"), CreatedAt: b.now, SendRatePerMinute: 1200}
	must(t, "CreateApp", b.s.CreateApp(b.ctx, a))
	got, err := b.s.App(b.ctx, a.ID)
	must(t, "App", err)
	if got.ID != a.ID || got.Name != a.Name || got.APIKey != a.APIKey || !bytes.Equal(got.SecretHash, a.SecretHash) ||
		got.Tier != a.Tier || got.AppUserEnabled != a.AppUserEnabled || got.Registered != a.Registered ||
		got.TimeZone != a.TimeZone || got.DefaultConsent != a.DefaultConsent || !bytes.Equal(got.FCMCredentials, a.FCMCredentials) ||
		got.WebhookURL != a.WebhookURL || !bytes.Equal(got.WebhookSecret, a.WebhookSecret) || !got.CreatedAt.Equal(a.CreatedAt) ||
		got.SendRatePerMinute != a.SendRatePerMinute {
		t.Errorf("got %+v, want %+v", got, a)
	}
	if got.FCMWarning != "" || got.FCMWarningAt != nil {
		t.Errorf("warning: got %q at %v, want none", got.FCMWarning, got.FCMWarningAt)
	}
}

func testCreateAppDuplicate(t *testing.T, b *bundle) {
	dup := b.app
	if err := b.s.CreateApp(b.ctx, dup); err == nil {
		t.Errorf("same id: got nil, want an error")
	}
	dup.ID = herald.NewID("app_", b.now)
	if err := b.s.CreateApp(b.ctx, dup); err == nil {
		t.Errorf("same API key: got nil, want an error")
	}
	if _, err := b.s.App(b.ctx, dup.ID); err == nil {
		t.Errorf("the app with a taken API key was stored")
	}
	if got, err := b.s.AppByAPIKey(b.ctx, dup.APIKey); err != nil || got.ID != b.app.ID {
		t.Errorf("AppByAPIKey: got (%s, %v), want the first app", got.ID, err)
	}
}

func testAppByAPIKey(t *testing.T, b *bundle) {
	got, err := b.s.AppByAPIKey(b.ctx, b.app.APIKey)
	if err != nil || got.ID != b.app.ID {
		t.Errorf("got (%s, %v), want %s", got.ID, err, b.app.ID)
	}
	_, err = b.s.AppByAPIKey(b.ctx, herald.NewAPIKey())
	wantErr(t, "unknown key", err, herald.ErrNotFound)
}

func testListApps(t *testing.T, b *bundle) {
	b.tick(time.Second)
	second := b.newApp("b")
	apps, err := b.s.ListApps(b.ctx)
	must(t, "ListApps", err)
	var ids []string
	for _, a := range apps {
		ids = append(ids, a.ID)
	}
	if !equal(ids, []string{b.app.ID, second.ID}) {
		t.Errorf("got %v, want [%s %s] oldest first", ids, b.app.ID, second.ID)
	}
}

func testUpdateApp(t *testing.T, b *bundle) {
	must(t, "SetFCMCredentials", b.s.SetFCMCredentials(b.ctx, b.app.ID, []byte("creds")))
	a := b.app
	a.Name, a.Tier, a.AppUserEnabled, a.Registered = "renamed", herald.TierFree, false, false
	a.TimeZone, a.DefaultConsent = "Europe/Paris", consent(true, false)
	a.NoAdPrefixCheck, a.Sandbox, a.SendRatePerMinute = true, true, 600
	// Keys and credentials have their own methods: UpdateApp leaves them.
	a.APIKey, a.SecretHash, a.FCMCredentials, a.WebhookURL = herald.NewAPIKey(), []byte("other"), nil, "https://x.example"
	must(t, "UpdateApp", b.s.UpdateApp(b.ctx, a))
	got, err := b.s.App(b.ctx, a.ID)
	must(t, "App", err)
	if got.Name != "renamed" || got.Tier != herald.TierFree || got.AppUserEnabled || got.Registered ||
		got.TimeZone != "Europe/Paris" || got.DefaultConsent != consent(true, false) || !got.NoAdPrefixCheck || !got.Sandbox ||
		got.SendRatePerMinute != 600 {
		t.Errorf("settings: got %+v, want the new ones", got)
	}
	if got.APIKey != b.app.APIKey || !bytes.Equal(got.SecretHash, b.app.SecretHash) ||
		!bytes.Equal(got.FCMCredentials, []byte("creds")) || got.WebhookURL != "" {
		t.Errorf("keys and credentials: got %+v, want them untouched", got)
	}
}

func testDeleteApp(t *testing.T, b *bundle) {
	other := b.newApp("other")
	b.register("d1", "t1", "u1")
	p := b.acceptUsers("u1")
	must(t, "DeleteApp", b.s.DeleteApp(b.ctx, b.app.ID))
	_, err := b.s.App(b.ctx, b.app.ID)
	wantErr(t, "App", err, herald.ErrNotFound)
	_, _, err = b.s.User(b.ctx, b.app.ID, "u1")
	wantErr(t, "User", err, herald.ErrUserNotFound)
	_, err = b.s.Push(b.ctx, p.ID)
	wantErr(t, "Push", err, herald.ErrNotFound)
	if ds, err := b.allDevices(b.app.ID); err != nil || len(ds) != 0 {
		t.Errorf("AllDevices: got %d (%v), want none", len(ds), err)
	}
	if _, err := b.s.App(b.ctx, other.ID); err != nil {
		t.Errorf("other app: got %v, want it kept", err)
	}
	wantErr(t, "DeleteApp again", b.s.DeleteApp(b.ctx, b.app.ID), herald.ErrNotFound)
}

func testSetSecretHash(t *testing.T, b *bundle) {
	must(t, "SetSecretHash", b.s.SetSecretHash(b.ctx, b.app.ID, herald.HashSecret("new")))
	got, err := b.s.AppByAPIKey(b.ctx, b.app.APIKey)
	must(t, "AppByAPIKey", err)
	if !herald.SecretMatches(got.SecretHash, "new") || herald.SecretMatches(got.SecretHash, "s-a") {
		t.Errorf("got a hash matching the old secret or not the new one")
	}
}

func testSetFCMCredentials(t *testing.T, b *bundle) {
	must(t, "SetFCMCredentials", b.s.SetFCMCredentials(b.ctx, b.app.ID, []byte("sealed")))
	at := b.now.Add(time.Minute).Truncate(time.Millisecond)
	must(t, "SetFCMWarning", b.s.SetFCMWarning(b.ctx, b.app.ID, "invalid_grant", at))
	got, _ := b.s.App(b.ctx, b.app.ID)
	if !bytes.Equal(got.FCMCredentials, []byte("sealed")) || got.FCMWarning != "invalid_grant" ||
		got.FCMWarningAt == nil || !got.FCMWarningAt.Equal(at) {
		t.Errorf("got credentials %q, warning %q at %v; want sealed, invalid_grant at %v", got.FCMCredentials, got.FCMWarning, got.FCMWarningAt, at)
	}
	b.tick(time.Hour)
	must(t, "SetFCMCredentials again", b.s.SetFCMCredentials(b.ctx, b.app.ID, []byte("fresh")))
	if got, _ = b.s.App(b.ctx, b.app.ID); got.FCMWarning != "" || got.FCMWarningAt != nil {
		t.Errorf("new credentials: got warning %q at %v, want it cleared", got.FCMWarning, got.FCMWarningAt)
	}
	if got.FCMCredentialsAt == nil || !got.FCMCredentialsAt.Equal(b.now) {
		t.Errorf("stored at: got %v, want %v", got.FCMCredentialsAt, b.now)
	}
	must(t, "SetFCMCredentials nil", b.s.SetFCMCredentials(b.ctx, b.app.ID, nil))
	if got, _ = b.s.App(b.ctx, b.app.ID); len(got.FCMCredentials) != 0 || got.FCMCredentialsAt != nil {
		t.Errorf("nil: got credentials %q stored at %v, want none", got.FCMCredentials, got.FCMCredentialsAt)
	}
}

func testSetWebhook(t *testing.T, b *bundle) {
	must(t, "SetWebhook", b.s.SetWebhook(b.ctx, b.app.ID, "https://h.example", []byte("secret")))
	got, _ := b.s.App(b.ctx, b.app.ID)
	if got.WebhookURL != "https://h.example" || !bytes.Equal(got.WebhookSecret, []byte("secret")) {
		t.Errorf("got %q %q, want the webhook", got.WebhookURL, got.WebhookSecret)
	}
	must(t, "SetWebhook empty", b.s.SetWebhook(b.ctx, b.app.ID, "", []byte("ignored")))
	if got, _ = b.s.App(b.ctx, b.app.ID); got.WebhookURL != "" || len(got.WebhookSecret) != 0 {
		t.Errorf("empty URL: got %q %q, want both removed", got.WebhookURL, got.WebhookSecret)
	}
}

func testAppErrNotFound(t *testing.T, b *bundle) {
	const id = "app_missing"
	_, err := b.s.App(b.ctx, id)
	wantErr(t, "App", err, herald.ErrNotFound)
	for name, err := range map[string]error{
		"UpdateApp":         b.s.UpdateApp(b.ctx, herald.App{ID: id, Name: "x", Tier: herald.TierFree, TimeZone: "UTC"}),
		"DeleteApp":         b.s.DeleteApp(b.ctx, id),
		"SetSecretHash":     b.s.SetSecretHash(b.ctx, id, herald.HashSecret("x")),
		"SetFCMCredentials": b.s.SetFCMCredentials(b.ctx, id, []byte("x")),
		"SetFCMWarning":     b.s.SetFCMWarning(b.ctx, id, "x", b.now),
		"SetWebhook":        b.s.SetWebhook(b.ctx, id, "https://h.example", []byte("x")),
	} {
		wantErr(t, name, err, herald.ErrNotFound)
	}
}

// testSandboxNotCharged: a sandbox app's pushes keep their cost on their
// record but write nothing to the ledger; cancelling one refunds nothing.
func testSandboxNotCharged(t *testing.T, b *bundle) {
	a := b.app
	a.Sandbox = true
	must(t, "UpdateApp", b.s.UpdateApp(b.ctx, a))
	p := b.acceptUsers("u1", "u2")
	s := b.acceptScheduled(b.now.Add(time.Hour), "u3")
	if _, err := b.cancel(s.ID); err != nil {
		t.Fatalf("CancelScheduled: %v", err)
	}
	if got := b.pushOf(p.ID); got.ServerActionsHalf != 2 {
		t.Errorf("push: got cost %d, want 2 shown", got.ServerActionsHalf)
	}
	us, err := b.s.Usage(b.ctx, b.app.ID, "2000-01-01", "2100-01-01")
	if err != nil || len(us) != 0 {
		t.Errorf("Usage: got %+v, %v, want nothing charged", us, err)
	}
	a.Sandbox = false
	must(t, "UpdateApp", b.s.UpdateApp(b.ctx, a))
	b.acceptUsers("u1")
	if us, _ := b.s.Usage(b.ctx, b.app.ID, "2000-01-01", "2100-01-01"); len(us) != 1 || us[0].Half != 1 {
		t.Errorf("Usage out of the sandbox: got %+v, want one push of 0.5 charged", us)
	}
}

// testSendRateDefault: an app stored without a send rate has the default,
// in every way it is read, and UpdateApp without one writes the default.
func testSendRateDefault(t *testing.T, b *bundle) {
	got, err := b.s.App(b.ctx, b.app.ID)
	must(t, "App", err)
	if got.SendRatePerMinute != herald.DefaultSendRatePerMinute {
		t.Errorf("App: got %d, want %d", got.SendRatePerMinute, herald.DefaultSendRatePerMinute)
	}
	byKey, err := b.s.AppByAPIKey(b.ctx, b.app.APIKey)
	must(t, "AppByAPIKey", err)
	apps, err := b.s.ListApps(b.ctx)
	must(t, "ListApps", err)
	if byKey.SendRatePerMinute != herald.DefaultSendRatePerMinute || len(apps) != 1 || apps[0].SendRatePerMinute != herald.DefaultSendRatePerMinute {
		t.Errorf("AppByAPIKey, ListApps: got %d, %+v; want %d", byKey.SendRatePerMinute, apps, herald.DefaultSendRatePerMinute)
	}
	got.SendRatePerMinute = 60
	must(t, "UpdateApp", b.s.UpdateApp(b.ctx, got))
	got.SendRatePerMinute = 0
	must(t, "UpdateApp unset", b.s.UpdateApp(b.ctx, got))
	if got, _ = b.s.App(b.ctx, b.app.ID); got.SendRatePerMinute != herald.DefaultSendRatePerMinute {
		t.Errorf("after UpdateApp without a rate: got %d, want %d", got.SendRatePerMinute, herald.DefaultSendRatePerMinute)
	}
}
