package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/internal/testenv"
)

// identityApp is the admin view of an app's identity verification.
type identityApp struct {
	IdentityVerification, HasIdentitySecret bool
	IdentityRefusals                        int64
	IdentitySecret                          *string // never in an app's view
}

func (e *env) identityApp(a testenv.App) identityApp {
	e.T.Helper()
	var out identityApp
	if code := e.AdminJSON("GET", "/admin/v1/apps/"+a.ID, nil, &out); code != http.StatusOK {
		e.T.Fatalf("get app: got %d, want 200", code)
	}
	if out.IdentitySecret != nil {
		e.T.Errorf("app view: got identitySecret %q, want it shown only when issued", *out.IdentitySecret)
	}
	return out
}

// issueIdentitySecret issues (or rotates) the app's identity secret.
func (e *env) issueIdentitySecret(a testenv.App) string {
	e.T.Helper()
	var out struct{ IdentitySecret string }
	if code := e.AdminJSON("POST", "/admin/v1/apps/"+a.ID+"/identity-secret", nil, &out); code != http.StatusOK || out.IdentitySecret == "" {
		e.T.Fatalf("issue identity secret: got %d %q, want 200 with the secret", code, out.IdentitySecret)
	}
	return out.IdentitySecret
}

// sdk sends an SDK call and returns its status and error code.
func (e *env) sdk(a testenv.App, method, path string, body map[string]any) (int, string) {
	e.T.Helper()
	r := e.ServerDo(method, path, map[string]string{"x-api-key": a.APIKey}, body)
	var out struct{ Code string }
	_ = json.Unmarshal(r.Body, &out)
	return r.Status, out.Code
}

// userDevices returns the devices mapped to userID; nil for a user never
// registered.
func (e *env) userDevices(a testenv.App, userID string) []string {
	e.T.Helper()
	var u testenv.UserView
	switch code := e.AdminJSON("GET", "/admin/v1/apps/"+a.ID+"/users/"+userID, nil, &u); code {
	case http.StatusOK:
	case http.StatusNotFound:
		return nil
	default:
		e.T.Fatalf("get user %s: got %d", userID, code)
	}
	ids := []string{}
	for _, d := range u.Devices {
		ids = append(ids, d.DeviceID)
	}
	return ids
}

// TestIdentityVerificationOffByDefault: an app's SDK binds userIds and
// changes consent without any token, as the specification's SDK does.
func TestIdentityVerificationOffByDefault(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(nil)
	if got := e.identityApp(a); got.IdentityVerification || got.HasIdentitySecret || got.IdentityRefusals != 0 {
		t.Errorf("new app: got %+v, want verification off, no secret, no refusals", got)
	}
	for _, c := range []struct {
		method, path string
		body         map[string]any
	}{
		{"POST", "/api/sdk/v2/push-token", map[string]any{"deviceId": "d1", "token": "t1", "platform": "android", "appSourceVersion": "1.6.0", "userId": "alice"}},
		{"POST", "/api/sdk/v2/user", map[string]any{"deviceId": "d1", "userId": "bob"}},
		{"PATCH", "/api/sdk/v2/consent", map[string]any{"deviceId": "d1", "marketing": true}},
		{"PATCH", "/api/sdk/v2/tags", map[string]any{"deviceId": "d1", "tags": map[string]any{"plan": "gold"}}},
	} {
		if code, errCode := e.sdk(a, c.method, c.path, c.body); code != http.StatusOK {
			t.Errorf("%s %s without a token: got %d %s, want 200", c.method, c.path, code, errCode)
		}
	}
	if got := e.userDevices(a, "bob"); fmt.Sprint(got) != "[d1]" {
		t.Errorf("bob's devices: got %v, want [d1]", got)
	}
}

