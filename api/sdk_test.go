package api_test

import (
	"net/http"
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/internal/testenv"
)

const (
	pushTokenPath = "/api/sdk/v2/push-token"
	setUserPath   = "/api/sdk/v2/user"
	consentPath   = "/api/sdk/v2/consent"
)

// deviceIDs returns the ids of the user's devices, as the admin API lists
// them.
func deviceIDs(t *testing.T, env *testenv.Env, app testenv.App, user string) []string {
	t.Helper()
	var ids []string
	for _, d := range env.User(t, app, user).Devices {
		ids = append(ids, d.DeviceID)
	}
	return ids
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestRegisterPushToken(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.CreateApp(t, map[string]any{"defaultConsent": map[string]any{"marketing": true}})

	t.Run("NewDeviceTakesAppDefault", func(t *testing.T) {
		d := env.RegisterToken(t, app, "d1", "token-0001", "u1")
		want := testenv.DeviceAnswer{DeviceID: "d1", UserID: new("u1"), Marketing: true}
		if d.DeviceID != want.DeviceID || d.UserID == nil || *d.UserID != "u1" || d.Marketing != want.Marketing || d.MarketingNight {
			t.Errorf("got %+v, want %+v", d, want)
		}
	})
	t.Run("UpsertReplacesToken", func(t *testing.T) {
		env.RegisterToken(t, app, "d1", "token-0002", "u1")
		u := env.User(t, app, "u1")
		if len(u.Devices) != 1 || u.Devices[0].TokenSuffix != herald.TokenSuffix("token-0002") {
			t.Errorf("devices: got %+v, want d1 with the new token", u.Devices)
		}
		if n := env.TokenCount(t, app, "token-0001"); n != 0 {
			t.Errorf("old token: got %d holders, want 0", n)
		}
	})
	t.Run("UpsertWithoutUserKeepsMapping", func(t *testing.T) {
		d := env.RegisterToken(t, app, "d1", "token-0002", nil)
		if d.UserID == nil || *d.UserID != "u1" {
			t.Errorf("userId: got %v, want u1 kept", d.UserID)
		}
	})
	t.Run("TokenMovesToNewDevice", func(t *testing.T) {
		env.RegisterToken(t, app, "d2", "token-0002", "u2")
		if n := env.TokenCount(t, app, "token-0002"); n != 1 {
			t.Errorf("token holders: got %d, want 1", n)
		}
		if ids := deviceIDs(t, env, app, "u1"); len(ids) != 0 {
			t.Errorf("u1 devices: got %v, want none (d1 lost its token)", ids)
		}
		if ids := deviceIDs(t, env, app, "u2"); !equal(ids, []string{"d2"}) {
			t.Errorf("u2 devices: got %v, want [d2]", ids)
		}
	})
	t.Run("UserMovesWithDevice", func(t *testing.T) {
		env.RegisterToken(t, app, "d2", "token-0002", "u3")
		if ids := deviceIDs(t, env, app, "u2"); len(ids) != 0 {
			t.Errorf("u2 devices: got %v, want none", ids)
		}
		if ids := deviceIDs(t, env, app, "u3"); !equal(ids, []string{"d2"}) {
			t.Errorf("u3 devices: got %v, want [d2]", ids)
		}
	})
	t.Run("SameTokenInAnotherAppIsSeparate", func(t *testing.T) {
		other := env.CreateApp(t, nil)
		env.RegisterToken(t, other, "d1", "token-0002", "u3")
		if ids := deviceIDs(t, env, app, "u3"); !equal(ids, []string{"d2"}) {
			t.Errorf("u3 devices in the first app: got %v, want [d2]", ids)
		}
	})
}

func TestRegisterPushTokenInvalid(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.CreateApp(t, nil)
	good := func(change map[string]any) map[string]any {
		b := map[string]any{"deviceId": "d1", "token": "tok", "platform": "ios", "appSourceVersion": "1.6.0"}
		for k, v := range change {
			if v == "-" {
				delete(b, k)
				continue
			}
			b[k] = v
		}
		return b
	}
	tests := []struct {
		name      string
		body      any
		wantField string
	}{
		{"ErrNoDeviceID", good(map[string]any{"deviceId": "-"}), "deviceId"},
		{"ErrEmptyDeviceID", good(map[string]any{"deviceId": ""}), "deviceId"},
		{"ErrNumberDeviceID", good(map[string]any{"deviceId": 5}), "deviceId"},
		{"ErrNoToken", good(map[string]any{"token": "-"}), "token"},
		{"ErrTokenNotString", good(map[string]any{"token": true}), "token"},
		{"ErrPlatform", good(map[string]any{"platform": "windows"}), "platform"},
		{"ErrNoVersion", good(map[string]any{"appSourceVersion": "-"}), "appSourceVersion"},
		{"ErrVersion", good(map[string]any{"appSourceVersion": "1.6"}), "appSourceVersion"},
		{"ErrUserIDFraction", good(map[string]any{"userId": 1.5}), "userId"},
		{"ErrUserIDBool", good(map[string]any{"userId": false}), "userId"},
		{"ErrUserIDEmpty", good(map[string]any{"userId": ""}), "userId"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := testenv.WantError(t, env.SDK(t, app, http.MethodPost, pushTokenPath, tt.body), pushTokenPath, herald.ErrInvalidRequest)
			if len(got.Details) == 0 || got.Details[0].Field != tt.wantField {
				t.Errorf("details: got %+v, want the first on %q", got.Details, tt.wantField)
			}
		})
	}
}

