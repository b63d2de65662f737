package api_test

import (
	"net/http"
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/internal/testenv"
)

var (
	off    = herald.Consent{}
	day    = herald.Consent{Marketing: true}
	allDay = herald.Consent{Marketing: true, MarketingNight: true}
)

// setConsent brings user to pair c through the Server API.
func setConsent(t *testing.T, env *testenv.Env, app testenv.App, user string, c herald.Consent) {
	t.Helper()
	res := env.SetMarketing(t, app, user, map[string]any{"marketing": c.Marketing, "marketingNight": c.MarketingNight})
	if res.Status != http.StatusOK {
		t.Fatalf("set consent %+v: got %d %s, want 200", c, res.Status, res.Body)
	}
}

// wantPair checks the user and every one of its devices hold c.
func wantPair(t *testing.T, env *testenv.Env, app testenv.App, user string, c herald.Consent, devices int) testenv.User {
	t.Helper()
	u := env.User(t, app, user)
	if u.State != "registered" {
		t.Errorf("state: got %q, want registered", u.State)
	}
	if u.Consent() != c {
		t.Errorf("user consent: got %+v, want %+v", u.Consent(), c)
	}
	if len(u.Devices) != devices {
		t.Fatalf("devices: got %d, want %d", len(u.Devices), devices)
	}
	for _, d := range u.Devices {
		if d.Consent() != c {
			t.Errorf("device %s consent: got %+v, want %+v", d.DeviceID, d.Consent(), c)
		}
	}
	return u
}

func TestPatchMarketingShapes(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.BusinessApp(t)
	tests := []struct {
		name  string
		from  herald.Consent
		state map[string]any
		want  herald.Consent
	}{
		{"ATrueFromOff", off, map[string]any{"marketing": true}, day},
		{"ATrueKeepsNightOn", allDay, map[string]any{"marketing": true}, allDay},
		{"ATrueKeepsNightOff", day, map[string]any{"marketing": true}, day},
		{"ATrueNightTrue", off, map[string]any{"marketing": true, "marketingNight": true}, allDay},
		{"ATrueNightFalse", allDay, map[string]any{"marketing": true, "marketingNight": false}, day},
		{"BFalseNightAbsentTurnsNightOff", allDay, map[string]any{"marketing": false}, off},
		{"BFalseNightFalse", allDay, map[string]any{"marketing": false, "marketingNight": false}, off},
		{"BFalseFromOff", off, map[string]any{"marketing": false}, off},
		{"CNightTrueWithMarketing", day, map[string]any{"marketingNight": true}, allDay},
		{"CNightFalse", allDay, map[string]any{"marketingNight": false}, day},
		{"CNightFalseWithoutMarketing", off, map[string]any{"marketingNight": false}, off},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			user := "user-" + tt.name
			env.RegisterToken(t, app, user+"-a", user+"-tok-a", user)
			env.RegisterToken(t, app, user+"-b", user+"-tok-b", user)
			setConsent(t, env, app, user, tt.from)

			res := env.SetMarketing(t, app, user, tt.state)
			if res.Status != http.StatusOK {
				t.Fatalf("status: got %d %s, want 200", res.Status, res.Body)
			}
			var got map[string]any
			res.Decode(t, &got)
			want := map[string]any{"marketing": tt.want.Marketing, "marketingNight": tt.want.MarketingNight}
			if len(got) != 2 || got["marketing"] != want["marketing"] || got["marketingNight"] != want["marketingNight"] {
				t.Errorf("answer: got %s, want exactly %v", res.Body, want)
			}
			wantPair(t, env, app, user, tt.want, 2)
		})
	}
}