// TestIdentityVerification: with the setting on, every SDK call that
// binds a userId or changes a mapped device's consent needs the token of
// that userId under the app's identity secret; without it the call
// answers 401 ERR-AB-SDK-31, changes nothing and is counted. Anonymous
// calls, unmapping and events need none. A rotated secret's tokens keep
// verifying for 24 hours, then fail.
func TestIdentityVerification(t *testing.T) {
	t.Parallel()
	clock := &testenv.Clock{}
	e := start(t, testenv.Clocked(clock))
	a := e.NewApp(nil)
	// Turned on before the app's first SDK call: the SDK API trusts its
	// cached app for "off" during a second.
	if code := e.AdminJSON("PATCH", "/admin/v1/apps/"+a.ID, map[string]any{"identityVerification": true}, nil); code != http.StatusBadRequest {
		t.Errorf("turn on without a secret: got %d, want 400", code)
	}
	secret := e.issueIdentitySecret(a)
	e.PatchApp(a, map[string]any{"identityVerification": true})
	if got := e.identityApp(a); !got.IdentityVerification || !got.HasIdentitySecret {
		t.Fatalf("app: got %+v, want verification on with a secret", got)
	}
	alice, bob := herald.IdentityToken(secret, "alice"), herald.IdentityToken(secret, "bob")
	register := func(token any) map[string]any {
		b := map[string]any{"deviceId": "d1", "token": "t1", "platform": "android", "appSourceVersion": "1.6.0", "userId": "alice"}
		if token != nil {
			b["identityToken"] = token
		}
		return b
	}
	refused := 0
	wantRefused := func(what, method, path string, body map[string]any) {
		t.Helper()
		refused++
		if code, errCode := e.sdk(a, method, path, body); code != http.StatusUnauthorized || errCode != "ERR-AB-SDK-31" {
			t.Errorf("%s: got %d %s, want 401 ERR-AB-SDK-31", what, code, errCode)
		}
	}
	wantOK := func(what, method, path string, body map[string]any) {
		t.Helper()
		if code, errCode := e.sdk(a, method, path, body); code != http.StatusOK {
			t.Errorf("%s: got %d %s, want 200", what, code, errCode)
		}
	}

	t.Run("RegisterWithUserID", func(t *testing.T) {
		wantRefused("no token", "POST", "/api/sdk/v2/push-token", register(nil))
		wantRefused("not hex", "POST", "/api/sdk/v2/push-token", register("nope"))
		wantRefused("not a string", "POST", "/api/sdk/v2/push-token", register(42))
		wantRefused("wrong token", "POST", "/api/sdk/v2/push-token", register(strings.Repeat("0", 64)))
		wantRefused("bob's token", "POST", "/api/sdk/v2/push-token", register(bob))
		if got := e.userDevices(a, "alice"); got != nil {
			t.Fatalf("after refusals: alice registered with devices %v, want never registered", got)
		}
		wantOK("alice's token", "POST", "/api/sdk/v2/push-token", register(alice))
		wantOK("alice's token in capitals", "POST", "/api/sdk/v2/push-token", register(strings.ToUpper(alice)))
		if got := e.userDevices(a, "alice"); fmt.Sprint(got) != "[d1]" {
			t.Errorf("alice's devices: got %v, want [d1]", got)
		}
	})
	t.Run("NewTokenOnMappedDevice", func(t *testing.T) {
		// Without userId, a new token on alice's device would send her
		// pushes to whoever holds that token.
		refresh := func(fcmToken string, token any) map[string]any {
			b := map[string]any{"deviceId": "d1", "token": fcmToken, "platform": "android", "appSourceVersion": "1.6.0"}
			if token != nil {
				b["identityToken"] = token
			}
			return b
		}
		wantRefused("new token, no identity", "POST", "/api/sdk/v2/push-token", refresh("attacker-token", nil))
		wantRefused("new token, bob's identity", "POST", "/api/sdk/v2/push-token", refresh("attacker-token", bob))
		if u := e.UserView(a, "alice"); len(u.Devices) != 1 || u.Devices[0].TokenSuffix != "t1" {
			t.Errorf("alice's devices after refusals: got %+v, want d1 with token t1", u.Devices)
		}
		wantOK("same token, no identity", "POST", "/api/sdk/v2/push-token", refresh("t1", nil))
		wantOK("new token, alice's identity", "POST", "/api/sdk/v2/push-token", refresh("t1b", alice))
		if u := e.UserView(a, "alice"); len(u.Devices) != 1 || u.Devices[0].TokenSuffix != "t1b" {
			t.Errorf("alice's devices: got %+v, want d1 with token t1b", u.Devices)
		}
	})
	t.Run("Anonymous", func(t *testing.T) {
		wantOK("register without userId", "POST", "/api/sdk/v2/push-token",
			map[string]any{"deviceId": "d2", "token": "t2", "platform": "android", "appSourceVersion": "1.6.0"})
		wantOK("consent of an unmapped device", "PATCH", "/api/sdk/v2/consent", map[string]any{"deviceId": "d2", "marketing": true})
		wantOK("events", "POST", "/api/sdk/v2/events", map[string]any{"deviceId": "d2", "events": []map[string]any{{"pushId": "psh_none", "type": "received"}}})
	})
	t.Run("SetUserID", func(t *testing.T) {
		wantRefused("no token", "POST", "/api/sdk/v2/user", map[string]any{"deviceId": "d2", "userId": "bob"})
		wantRefused("alice's token for bob", "POST", "/api/sdk/v2/user", map[string]any{"deviceId": "d2", "userId": "bob", "identityToken": alice})
		wantRefused("taking alice's device", "POST", "/api/sdk/v2/user", map[string]any{"deviceId": "d1", "userId": "mallory"})
		if got := e.userDevices(a, "bob"); got != nil {
			t.Errorf("bob: got devices %v, want never registered", got)
		}
		if got := e.userDevices(a, "alice"); fmt.Sprint(got) != "[d1]" {
			t.Errorf("alice's devices: got %v, want [d1] still", got)
		}
		wantOK("bob's token", "POST", "/api/sdk/v2/user", map[string]any{"deviceId": "d2", "userId": "bob", "identityToken": bob})
		wantOK("unmapping", "POST", "/api/sdk/v2/user", map[string]any{"deviceId": "d2", "userId": nil})
		if got := e.userDevices(a, "bob"); fmt.Sprint(got) != "[]" {
			t.Errorf("bob's devices after unmapping: got %v, want none", got)
		}
	})
	t.Run("Consent", func(t *testing.T) {
		before := fmt.Sprint(e.consentHistory(a, "alice"))
		consent := func(token any) map[string]any {
			b := map[string]any{"deviceId": "d1", "marketing": true}
			if token != nil {
				b["identityToken"] = token
			}
			return b
		}
		wantRefused("no token", "PATCH", "/api/sdk/v2/consent", consent(nil))
		wantRefused("bob's token on alice's device", "PATCH", "/api/sdk/v2/consent", consent(bob))
		if got := fmt.Sprint(e.consentHistory(a, "alice")); got != before {
			t.Errorf("alice's consent trail after refusals:\n got %s\nwant %s", got, before)
		}
		if u := e.UserView(a, "alice"); u.Marketing {
			t.Errorf("alice: got marketing true after refusals, want false")
		}
		wantOK("alice's token", "PATCH", "/api/sdk/v2/consent", consent(alice))
		h := e.consentHistory(a, "alice")
		if last := h[len(h)-1]; last.Source != "sdk" || !last.Marketing.To {
			t.Errorf("alice's last change: got %v, want sdk marketing →true", last)
		}
	})
	t.Run("Tags", func(t *testing.T) {
		tags := func(token any) map[string]any {
			b := map[string]any{"deviceId": "d1", "tags": map[string]any{"plan": "gold"}}
			if token != nil {
				b["identityToken"] = token
			}
			return b
		}
		wantRefused("no token", "PATCH", "/api/sdk/v2/tags", tags(nil))
		wantRefused("bob's token on alice's device", "PATCH", "/api/sdk/v2/tags", tags(bob))
		var n int
		if err := e.QueryRow(`SELECT count(*) FROM user_tags WHERE app_id = ?`, a.ID).Scan(&n); err != nil || n != 0 {
			t.Errorf("tags after refusals: %d (%v), want none", n, err)
		}
		wantOK("alice's token", "PATCH", "/api/sdk/v2/tags", tags(alice))
	})
	t.Run("Rotate", func(t *testing.T) {
		fresh := e.issueIdentitySecret(a)
		if fresh == secret {
			t.Fatal("rotated secret: got the old one")
		}
		wantOK("old secret's token within 24 hours of the rotation", "POST", "/api/sdk/v2/user",
			map[string]any{"deviceId": "d1", "userId": "alice", "identityToken": alice})
		clock.Run(time.Now().Add(herald.IdentityRotationGrace + time.Minute))
		wantRefused("old secret's token 24 hours after the rotation", "POST", "/api/sdk/v2/user", map[string]any{"deviceId": "d1", "userId": "alice", "identityToken": alice})
		wantOK("new secret's token", "POST", "/api/sdk/v2/user",
			map[string]any{"deviceId": "d1", "userId": "alice", "identityToken": herald.IdentityToken(fresh, "alice")})
	})
	t.Run("Counted", func(t *testing.T) {
		if got := e.identityApp(a).IdentityRefusals; got != int64(refused) {
			t.Errorf("identityRefusals: got %d, want %d", got, refused)
		}
	})
	t.Run("Off", func(t *testing.T) {
		e.PatchApp(a, map[string]any{"identityVerification": false})
		wantOK("no token once off", "POST", "/api/sdk/v2/user", map[string]any{"deviceId": "d2", "userId": "carol"})
	})
}

