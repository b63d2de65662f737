package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heraldpush/herald/fcm/fcmtest"
)

// TestRefusalsNameTheSetting: on a server without the test settings, the
// emulator's service-account file and an http webhook are refused with
// the variable (and flag) that would accept them, and the CLI names the
// credentials file by its flag, --file, not the request's body.
func TestRefusalsNameTheSetting(t *testing.T) {
	t.Parallel()
	e := start(t, func(c *config) { c.FCM.Client.AllowAnyTokenURI, c.Webhook.AllowPrivate = false, false })
	a := e.NewAppWithoutFCM(nil)
	cli := func(args ...string) error {
		_, _, err := heraldCLI(t, nil, append(append([]string{"app"}, args...), "--server", e.svc.AdminURL, "--token", e.adminTok)...)
		return err
	}

	t.Run("TokenURI", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "sa.json")
		if err := os.WriteFile(file, fcmtest.ServiceAccountJSON(t, "proj", e.emuURL+"/token"), 0o600); err != nil {
			t.Fatal(err)
		}
		err := cli("credentials", a.ID, "--file", file)
		if err == nil || !strings.Contains(err.Error(), "HERALD_FCM_ALLOW_ANY_TOKEN_URI=true") ||
			!strings.Contains(err.Error(), "--fcm-allow-any-token-uri") {
			t.Errorf("emulator's file: got %v, want the refusal to name HERALD_FCM_ALLOW_ANY_TOKEN_URI", err)
		}
		if err == nil || !strings.Contains(err.Error(), "\n  --file: ") || strings.Contains(err.Error(), "body:") {
			t.Errorf("emulator's file: got %v, want the detail labelled --file, not body", err)
		}
	})
	t.Run("WebhookHTTP", func(t *testing.T) {
		err := cli("webhook", a.ID, "--url", "http://127.0.0.1:9/hook")
		if err == nil || !strings.Contains(err.Error(), "HERALD_WEBHOOK_ALLOW_PRIVATE=true") ||
			!strings.Contains(err.Error(), "--webhook-allow-private") {
			t.Errorf("http webhook: got %v, want the refusal to name HERALD_WEBHOOK_ALLOW_PRIVATE", err)
		}
	})
	t.Run("WebhookPublicHTTPSUnchanged", func(t *testing.T) {
		// a URL no setting would accept says nothing of one
		err := cli("webhook", a.ID, "--url", "ftp://example.com/hook")
		if err == nil || strings.Contains(err.Error(), "HERALD_WEBHOOK_ALLOW_PRIVATE") {
			t.Errorf("ftp webhook: got %v, want a refusal that does not name HERALD_WEBHOOK_ALLOW_PRIVATE", err)
		}
	})
}
