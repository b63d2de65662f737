package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/heraldpush/herald"
)

// TestMarketingCapSetting: marketingCap is shown on the app (both null by
// default), set and cleared by PATCH; a value that is not null or a whole
// number from 1 to 100 is refused with 400 naming the member, changing
// nothing.
func TestMarketingCapSetting(t *testing.T) {
	t.Parallel()
	e := start(t)
	a := e.NewApp(nil)
	type view struct {
		MarketingCap struct{ PerDay, PerWeek *int }
	}
	read := func() string {
		var v view
		if code := e.AdminJSON("GET", "/admin/v1/apps/"+a.ID, nil, &v); code != http.StatusOK {
			t.Fatalf("get app: %d", code)
		}
		show := func(p *int) string {
			if p == nil {
				return "null"
			}
			return fmt.Sprint(*p)
		}
		return show(v.MarketingCap.PerDay) + "/" + show(v.MarketingCap.PerWeek)
	}
	if got := read(); got != "null/null" {
		t.Fatalf("default: got %s, want null/null", got)
	}
	e.PatchApp(a, map[string]any{"marketingCap": map[string]any{"perDay": 3, "perWeek": 100}})
	if got := read(); got != "3/100" {
		t.Fatalf("after PATCH: got %s, want 3/100", got)
	}
	for _, bad := range []struct {
		body, field string
	}{
		{`{"marketingCap": {"perDay": 0}}`, "marketingCap.perDay"},
		{`{"marketingCap": {"perDay": 101}}`, "marketingCap.perDay"},
		{`{"marketingCap": {"perWeek": 1.5}}`, "marketingCap.perWeek"},
		{`{"marketingCap": {"perDay": "3"}}`, "marketingCap.perDay"},
		{`{"marketingCap": {"perWeek": true}}`, "marketingCap.perWeek"},
		{`{"marketingCap": {"perDay": -1}}`, "marketingCap.perDay"},
		{`{"marketingCap": {"perDay": 1e300}}`, "marketingCap.perDay"},
		{`{"marketingCap": {"perDay": 2, "perHour": 1}}`, "marketingCap.perHour"},
		{`{"marketingCap": 5}`, "marketingCap"},
		{`{"name": "renamed", "marketingCap": {"perDay": 0}}`, "marketingCap.perDay"},
	} {
		var body struct {
			Code    string
			Details []struct{ Field string }
		}
		code := e.AdminJSON("PATCH", "/admin/v1/apps/"+a.ID, []byte(bad.body), &body)
		if code != http.StatusBadRequest || body.Code != "ERR-AB-VAL-00" || len(body.Details) != 1 || body.Details[0].Field != bad.field {
			t.Errorf("PATCH %s: got %d %+v, want 400 ERR-AB-VAL-00 naming %s", bad.body, code, body, bad.field)
		}
		if got := read(); got != "3/100" {
			t.Errorf("PATCH %s changed the setting to %s", bad.body, got)
		}
	}
	e.PatchApp(a, map[string]any{"marketingCap": map[string]any{"perWeek": 7}})
	if got := read(); got != "null/7" {
		t.Errorf("PATCH perWeek alone: got %s, want null/7 (the object replaces the setting)", got)
	}
	e.PatchApp(a, map[string]any{"name": "other"})
	if got := read(); got != "null/7" {
		t.Errorf("PATCH without marketingCap: got %s, want it kept", got)
	}
	e.PatchApp(a, map[string]any{"marketingCap": nil})
	if got := read(); got != "null/null" {
		t.Errorf("PATCH marketingCap null: got %s, want null/null", got)
	}
}

// TestDashboardMarketingCap: the settings form shows the frequency cap
// and sets it, an empty field being no cap in its window; a value out of
// bounds is refused with the API's reason and changes nothing.
func TestDashboardMarketingCap(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	b.login()
	a := newDashApp(t, e, b)
	ctx := context.Background()
	_, body := b.get(a.path)
	wantIn(t, "app page", body, `name="marketingCap.perDay"`, `name="marketingCap.perWeek"`)
	settings := url.Values{"name": {"Capped"}, "tier": {"free"}, "timeZone": {"Asia/Seoul"}, "sendRatePerMinute": {"600000"},
		"marketingCap.perDay": {"2"}, "marketingCap.perWeek": {""}}
	b.submit(a.path, a.path+"/settings", settings)
	got, _ := e.db.App(ctx, a.app.ID)
	if got.MarketingCap.PerDay == nil || *got.MarketingCap.PerDay != 2 || got.MarketingCap.PerWeek != nil {
		t.Fatalf("after the form: got %s, want 2 a day and no weekly cap", got.MarketingCap)
	}
	_, body = b.get(a.path)
	wantIn(t, "app page", body, `name="marketingCap.perDay" type="number" min="1" max="100" step="1" value="2"`)
	for _, bad := range []string{"0", "101", "1.5", "many"} {
		settings.Set("marketingCap.perWeek", bad)
		settings.Set("csrf", b.csrf(a.path))
		resp, body := b.post(a.path+"/settings", settings)
		wantStatus(t, resp, body, http.StatusBadRequest)
		wantIn(t, "refused form "+bad, body, "marketingCap.perWeek", herald.ReasonMarketingCap)
	}
	if got, _ := e.db.App(ctx, a.app.ID); got.MarketingCap.String() != "2 marketing pushes a day" {
		t.Errorf("after refused forms: got %s, want 2 a day unchanged", got.MarketingCap)
	}
}
