package admin_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/heraldpush/herald/internal/testenv"
)

// TestLogsHoldNoSecrets drives both listeners with every kind of secret,
// accepted and refused, and reads the log they wrote.
func TestLogsHoldNoSecrets(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.BusinessApp(t)
	sa := testenv.NewServiceAccount(t)

	// Server API and SDK, with good and bad keys.
	env.RegisterToken(t, app, "d1", "tok-1", "u1")
	env.SetMarketing(t, app, "u1", map[string]any{"marketing": true})
	env.SetMarketing(t, testenv.App{APIKey: app.APIKey, SecretKey: app.SecretKey + "x"}, "u1", map[string]any{"marketing": true})
	env.Do(t, testenv.Request{Method: http.MethodPatch, URL: "/api/app-user/v2/marketing", Body: "{",
		Header: map[string]string{"x-api-key": app.APIKey + "x", "x-secret-key": app.SecretKey}})
	env.Withdraw(t, app, "u1")

	// Admin API: wrong tokens that contain the real one, then uploads.
	for _, auth := range []string{"Bearer " + testenv.AdminToken + "x", "Basic " + testenv.AdminToken} {
		testenv.Send(t, http.DefaultClient, env.Admin.URL, testenv.Request{Method: http.MethodGet, URL: "/admin/v1/apps",
			Header: map[string]string{"Authorization": auth}})
	}
	fcmPath := "/admin/v1/apps/" + app.ID + "/fcm-credentials"
	if res := env.AdminDo(t, http.MethodPut, fcmPath, sa.JSON); res.Status != http.StatusOK {
		t.Fatalf("upload: got %d %s, want 204", res.Status, res.Body)
	}
	env.AdminDo(t, http.MethodPut, fcmPath, sa.With(t, "token_uri", "https://attacker.example/token"))
	env.AdminDo(t, http.MethodPut, fcmPath, sa.With(t, "type", 5))
	env.AdminDo(t, http.MethodPut, fcmPath, []byte(sa.PrivateKeyPEM))
	res := env.AdminDo(t, http.MethodPost, "/admin/v1/apps/"+app.ID+"/secret-key", nil)
	var reissued struct{ SecretKey string }
	res.Decode(t, &reissued)
	res = env.AdminDo(t, http.MethodPut, "/admin/v1/apps/"+app.ID+"/webhook", map[string]any{"url": "https://hooks.example.com/h"})
	var hook struct{ Secret string }
	res.Decode(t, &hook)
	env.Server(t, testenv.App{APIKey: app.APIKey, SecretKey: reissued.SecretKey}, http.MethodDelete, "/api/app-user/v2", map[string]any{"userId": "u1"})

	log := env.Log.String()
	if n := strings.Count(log, "msg=request"); n < 14 {
		t.Fatalf("log: got %d request lines, want one per request (at least 14):\n%s", n, log)
	}
	pemLines := strings.Split(strings.TrimSpace(sa.PrivateKeyPEM), "\n")
	secrets := map[string]string{
		"secret key":          app.SecretKey,
		"reissued secret key": reissued.SecretKey,
		"api key":             app.APIKey,
		"admin token":         testenv.AdminToken,
		"PEM header":          "BEGIN PRIVATE KEY",
		"PEM body":            pemLines[1],
		"PEM last line":       pemLines[len(pemLines)-2],
		"client email":        sa.ClientEmail,
		"webhook secret":      strings.TrimPrefix(hook.Secret, "whsec_"),
	}
	for name, s := range secrets {
		if s == "" {
			t.Errorf("%s: got empty, want a value to look for", name)
			continue
		}
		if strings.Contains(log, s) {
			t.Errorf("log holds the %s %q:\n%s", name, s, log)
		}
	}
}
