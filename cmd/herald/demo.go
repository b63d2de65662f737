package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/fcm/emulator"
)

const demoAppName = "Herald demo"

// demoUsers are registered with one device each on every demo start.
var demoUsers = []string{"alice", "bob", "carol"}

// demoServiceAccount is the demo's service-account file in the data dir:
// its token_uri is the demo emulator's, so it can be uploaded to any app.
const demoServiceAccount = "demo-service-account.json"

// startDemoEmulator points the configuration at an in-process emulator on
// a fixed address (by default 127.0.0.1:9099, as `herald fcm-emulator`),
// so that apps set up against the demo keep working after a restart.
func startDemoEmulator(cfg *config) (stop func() error, err error) {
	url, stop, err := startEmulator(cfg.DemoFCMAddr, emulator.Options{})
	if err != nil {
		return nil, fmt.Errorf("demo FCM emulator on %s (change it with --demo-fcm-addr): %w", cfg.DemoFCMAddr, err)
	}
	cfg.FCM.Endpoint, cfg.FCM.Client.AllowAnyTokenURI, cfg.Webhook.AllowPrivate = url, true, true
	return stop, nil
}

// demoApp is the demo app's id and keys.
type demoApp struct{ AppID, APIKey, SecretKey string }

// setUpDemo makes sure the demo app exists with fresh keys, credentials for
// the emulator and a few devices, all through the service's own APIs, and
// prints how to send a push.
func setUpDemo(ctx context.Context, svc *service, stdout io.Writer) error {
	app, err := demoKeys(ctx, svc)
	if err != nil {
		return err
	}
	credsPath, creds, err := demoCredentials(svc.cfg)
	if err != nil {
		return err
	}
	admin := client.Admin{Base: svc.AdminURL, Token: svc.AdminToken}
	if _, err := admin.Do(ctx, http.MethodPut, "/admin/v1/apps/"+app.AppID+"/fcm-credentials", creds); err != nil {
		return err
	}
	for _, u := range demoUsers {
		body := map[string]any{"deviceId": "demo-device-" + u, "token": "demo-token-" + u, "platform": "android", "appSourceVersion": "1.6.0", "userId": u}
		if err := sdkCall(ctx, svc.PublicURL+"/api/sdk/v2/push-token", app.APIKey, body); err != nil {
			return err
		}
	}
	printDemo(stdout, svc, app, credsPath)
	return nil
}

// demoCredentials returns the demo's service-account file, kept in the data
// dir while its token_uri is the running emulator's (written anew when the
// emulator moved).
func demoCredentials(cfg config) (path string, creds []byte, err error) {
	path = filepath.Join(cfg.DataDir, demoServiceAccount)
	tokenURI := cfg.FCM.Endpoint + "/token"
	if b, err := os.ReadFile(path); err == nil {
		var sa struct {
			TokenURI string `json:"token_uri"`
		}
		if json.Unmarshal(b, &sa) == nil && sa.TokenURI == tokenURI {
			return path, b, nil
		}
	}
	// On PostgreSQL nothing else has made the data dir.
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return "", nil, err
	}
	if err := writeServiceAccount(path, "herald-demo", tokenURI); err != nil {
		return "", nil, err
	}
	creds, err = os.ReadFile(path)
	return path, creds, err
}

// demoKeys finds or creates the demo app; the secret is shown only when
// issued, so an existing app gets a new one.
func demoKeys(ctx context.Context, svc *service) (demoApp, error) {
	admin := client.Admin{Base: svc.AdminURL, Token: svc.AdminToken}
	var list struct {
		Apps []struct{ AppID, Name, APIKey string }
	}
	var app demoApp
	raw, err := admin.Do(ctx, http.MethodGet, "/admin/v1/apps", nil)
	if err != nil {
		return app, err
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return app, err
	}
	for _, a := range list.Apps {
		if a.Name == demoAppName {
			app.AppID, app.APIKey = a.AppID, a.APIKey
		}
	}
	if app.AppID == "" {
		raw, err = admin.Do(ctx, http.MethodPost, "/admin/v1/apps", map[string]any{"name": demoAppName, "tier": "business", "appUserEnabled": true})
	} else {
		raw, err = admin.Do(ctx, http.MethodPost, "/admin/v1/apps/"+app.AppID+"/secret-key", nil)
	}
	if err != nil {
		return app, err
	}
	return app, json.Unmarshal(raw, &app)
}

// printDemo tells a newcomer how to send a push and see it arrive, and
// where the service-account file for their own apps is.
func printDemo(stdout io.Writer, svc *service, app demoApp, credsPath string) {
	where, ref := adminTokenRef(&svc.cfg)
	store := "embedded SQLite in " + svc.cfg.DataDir
	if svc.cfg.DatabaseURL != "" {
		store = "PostgreSQL"
	}
	fmt.Fprintf(stdout, `
Herald demo is running (%s, FCM emulator in-process).

  app id      %s
  api key     %s
  secret key  %s
  dashboard   %s/  (sign in with the admin token %s)
  admin API   %s  (Authorization: Bearer %s)
  emulator    %s
  service-account file for the emulator: %s

Send a push to the demo users (alice, bob, carol):

  curl -sS -X POST %s/api/push/v2/users \
    -H 'Content-Type: application/json' -H 'x-api-key: %s' -H 'x-secret-key: %s' \
    -d '{"userIds":["alice","bob","carol"],"title":"Hello","content":"Your first push from Herald"}'

See what FCM received:

  curl -sS %s/emulator/messages

and the push's history:

  curl -sS -H "Authorization: Bearer %s" %s/admin/v1/apps/%s/pushes

Apps you create yourself send through the same emulator once you upload the
service-account file above to them (dashboard: the app's FCM card; or
PUT /admin/v1/apps/{appId}/fcm-credentials with the file as the body).

`, store, app.AppID, app.APIKey, app.SecretKey, svc.AdminURL, where, svc.AdminURL, ref, svc.cfg.FCM.Endpoint, credsPath,
		svc.PublicURL, app.APIKey, app.SecretKey, svc.cfg.FCM.Endpoint, ref, svc.AdminURL, app.AppID)
}

// adminTokenRef is how the demo's text names the admin token without
// printing it (stdout ends up in logs and scrollback): where it is, and
// what a shell command puts in its place.
func adminTokenRef(c *config) (where, ref string) {
	if c.AdminToken == "" {
		file := filepath.Join(c.DataDir, "admin-token")
		return "in " + file, "$(cat " + file + ")"
	}
	src := c.source("admin-token", "HERALD_ADMIN_TOKEN")
	if src == "HERALD_ADMIN_TOKEN" {
		return "of HERALD_ADMIN_TOKEN", "$HERALD_ADMIN_TOKEN"
	}
	return "given to " + src, "<the " + src + " value>"
}

func sdkCall(ctx context.Context, url, apiKey string, body any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("x-api-key", apiKey)
	req.Header.Set("Content-Type", "application/json")
	return doExpect(req, http.StatusOK)
}

func doExpect(req *http.Request, status int) error {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != status {
		raw, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("%s %s: got %d: %s", req.Method, req.URL.Path, resp.StatusCode, raw)
	}
	return nil
}
