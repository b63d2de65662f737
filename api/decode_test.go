package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/internal/testenv"
)

// padded returns a JSON object body of exactly size bytes, padded with
// spaces inside the object.
func padded(json string, size int) string {
	return json[:len(json)-1] + strings.Repeat(" ", size-len(json)) + "}"
}

const maxBody = 1 << 20

// TestBadBodiesChangeNothing sends every kind of refused body to every
// endpoint that writes, and checks the user and its devices afterwards.
func TestBadBodiesChangeNothing(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.BusinessApp(t)
	env.RegisterToken(t, app, "d1", "tok-1", "u1")
	env.RegisterToken(t, app, "d2", "tok-2", "u1")
	setConsent(t, env, app, "u1", day)

	endpoints := []struct {
		name   string
		method string
		path   string
		sdk    bool
		good   string // a body that would change state
	}{
		{"PatchMarketing", http.MethodPatch, marketingPath, false, `{"userId":"u1","state":{"marketing":false}}`},
		{"DeleteUser", http.MethodDelete, withdrawPath, false, `{"userId":"u1"}`},
		{"RegisterPushToken", http.MethodPost, pushTokenPath, true, `{"deviceId":"d1","token":"tok-new","platform":"ios","appSourceVersion":"1.0.0","userId":"u9"}`},
		{"SetUserID", http.MethodPost, setUserPath, true, `{"deviceId":"d1","userId":null}`},
		{"DeviceConsent", http.MethodPatch, consentPath, true, `{"deviceId":"d1","marketing":false}`},
		{"DeletePushToken", http.MethodDelete, pushTokenPath, true, `{"deviceId":"d1"}`},
	}
	bodies := []struct {
		name        string
		body        func(good string) string
		contentType string
	}{
		{"ErrTruncatedJSON", func(g string) string { return g[:len(g)-1] }, ""},
		{"ErrNotJSON", func(string) string { return "userId=u1" }, ""},
		{"ErrTrailingGarbage", func(g string) string { return g + "x" }, ""},
		{"ErrTrailingObject", func(g string) string { return g + "{}" }, ""},
		{"ErrArray", func(g string) string { return "[" + g + "]" }, ""},
		{"ErrString", func(g string) string { return `"` + strings.ReplaceAll(g, `"`, `\"`) + `"` }, ""},
		{"ErrEmpty", func(string) string { return "" }, ""},
		{"ErrWrongTypes", func(g string) string {
			for _, r := range [][2]string{{`"u1"`, `["u1"]`}, {`"d1"`, `{"id":"d1"}`}} {
				g = strings.ReplaceAll(g, r[0], r[1])
			}
			return g
		}, ""},
		{"ErrOverOneMiB", func(g string) string { return padded(g, maxBody+1) }, ""},
		{"ErrFarOverOneMiB", func(g string) string { return padded(g, 3*maxBody) }, ""},
		{"ErrTextPlain", func(g string) string { return g }, "text/plain"},
		{"ErrFormEncoded", func(g string) string { return g }, "application/x-www-form-urlencoded"},
		{"ErrJSONLookalike", func(g string) string { return g }, "application/jsonp"},
		{"ErrMalformedContentType", func(g string) string { return g }, "application/json; charset"},
	}
	for _, ep := range endpoints {
		t.Run(ep.name, func(t *testing.T) {
			t.Parallel()
			for _, b := range bodies {
				t.Run(b.name, func(t *testing.T) {
					h := map[string]string{"x-api-key": app.APIKey}
					if !ep.sdk {
						h["x-secret-key"] = app.SecretKey
					}
					if b.contentType != "" {
						h["Content-Type"] = b.contentType
					}
					res := env.Do(t, testenv.Request{Method: ep.method, URL: ep.path, Header: h, Body: b.body(ep.good)})
					testenv.WantError(t, res, ep.path, herald.ErrInvalidRequest)
				})
			}
		})
	}
	t.Cleanup(func() {
		u := env.User(t, app, "u1")
		if u.State != "registered" || u.Consent() != day {
			t.Errorf("user: got %s %+v, want registered %+v", u.State, u.Consent(), day)
		}
		var got []string
		for _, d := range u.Devices {
			got = append(got, d.DeviceID+"/"+d.TokenSuffix)
			if d.Consent() != day {
				t.Errorf("device %s consent: got %+v, want %+v", d.DeviceID, d.Consent(), day)
			}
		}
		if want := []string{"d1/tok-1", "d2/tok-2"}; !equal(got, want) {
			t.Errorf("devices: got %v, want %v", got, want)
		}
		if res := env.AdminDo(t, http.MethodGet, "/admin/v1/apps/"+app.ID+"/users/u9", nil); res.Status != http.StatusNotFound {
			t.Errorf("user u9 of a refused registration: got %d, want 404", res.Status)
		}
	})
}

func TestContentTypesAccepted(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.BusinessApp(t)
	env.RegisterToken(t, app, "d1", "tok-1", "u1")
	tests := []struct {
		name        string
		contentType string // "none" sends no header
	}{
		{"JSON", "application/json"},
		{"JSONCharset", "application/json; charset=utf-8"},
		{"JSONCharsetUpper", "Application/JSON; charset=UTF-8"},
		{"None", "none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := map[string]string{"x-api-key": app.APIKey, "x-secret-key": app.SecretKey}
			if tt.contentType != "none" {
				h["Content-Type"] = tt.contentType
			}
			res := env.Do(t, testenv.Request{Method: http.MethodPatch, URL: marketingPath, Header: h, NoContentType: true,
				Body: `{"userId":"u1","state":{"marketing":true}}`})
			if res.Status != http.StatusOK {
				t.Errorf("PATCH: got %d %s, want 200", res.Status, res.Body)
			}
			delete(h, "x-secret-key")
			res = env.Do(t, testenv.Request{Method: http.MethodPatch, URL: consentPath, Header: h, NoContentType: true,
				Body: `{"deviceId":"d1","marketingNight":false}`})
			if res.Status != http.StatusOK {
				t.Errorf("SDK consent: got %d %s, want 200", res.Status, res.Body)
			}
		})
	}
}

func TestBodySizeLimit(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.BusinessApp(t)
	env.RegisterToken(t, app, "d1", "tok-1", "u1")

	res := env.Server(t, app, http.MethodPatch, marketingPath, padded(`{"userId":"u1","state":{"marketing":true}}`, maxBody))
	if res.Status != http.StatusOK {
		t.Errorf("body of exactly 1 MiB: got %d %.200s, want 200", res.Status, res.Body)
	}
	res = env.Server(t, app, http.MethodPatch, marketingPath, padded(`{"userId":"u1","state":{"marketing":false}}`, maxBody+1))
	got := testenv.WantError(t, res, marketingPath, herald.ErrInvalidRequest)
	if len(got.Details) != 1 || got.Details[0].Field != "body" {
		t.Errorf("details: got %+v, want one on body", got.Details)
	}
	wantPair(t, env, app, "u1", day, 1)
}