func TestSetUserID(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.BusinessApp(t)
	env.RegisterToken(t, app, "d1", "tok-1", nil)
	setUser := func(t *testing.T, device string, user any) testenv.DeviceAnswer {
		t.Helper()
		res := env.SDK(t, app, http.MethodPost, setUserPath, map[string]any{"deviceId": device, "userId": user})
		if res.Status != http.StatusOK {
			t.Fatalf("setUserId(%v): got %d %s, want 200", user, res.Status, res.Body)
		}
		var d testenv.DeviceAnswer
		res.Decode(t, &d)
		return d
	}

	t.Run("Maps", func(t *testing.T) {
		d := setUser(t, "d1", 77)
		if d.UserID == nil || *d.UserID != "77" {
			t.Errorf("userId: got %v, want \"77\"", d.UserID)
		}
		if ids := deviceIDs(t, env, app, "77"); !equal(ids, []string{"d1"}) {
			t.Errorf("devices: got %v, want [d1]", ids)
		}
	})
	t.Run("NullUnmaps", func(t *testing.T) {
		d := setUser(t, "d1", nil)
		if d.UserID != nil {
			t.Errorf("userId: got %q, want null", *d.UserID)
		}
		u := env.User(t, app, "77")
		if u.State != "registered" || len(u.Devices) != 0 {
			t.Errorf("user: got %+v, want registered with no devices", u)
		}
		// The user stays known: the Server API still finds it.
		if res := env.SetMarketing(t, app, 77, map[string]any{"marketing": true}); res.Status != http.StatusOK {
			t.Errorf("PATCH unmapped user: got %d %s, want 200", res.Status, res.Body)
		}
	})
	t.Run("ErrUserIDAbsent", func(t *testing.T) {
		res := env.SDK(t, app, http.MethodPost, setUserPath, map[string]any{"deviceId": "d1"})
		testenv.WantError(t, res, setUserPath, herald.ErrInvalidRequest)
	})
	t.Run("ErrUserIDFraction", func(t *testing.T) {
		res := env.SDK(t, app, http.MethodPost, setUserPath, map[string]any{"deviceId": "d1", "userId": 2.5})
		testenv.WantError(t, res, setUserPath, herald.ErrInvalidRequest)
	})
	t.Run("ErrUnknownDevice", func(t *testing.T) {
		res := env.SDK(t, app, http.MethodPost, setUserPath, map[string]any{"deviceId": "ghost", "userId": "u1"})
		testenv.WantError(t, res, setUserPath, &herald.Error{Code: herald.ErrNotFound.Code, Status: http.StatusNotFound, Message: "Device not found."})
		if res := env.AdminDo(t, http.MethodGet, "/admin/v1/apps/"+app.ID+"/users/u1", nil); res.Status != http.StatusNotFound {
			t.Errorf("user of a refused call: got %d %s, want 404 (never registered)", res.Status, res.Body)
		}
	})
}