// TestIdentityRefusalsCountedTogether: refusals arriving at once are each
// counted: the count is one UPDATE adding one, never a read then a write.
func TestIdentityRefusalsCountedTogether(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(nil)
	e.issueIdentitySecret(a)
	e.PatchApp(a, map[string]any{"identityVerification": true})
	const n = 40
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			body, _ := json.Marshal(map[string]any{"deviceId": fmt.Sprint("d", i), "token": fmt.Sprint("t", i),
				"platform": "android", "appSourceVersion": "1.6.0", "userId": "alice"})
			req, _ := http.NewRequest("POST", e.API.URL+"/api/sdk/v2/push-token", bytes.NewReader(body))
			req.Header.Set("x-api-key", a.APIKey)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Errorf("call %d: %v", i, err)
				return
			}
			resp.Body.Close()
			codes[i] = resp.StatusCode
		})
	}
	wg.Wait()
	for i, c := range codes {
		if c != http.StatusUnauthorized {
			t.Errorf("call %d: got %d, want 401", i, c)
		}
	}
	if got := e.identityApp(a).IdentityRefusals; got != n {
		t.Errorf("identityRefusals: got %d, want %d", got, n)
	}
	if got := e.userDevices(a, "alice"); got != nil {
		t.Errorf("alice: got devices %v, want never registered", got)
	}
}