func TestPatchMarketingInvalid(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.BusinessApp(t)
	const user = "u-invalid"
	env.RegisterToken(t, app, "d1", "tok-1", user)
	setConsent(t, env, app, user, day)
	tests := []struct {
		name      string
		body      any
		wantField string
	}{
		{"ErrBothAbsent", map[string]any{"userId": user, "state": map[string]any{}}, "state"},
		{"ErrOnlyUnknownField", map[string]any{"userId": user, "state": map[string]any{"push": true}}, "state"},
		{"ErrUnknownField", map[string]any{"userId": user, "state": map[string]any{"marketing": false, "sms": true}}, "state.sms"},
		{"ErrUnknownTopLevelField", map[string]any{"userId": user, "stat": map[string]any{"marketing": false}, "state": map[string]any{"marketing": false}}, "stat"},
		{"ErrFalseWithNightTrue", map[string]any{"userId": user, "state": map[string]any{"marketing": false, "marketingNight": true}}, "state.marketingNight"},
		{"ErrMarketingString", map[string]any{"userId": user, "state": map[string]any{"marketing": "true"}}, "state.marketing"},
		{"ErrMarketingNumber", map[string]any{"userId": user, "state": map[string]any{"marketing": 1}}, "state.marketing"},
		{"ErrMarketingNull", map[string]any{"userId": user, "state": map[string]any{"marketing": nil}}, "state.marketing"},
		{"ErrNightString", map[string]any{"userId": user, "state": map[string]any{"marketingNight": "false"}}, "state.marketingNight"},
		{"ErrNightNumber", map[string]any{"userId": user, "state": map[string]any{"marketing": true, "marketingNight": 0}}, "state.marketingNight"},
		{"ErrStateMissing", map[string]any{"userId": user}, "state"},
		{"ErrStateNull", map[string]any{"userId": user, "state": nil}, "state"},
		{"ErrStateString", map[string]any{"userId": user, "state": "marketing"}, "state"},
		{"ErrStateArray", map[string]any{"userId": user, "state": []any{true}}, "state"},
		{"ErrStateBool", map[string]any{"userId": user, "state": true}, "state"},
		{"ErrUserIDMissing", map[string]any{"state": map[string]any{"marketing": true}}, "userId"},
		{"ErrUserIDNull", map[string]any{"userId": nil, "state": map[string]any{"marketing": true}}, "userId"},
		{"ErrUserIDEmpty", map[string]any{"userId": "", "state": map[string]any{"marketing": true}}, "userId"},
		{"ErrUserIDFraction", `{"userId":1.5,"state":{"marketing":true}}`, "userId"},
		{"ErrUserIDExponent", `{"userId":1e3,"state":{"marketing":true}}`, "userId"},
		{"ErrUserIDBool", map[string]any{"userId": true, "state": map[string]any{"marketing": true}}, "userId"},
		{"ErrUserIDObject", map[string]any{"userId": map[string]any{}, "state": map[string]any{"marketing": true}}, "userId"},
		{"ErrBodyArray", `[{"userId":"u-invalid","state":{"marketing":true}}]`, "body"},
		{"ErrBodyNull", `null`, "body"},
		{"ErrBodyEmpty", ``, "body"},
		{"ErrTwoObjects", `{"userId":"u-invalid","state":{"marketing":false}}{}`, "body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := env.Server(t, app, http.MethodPatch, marketingPath, tt.body)
			got := testenv.WantError(t, res, marketingPath, herald.ErrInvalidRequest)
			found := false
			for _, d := range got.Details {
				found = found || d.Field == tt.wantField
			}
			if !found {
				t.Errorf("details: got %+v, want one naming %q", got.Details, tt.wantField)
			}
		})
	}
	t.Run("ErrReportsEveryProblem", func(t *testing.T) {
		t.Parallel()
		res := env.Server(t, app, http.MethodPatch, marketingPath, map[string]any{"userId": 1.5, "state": map[string]any{"marketing": "x", "marketingNight": 2}})
		got := testenv.WantError(t, res, marketingPath, herald.ErrInvalidRequest)
		if len(got.Details) != 3 {
			t.Errorf("details: got %+v, want 3 (userId, state.marketing, state.marketingNight)", got.Details)
		}
	})
	// None of the refused requests changed anything.
	wantPair(t, env, app, user, day, 1)
}