func TestDeviceConsent(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.BusinessApp(t)
	tests := []struct {
		name      string
		from      herald.Consent
		body      map[string]any
		want      herald.Consent
		wantField string // non-empty: the change is refused with 400
	}{
		{"ATrue", off, map[string]any{"marketing": true}, day, ""},
		{"ATrueKeepsNight", allDay, map[string]any{"marketing": true}, allDay, ""},
		{"ATrueNightTrue", off, map[string]any{"marketing": true, "marketingNight": true}, allDay, ""},
		{"BFalseTurnsNightOff", allDay, map[string]any{"marketing": false}, off, ""},
		{"CNightTrue", day, map[string]any{"marketingNight": true}, allDay, ""},
		{"CNightFalse", allDay, map[string]any{"marketingNight": false}, day, ""},
		{"ErrCNightTrueWithoutMarketing", off, map[string]any{"marketingNight": true}, off, "marketingNight"},
		{"ErrFalseWithNightTrue", day, map[string]any{"marketing": false, "marketingNight": true}, day, "marketingNight"},
		{"ErrNotBoolean", day, map[string]any{"marketing": "false"}, day, "marketing"},
		{"ErrBothAbsent", day, map[string]any{}, day, "body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			device := "dev-" + tt.name
			env.RegisterToken(t, app, device, "tok-"+tt.name, nil)
			set := func(body map[string]any) testenv.Response {
				b := map[string]any{"deviceId": device}
				for k, v := range body {
					b[k] = v
				}
				return env.SDK(t, app, http.MethodPatch, consentPath, b)
			}
			if res := set(map[string]any{"marketing": tt.from.Marketing, "marketingNight": tt.from.MarketingNight}); res.Status != http.StatusOK {
				t.Fatalf("setup: got %d %s, want 200", res.Status, res.Body)
			}
			res := set(tt.body)
			if tt.wantField != "" {
				got := testenv.WantError(t, res, consentPath, herald.ErrInvalidRequest)
				if len(got.Details) != 1 || got.Details[0].Field != tt.wantField {
					t.Errorf("details: got %+v, want one on %q", got.Details, tt.wantField)
				}
			} else {
				var got map[string]any
				res.Decode(t, &got)
				if res.Status != http.StatusOK || got["deviceId"] != device || got["marketing"] != tt.want.Marketing || got["marketingNight"] != tt.want.MarketingNight {
					t.Errorf("got %d %s, want 200 %+v", res.Status, res.Body, tt.want)
				}
			}
			// Reading back through registerPushToken (an upsert that keeps
			// the pair) shows the stored value.
			d := env.RegisterToken(t, app, device, "tok-"+tt.name, nil)
			if (herald.Consent{Marketing: d.Marketing, MarketingNight: d.MarketingNight}) != tt.want {
				t.Errorf("stored: got %+v, want %+v", d, tt.want)
			}
		})
	}
	t.Run("ErrUnknownDevice", func(t *testing.T) {
		t.Parallel()
		res := env.SDK(t, app, http.MethodPatch, consentPath, map[string]any{"deviceId": "ghost", "marketing": true})
		if res.Status != http.StatusNotFound {
			t.Errorf("got %d %s, want 404", res.Status, res.Body)
		}
	})
}

