package admin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/internal/testenv"
)

var identityShown = regexp.MustCompile(`id="shown-secret">(hi_[0-9A-Za-z]{40})<`)

// TestDashboardIdentityVerification: on the app page an admin issues the
// identity secret (shown once, stored sealed), turns verification on, sees
// the SDK's refused calls counted, and rotates the secret, whose old
// tokens keep working for 24 hours, then stop.
func TestDashboardIdentityVerification(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	appPath := b.submit("/", "/apps", url.Values{"name": {"Shop"}, "tier": {"free"}, "timeZone": {"Asia/Seoul"}})
	appID := strings.TrimPrefix(appPath, "/apps/")
	_, page := b.get(appPath)
	if !strings.Contains(page, `id="identity-refusals">0<`) || !regexp.MustCompile(`id="identity-verification"[^>]* disabled`).MatchString(page) {
		t.Fatalf("app page: want 0 refusals and the toggle disabled until a secret is issued:\n%s", page)
	}

	issue := func() string {
		t.Helper()
		if to := b.submit(appPath+"/identity-secret", appPath+"/identity-secret", url.Values{"confirmed": {"yes"}}); to != appPath {
			t.Fatalf("issue: got redirect to %q, want %q", to, appPath)
		}
		_, page := b.get(appPath)
		m := identityShown.FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("app page after issuing: want the identity secret shown:\n%s", page)
		}
		if _, again := b.get(appPath); strings.Contains(again, m[1]) {
			t.Errorf("app page reloaded: got the identity secret again, want it shown once")
		}
		return m[1]
	}
	secret := issue()
	b.submit(appPath, appPath+"/settings", url.Values{"identityVerification": {"false", "true"}})
	a, err := e.db.App(context.Background(), appID)
	if err != nil {
		t.Fatal(err)
	}
	if !a.IdentityVerification || len(a.IdentitySecret) == 0 || bytes.Contains(a.IdentitySecret, []byte(secret)) {
		t.Fatalf("stored app: got verification %v, secret %q; want on, sealed", a.IdentityVerification, a.IdentitySecret)
	}

	register := func(token string) int {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"deviceId": "d1", "token": "t1", "platform": "android", "appSourceVersion": "1.6.0",
			"userId": "alice", "identityToken": token})
		req, _ := http.NewRequest("POST", e.public.URL+"/api/sdk/v2/push-token", bytes.NewReader(body))
		req.Header.Set("x-api-key", a.APIKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := register(""); code != http.StatusUnauthorized {
		t.Errorf("no token: got %d, want 401", code)
	}
	if code := register(herald.IdentityToken(secret, "alice")); code != http.StatusOK {
		t.Errorf("alice's token: got %d, want 200", code)
	}
	if _, page := b.get(appPath); !strings.Contains(page, `id="identity-refusals">1<`) || !strings.Contains(page, "Rotate identity secret") {
		t.Errorf("app page: want 1 refusal and the rotate button:\n%s", page)
	}
	fresh := issue()
	if fresh == secret {
		t.Fatal("rotated: got the same secret")
	}
	if code := register(herald.IdentityToken(secret, "alice")); code != http.StatusOK {
		t.Errorf("old secret's token within 24 hours of the rotation: got %d, want 200", code)
	}
	e.clock.Set(e.clock.Now().Add(herald.IdentityRotationGrace + time.Minute))
	if code := register(herald.IdentityToken(secret, "alice")); code != http.StatusUnauthorized {
		t.Errorf("old secret's token 24 hours after the rotation: got %d, want 401", code)
	}
	if code := register(herald.IdentityToken(fresh, "alice")); code != http.StatusOK {
		t.Errorf("new secret's token: got %d, want 200", code)
	}
}

// TestIdentitySecretAdminsOnly: only an admin issues the identity secret
// or turns verification on; no app view shows the secret, whoever asks.
func TestIdentitySecretAdminsOnly(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(nil)
	var issued struct{ IdentitySecret string }
	if code := e.AdminJSON("POST", "/admin/v1/apps/"+a.ID+"/identity-secret", nil, &issued); code != http.StatusOK || issued.IdentitySecret == "" {
		t.Fatalf("owner issues: got %d %q, want 200 and a secret", code, issued.IdentitySecret)
	}
	bearer := map[string]string{"owner": testenv.AdminToken}
	for _, role := range []string{"viewer", "operator", "admin"} {
		var op struct{ OperatorID string }
		if code := e.AdminJSON("POST", "/admin/v1/operators", map[string]any{"email": role + "@example.com", "name": role, "role": role}, &op); code != http.StatusCreated {
			t.Fatalf("add %s: got %d", role, code)
		}
		var tok struct{ Token string }
		if code := e.AdminJSON("POST", "/admin/v1/operators/"+op.OperatorID+"/tokens", map[string]any{"name": "t", "expiresInDays": 7}, &tok); code != http.StatusCreated {
			t.Fatalf("token of %s: got %d", role, code)
		}
		bearer[role] = tok.Token
	}
	call := func(who, method, path string, body any) (int, string) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			raw, _ := json.Marshal(body)
			rd = bytes.NewReader(raw)
		}
		req, _ := http.NewRequest(method, e.Admin.URL+path, rd)
		req.Header.Set("Authorization", "Bearer "+bearer[who])
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw)
	}
	for _, who := range []string{"viewer", "operator"} {
		if code, body := call(who, "POST", "/admin/v1/apps/"+a.ID+"/identity-secret", nil); code != http.StatusForbidden {
			t.Errorf("%s issues the secret: got %d %s, want 403", who, code, body)
		}
		if code, body := call(who, "PATCH", "/admin/v1/apps/"+a.ID, map[string]any{"identityVerification": true}); code != http.StatusForbidden {
			t.Errorf("%s turns verification on: got %d %s, want 403", who, code, body)
		}
	}
	for _, who := range []string{"viewer", "operator", "admin", "owner"} {
		for _, path := range []string{"/admin/v1/apps/" + a.ID, "/admin/v1/apps"} {
			code, body := call(who, "GET", path, nil)
			if code != http.StatusOK || strings.Contains(body, issued.IdentitySecret) || strings.Contains(body, `"identitySecret"`) ||
				!strings.Contains(body, `"hasIdentitySecret":true`) {
				t.Errorf("%s GET %s: got %d %s, want 200 with hasIdentitySecret and never the secret", who, path, code, body)
			}
		}
	}
	stored, err := e.Store.App(context.Background(), a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if opened, err := e.MasterKey.Open(stored.IdentitySecret); err != nil || string(opened) != issued.IdentitySecret {
		t.Errorf("stored secret: opened %q, %v; want the issued secret, sealed with the master key", opened, err)
	}
	if code, _ := call("admin", "POST", "/admin/v1/apps/"+a.ID+"/identity-secret", nil); code != http.StatusOK {
		t.Errorf("admin rotates: got %d, want 200", code)
	}
	if code, _ := call("admin", "PATCH", "/admin/v1/apps/"+a.ID, map[string]any{"identityVerification": true}); code != http.StatusOK {
		t.Errorf("admin turns verification on: got %d, want 200", code)
	}
	if code, _ := call("owner", "POST", "/admin/v1/apps/app_ghost/identity-secret", nil); code != http.StatusNotFound {
		t.Errorf("unknown app: got %d, want 404", code)
	}
}