func TestPatchMarketingNightNeedsMarketing(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.BusinessApp(t)
	env.RegisterToken(t, app, "d1", "tok-1", "u1")

	// C true on a user whose marketing is false: 400, nothing changes.
	res := env.SetMarketing(t, app, "u1", map[string]any{"marketingNight": true})
	got := testenv.WantError(t, res, marketingPath, herald.ErrInvalidRequest)
	if len(got.Details) != 1 || got.Details[0].Field != "state.marketingNight" {
		t.Errorf("details: got %+v, want one on state.marketingNight", got.Details)
	}
	wantPair(t, env, app, "u1", off, 1)

	// C true once marketing is on: accepted.
	setConsent(t, env, app, "u1", day)
	if res := env.SetMarketing(t, app, "u1", map[string]any{"marketingNight": true}); res.Status != http.StatusOK {
		t.Fatalf("C true with marketing true: got %d %s, want 200", res.Status, res.Body)
	}
	wantPair(t, env, app, "u1", allDay, 1)
}

func TestPatchMarketingWritesEveryDevice(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.BusinessApp(t)
	env.RegisterToken(t, app, "d1", "tok-1", "u1")
	env.RegisterToken(t, app, "d2", "tok-2", "u1")
	env.RegisterToken(t, app, "d3", "tok-3", 1) // the same user given as a number
	env.RegisterToken(t, app, "other", "tok-other", "u2")
	env.RegisterToken(t, app, "loose", "tok-loose", nil)

	setConsent(t, env, app, "u1", allDay)
	wantPair(t, env, app, "u1", allDay, 2)
	wantPair(t, env, app, "1", off, 1)
	wantPair(t, env, app, "u2", off, 1)

	t.Run("LaterDeviceAdoptsPair", func(t *testing.T) {
		d := env.RegisterToken(t, app, "d4", "tok-4", "u1")
		if !d.Marketing || !d.MarketingNight {
			t.Errorf("register answer: got %+v, want the user's pair %+v", d, allDay)
		}
		wantPair(t, env, app, "u1", allDay, 3)
	})
	t.Run("DeviceMappedBySetUserIDAdoptsPair", func(t *testing.T) {
		res := env.SDK(t, app, http.MethodPost, "/api/sdk/v2/user", map[string]any{"deviceId": "loose", "userId": "u1"})
		if res.Status != http.StatusOK {
			t.Fatalf("setUserId: got %d %s, want 200", res.Status, res.Body)
		}
		var d testenv.DeviceAnswer
		res.Decode(t, &d)
		if !d.Marketing || !d.MarketingNight {
			t.Errorf("setUserId answer: got %+v, want the user's pair %+v", d, allDay)
		}
		wantPair(t, env, app, "u1", allDay, 4)
	})
	t.Run("DeviceOfUnsetUserKeepsItsPair", func(t *testing.T) {
		// u2's pair was never set through the Server API: a device keeps
		// what the SDK gave it.
		env.RegisterToken(t, app, "d5", "tok-5", nil)
		res := env.SDK(t, app, http.MethodPatch, "/api/sdk/v2/consent", map[string]any{"deviceId": "d5", "marketing": true})
		if res.Status != http.StatusOK {
			t.Fatalf("consent: got %d %s, want 200", res.Status, res.Body)
		}
		d := env.RegisterToken(t, app, "d5", "tok-5", "u2")
		if !d.Marketing || d.MarketingNight {
			t.Errorf("got %+v, want the device's own pair %+v", d, day)
		}
	})
}