func TestDeletePushToken(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.BusinessApp(t)
	env.RegisterToken(t, app, "d1", "tok-1", "u1")
	env.RegisterToken(t, app, "d2", "tok-2", "u1")

	res := env.SDK(t, app, http.MethodDelete, pushTokenPath, map[string]any{"deviceId": "d1"})
	if res.Status != http.StatusOK {
		t.Fatalf("got %d %s, want 200", res.Status, res.Body)
	}
	if ids := deviceIDs(t, env, app, "u1"); !equal(ids, []string{"d2"}) {
		t.Errorf("devices: got %v, want [d2]", ids)
	}
	if n := env.TokenCount(t, app, "tok-1"); n != 0 {
		t.Errorf("token holders: got %d, want 0", n)
	}
	t.Run("ErrRepeat", func(t *testing.T) {
		res := env.SDK(t, app, http.MethodDelete, pushTokenPath, map[string]any{"deviceId": "d1"})
		if res.Status != http.StatusNotFound {
			t.Errorf("got %d %s, want 404", res.Status, res.Body)
		}
	})
	t.Run("ErrNoDeviceID", func(t *testing.T) {
		res := env.SDK(t, app, http.MethodDelete, pushTokenPath, map[string]any{})
		testenv.WantError(t, res, pushTokenPath, herald.ErrInvalidRequest)
	})
	t.Run("UserStaysRegistered", func(t *testing.T) {
		env.SDK(t, app, http.MethodDelete, pushTokenPath, map[string]any{"deviceId": "d2"})
		if res := env.SetMarketing(t, app, "u1", map[string]any{"marketing": true}); res.Status != http.StatusOK {
			t.Errorf("PATCH user without devices: got %d %s, want 200", res.Status, res.Body)
		}
	})
}

func TestReRegisterKeepsInAppOptOut(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.BusinessApp(t)
	env.RegisterToken(t, app, "d1", "tok-1", "alice")
	if res := env.SetMarketing(t, app, "alice", map[string]any{"marketing": true, "marketingNight": true}); res.Status != http.StatusOK {
		t.Fatalf("PATCH marketing: got %d", res.Status)
	}
	if res := env.SDK(t, app, http.MethodPatch, "/api/sdk/v2/consent", map[string]any{"deviceId": "d1", "marketing": false}); res.Status != http.StatusOK {
		t.Fatalf("opt out in the app: got %d", res.Status)
	}
	// A token refresh names the same user: the device keeps its opt-out.
	if d := env.RegisterToken(t, app, "d1", "tok-1b", "alice"); d.Marketing || d.MarketingNight {
		t.Fatalf("after a token refresh: got %+v, want the in-app opt-out kept", d)
	}
	// A device newly mapped to the user adopts the user's pair.
	if d := env.RegisterToken(t, app, "d2", "tok-2", "alice"); !d.Marketing || !d.MarketingNight {
		t.Fatalf("new device: got %+v, want the user's pair", d)
	}
}

func TestDeletePushTokenServerAPI(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app, other := env.BusinessApp(t), env.BusinessApp(t)
	env.RegisterToken(t, app, "d1", "tok-1", "alice")
	env.RegisterToken(t, other, "d1", "tok-1", "alice")
	const path = "/api/push-token/v2"
	res := env.Server(t, app, http.MethodDelete, path, map[string]any{"token": "tok-1"})
	if res.Status != http.StatusOK {
		t.Fatalf("delete: got %d %s, want 200", res.Status, res.Body)
	}
	if n := env.TokenCount(t, app, "tok-1"); n != 0 {
		t.Fatalf("token left: got %d devices, want 0", n)
	}
	if n := env.TokenCount(t, other, "tok-1"); n != 1 {
		t.Fatalf("the other app's token: got %d devices, want 1 (untouched)", n)
	}
	res = env.Server(t, app, http.MethodDelete, path, map[string]any{"token": "tok-1"})
	if res.Status != http.StatusNotFound {
		t.Fatalf("again: got %d, want 404", res.Status)
	}
	res = env.Server(t, app, http.MethodDelete, path, map[string]any{"token": ""})
	testenv.WantError(t, res, path, herald.ErrInvalidRequest)
	res = env.SDK(t, app, http.MethodDelete, path, map[string]any{"token": "tok-1"})
	testenv.WantError(t, res, path, herald.ErrNoSecretKey)
}
