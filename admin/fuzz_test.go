package admin

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/heraldpush/herald"
)

// FuzzAppSettings fuzzes the body of POST and PATCH /admin/v1/apps: a
// refused body names each problem; an accepted one re-encodes to the same
// settings, makes an app that keeps every rule (the app-user feature only
// on business or higher), and is refused once it carries a member the API
// does not know. Its seeds run as ordinary tests.
func FuzzAppSettings(f *testing.F) {
	for _, s := range []string{
		`{"name":"Shop"}`,
		`{"name":" Shop ","tier":"business","appUserEnabled":true,"registered":false,"timeZone":"Europe/Paris","defaultConsent":{"marketing":true,"marketingNight":true}}`,
		`{"name":"Shop","tier":"basic","appUserEnabled":true}`,
		`{"name":"Shop","tier":"enterprise","appUserEnabled":true}`,
		`{"name":"Shop","tierr":"business"}`, `{"name":"Shop","Name":"x"}`, `{"name":"Shop","defaultConsent":{"marketting":true}}`,
		`{"name":"Shop","defaultConsent":{"marketingNight":true}}`, `{"name":"\ud800"}`, "{\"name\":\"a\xff\"}", `{"name":"\ud83d\ude00"}`,
		`{"name":"","tier":"gold","timeZone":"Local"}`, `{"name":5}`, `{"tier":null}`, `null`, `[]`, `{`, ``,
	} {
		f.Add([]byte(s))
	}
	now := time.Date(2025, 6, 11, 13, 4, 30, 0, time.UTC)
	s := &server{Config: Config{Now: func() time.Time { return now }}}
	f.Fuzz(func(t *testing.T, body []byte) {
		var p appSettings
		if err := decodeBody(body, &p); err != nil {
			wantDetails(t, body, err)
			return
		}
		if !utf8.Valid(body) {
			t.Fatalf("%q holds invalid UTF-8 and was accepted", body)
		}
		again, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		var q appSettings
		if err := decodeBody(again, &q); err != nil || !reflect.DeepEqual(p, q) {
			t.Fatalf("%q read as %+v; re-encoded as %s it read %+v (%v)", body, p, again, q, err)
		}
		withUnknown := append([]byte(`{"zzUnknown":1,`), again[1:]...)
		if err := decodeBody(withUnknown, &q); !hasDetail(err, herald.Detail{Field: "zzUnknown", Reason: "unknown field"}) {
			t.Fatalf("%s: got %v, want zzUnknown refused", withUnknown, err)
		}
		if a, _, details := s.newApp(p); len(details) == 0 {
			wantValidApp(t, body, a)
		}
		open := herald.App{Name: "open", Tier: herald.TierBusiness, AppUserEnabled: true, TimeZone: herald.DefaultTimeZone}
		if details := p.apply(&open); len(details) == 0 {
			wantValidApp(t, body, open)
		}
	})
}

// wantValidApp checks an app that settings were applied to without a
// problem.
func wantValidApp(t *testing.T, body []byte, a herald.App) {
	t.Helper()
	name := strings.TrimSpace(a.Name)
	_, zoneErr := time.LoadLocation(a.TimeZone)
	switch {
	case name == "" || name != a.Name || utf8.RuneCountInString(name) > 200 || !utf8.ValidString(name):
		t.Fatalf("%q accepted with name %q", body, a.Name)
	case !a.Tier.Valid():
		t.Fatalf("%q accepted with tier %q", body, a.Tier)
	case a.AppUserEnabled && !a.Tier.AtLeastBusiness():
		t.Fatalf("%q accepted with the app-user feature on the %s tier", body, a.Tier)
	case zoneErr != nil || a.TimeZone == "" || a.TimeZone == "Local":
		t.Fatalf("%q accepted with time zone %q", body, a.TimeZone)
	case a.DefaultConsent.MarketingNight && !a.DefaultConsent.Marketing:
		t.Fatalf("%q accepted with night consent without marketing", body)
	}
}

// wantDetails checks a refusal is ERR-AB-VAL-00 naming each problem.
func wantDetails(t *testing.T, body []byte, err error) {
	t.Helper()
	e := herald.AsError(err)
	if e == nil || e.Code != herald.ErrInvalidRequest.Code || len(e.Details) == 0 {
		t.Fatalf("%q: got %v, want %s with details", body, err, herald.ErrInvalidRequest.Code)
	}
	for _, d := range e.Details {
		if d.Field == "" || d.Reason == "" {
			t.Fatalf("%q: detail %+v without a field or a reason", body, d)
		}
	}
}

func hasDetail(err error, want herald.Detail) bool {
	e := herald.AsError(err)
	if e == nil {
		return false
	}
	for _, d := range e.Details {
		if d == want {
			return true
		}
	}
	return false
}