func TestUserIDNumberAndStringAreOneUser(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.BusinessApp(t)
	env.RegisterToken(t, app, "d1", "tok-1", 123)
	env.RegisterToken(t, app, "d2", "tok-2", "123")

	if res := env.SetMarketing(t, app, 123, map[string]any{"marketing": true}); res.Status != http.StatusOK {
		t.Fatalf("PATCH userId 123: got %d %s, want 200", res.Status, res.Body)
	}
	wantPair(t, env, app, "123", day, 2)
	if res := env.SetMarketing(t, app, "123", map[string]any{"marketingNight": true}); res.Status != http.StatusOK {
		t.Fatalf(`PATCH userId "123": got %d %s, want 200`, res.Status, res.Body)
	}
	wantPair(t, env, app, "123", allDay, 2)

	for _, raw := range []string{`1.5`, `1e3`, `123.0`, `1.23e2`} {
		t.Run("Err"+raw, func(t *testing.T) {
			res := env.Server(t, app, http.MethodPatch, marketingPath, `{"userId":`+raw+`,"state":{"marketing":false}}`)
			testenv.WantError(t, res, marketingPath, herald.ErrInvalidRequest)
			res = env.Server(t, app, http.MethodDelete, withdrawPath, `{"userId":`+raw+`}`)
			testenv.WantError(t, res, withdrawPath, herald.ErrInvalidRequest)
		})
	}
	wantPair(t, env, app, "123", allDay, 2)

	if res := env.Withdraw(t, app, "123"); res.Status != http.StatusOK {
		t.Fatalf(`DELETE userId "123": got %d %s, want 200`, res.Status, res.Body)
	}
	testenv.WantError(t, env.Withdraw(t, app, 123), withdrawPath, herald.ErrWithdrawWithdrawn)
}

func TestPatchMarketingUserStates(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.BusinessApp(t)
	env.RegisterToken(t, app, "d1", "tok-1", "gone")
	if res := env.Withdraw(t, app, "gone"); res.Status != http.StatusOK {
		t.Fatalf("withdraw: got %d %s, want 200", res.Status, res.Body)
	}
	env.RegisterToken(t, app, "d2", "tok-2", nil) // a device, no user
	other := env.BusinessApp(t)
	env.RegisterToken(t, other, "d1", "tok-1", "elsewhere")
	tests := []struct {
		name string
		user any
		want *herald.Error
	}{
		{"ErrWithdrawn", "gone", herald.ErrMarketingWithdrawn},
		{"ErrNeverRegistered", "nobody", herald.ErrMarketingNoUser},
		{"ErrNeverRegisteredNumber", 404, herald.ErrMarketingNoUser},
		{"ErrUserOfAnotherApp", "elsewhere", herald.ErrMarketingNoUser},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := env.SetMarketing(t, app, tt.user, map[string]any{"marketing": true})
			testenv.WantError(t, res, marketingPath, tt.want)
		})
	}
	if msg := herald.ErrMarketingNoUser.Message; msg != "User not found." {
		t.Errorf("ERR-AB-ACS-33 message: got %q, want %q", msg, "User not found.")
	}
	if u := env.User(t, app, "gone"); u.State != "withdrawn" || u.Consent() != off || len(u.Devices) != 0 {
		t.Errorf("withdrawn user after PATCH: got %+v, want withdrawn, off, no devices", u)
	}
}

func TestWithdraw(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.BusinessApp(t)
	env.RegisterToken(t, app, "d1", "tok-1", "u1")
	env.RegisterToken(t, app, "d2", "tok-2", "u1")
	env.RegisterToken(t, app, "keep", "tok-keep", "u2")
	setConsent(t, env, app, "u1", allDay)

	res := env.Withdraw(t, app, "u1")
	if res.Status != http.StatusOK {
		t.Fatalf("status: got %d %s, want 200", res.Status, res.Body)
	}
	if got, want := string(res.Body), `{"message":"The withdrawal process has been executed."}`+"\n"; got != want {
		t.Errorf("body: got %q, want %q", got, want)
	}

	t.Run("UserWithdrawnWithoutDevices", func(t *testing.T) {
		u := env.User(t, app, "u1")
		if u.State != "withdrawn" || u.Consent() != off || len(u.Devices) != 0 {
			t.Errorf("got %+v, want state withdrawn, consent off, no devices", u)
		}
		for _, tok := range []string{"tok-1", "tok-2"} {
			if n := env.TokenCount(t, app, tok); n != 0 {
				t.Errorf("token %s: got %d devices holding it, want 0", tok, n)
			}
		}
		wantPair(t, env, app, "u2", off, 1)
	})
	t.Run("TokensFreeForOtherDevices", func(t *testing.T) {
		d := env.RegisterToken(t, app, "new-device", "tok-1", nil)
		if d.UserID != nil || d.Marketing || d.MarketingNight {
			t.Errorf("got %+v, want an unmapped device with the default pair", d)
		}
		if u := env.User(t, app, "u1"); len(u.Devices) != 0 {
			t.Errorf("withdrawn user devices: got %+v, want none", u.Devices)
		}
		// The old device ids start afresh too.
		d = env.RegisterToken(t, app, "d2", "tok-2b", nil)
		if d.UserID != nil || d.Marketing {
			t.Errorf("old device re-registered: got %+v, want unmapped with the default pair", d)
		}
	})
	t.Run("ErrRepeat", func(t *testing.T) {
		testenv.WantError(t, env.Withdraw(t, app, "u1"), withdrawPath, herald.ErrWithdrawWithdrawn)
	})
	t.Run("ErrPatchAfterWithdrawal", func(t *testing.T) {
		testenv.WantError(t, env.SetMarketing(t, app, "u1", map[string]any{"marketing": true}), marketingPath, herald.ErrMarketingWithdrawn)
	})
	t.Run("ErrUnknown", func(t *testing.T) {
		testenv.WantError(t, env.Withdraw(t, app, "nobody"), withdrawPath, herald.ErrWithdrawNoUser)
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for _, body := range []any{map[string]any{}, map[string]any{"userId": nil}, map[string]any{"userId": []any{"u2"}}, "u2"} {
			testenv.WantError(t, env.Server(t, app, http.MethodDelete, withdrawPath, body), withdrawPath, herald.ErrInvalidRequest)
		}
		wantPair(t, env, app, "u2", off, 1)
	})
}

func TestWithdrawnUserReRegisters(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		reRegister func(t *testing.T, env *testenv.Env, app testenv.App)
	}{
		{"PushToken", func(t *testing.T, env *testenv.Env, app testenv.App) {
			d := env.RegisterToken(t, app, "d9", "tok-9", "u1")
			if d.UserID == nil || *d.UserID != "u1" || d.Marketing || d.MarketingNight {
				t.Errorf("register answer: got %+v, want mapped to u1 with consent off", d)
			}
		}},
		{"SetUserID", func(t *testing.T, env *testenv.Env, app testenv.App) {
			env.RegisterToken(t, app, "d9", "tok-9", nil)
			res := env.SDK(t, app, http.MethodPost, "/api/sdk/v2/user", map[string]any{"deviceId": "d9", "userId": "u1"})
			if res.Status != http.StatusOK {
				t.Fatalf("setUserId: got %d %s, want 200", res.Status, res.Body)
			}
		}},
		{"PushTokenSameDeviceAndToken", func(t *testing.T, env *testenv.Env, app testenv.App) {
			env.RegisterToken(t, app, "d1", "tok-1", "u1")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := testenv.New(t)
			app := env.BusinessApp(t)
			env.RegisterToken(t, app, "d1", "tok-1", "u1")
			setConsent(t, env, app, "u1", allDay)
			if res := env.Withdraw(t, app, "u1"); res.Status != http.StatusOK {
				t.Fatalf("withdraw: got %d %s, want 200", res.Status, res.Body)
			}

			tt.reRegister(t, env, app)
			wantPair(t, env, app, "u1", off, 1)

			res := env.SetMarketing(t, app, "u1", map[string]any{"marketing": true})
			if res.Status != http.StatusOK {
				t.Fatalf("PATCH after re-registration: got %d %s, want 200", res.Status, res.Body)
			}
			wantPair(t, env, app, "u1", day, 1)
		})
	}
}
