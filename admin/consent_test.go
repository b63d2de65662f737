package admin_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/internal/testenv"
)

// consentHistory is the admin answer of GET …/consent-history.
type consentHistory struct {
	UserID  string `json:"userId"`
	Changes []struct {
		Source         string  `json:"source"`
		DeviceID       *string `json:"deviceId"`
		Marketing      struct{ From, To bool }
		MarketingNight struct{ From, To bool }
	} `json:"changes"`
}

func TestAdminUserConsent(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.BusinessApp(t)
	env.RegisterToken(t, app, "d1", "t1", "u1")
	base := "/admin/v1/apps/" + app.ID + "/users/"

	t.Run("OK", func(t *testing.T) {
		res := env.AdminDo(t, http.MethodPatch, base+"u1/consent", map[string]any{"marketing": true, "marketingNight": true})
		if res.Status != http.StatusOK || strings.TrimSpace(string(res.Body)) != `{"marketing":true,"marketingNight":true,"userId":"u1"}` {
			t.Fatalf("got %d %s, want 200 with the pair", res.Status, res.Body)
		}
		if u := env.User(t, app, "u1"); u.Consent() != (herald.Consent{Marketing: true, MarketingNight: true}) || u.Devices[0].Consent() != u.Consent() {
			t.Errorf("user: got %+v, want the pair on the user and its device", u)
		}
		var h consentHistory
		res = env.AdminDo(t, http.MethodGet, base+"u1/consent-history", nil)
		res.Decode(t, &h)
		if res.Status != http.StatusOK || h.UserID != "u1" || len(h.Changes) != 2 || h.Changes[0].Source != "admin" ||
			h.Changes[0].DeviceID != nil || !h.Changes[0].MarketingNight.To || h.Changes[1].DeviceID == nil || *h.Changes[1].DeviceID != "d1" {
			t.Errorf("history: got %d %s, want the admin's change of u1 and of d1", res.Status, res.Body)
		}
	})
	t.Run("ErrShape", func(t *testing.T) {
		for _, body := range []map[string]any{{}, {"marketing": false, "marketingNight": true}, {"marketing": "yes"}, {"marketting": true}} {
			res := env.AdminDo(t, http.MethodPatch, base+"u1/consent", body)
			testenv.WantError(t, res, "/admin/v1/apps/"+app.ID+"/users/u1/consent", herald.ErrInvalidRequest)
		}
		// Night consent for a user without marketing consent: named as in
		// this body, not as in the Server API's state object.
		env.RegisterToken(t, app, "d3", "t3", "u3")
		res := env.AdminDo(t, http.MethodPatch, base+"u3/consent", map[string]any{"marketingNight": true})
		got := testenv.WantError(t, res, "/admin/v1/apps/"+app.ID+"/users/u3/consent", herald.ErrInvalidRequest)
		if len(got.Details) != 1 || got.Details[0].Field != "marketingNight" {
			t.Errorf("details: got %+v, want marketingNight", got.Details)
		}
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		res := env.AdminDo(t, http.MethodPatch, base+"nobody/consent", map[string]any{"marketing": true})
		testenv.WantError(t, res, "/admin/v1/apps/"+app.ID+"/users/nobody/consent", herald.ErrNotFound)
		res = env.AdminDo(t, http.MethodGet, base+"nobody/consent-history", nil)
		testenv.WantError(t, res, "/admin/v1/apps/"+app.ID+"/users/nobody/consent-history", herald.ErrNotFound)
	})
	t.Run("ErrWithdrawn", func(t *testing.T) {
		env.RegisterToken(t, app, "d2", "t2", "u2")
		env.Withdraw(t, app, "u2")
		res := env.AdminDo(t, http.MethodPatch, base+"u2/consent", map[string]any{"marketing": true})
		testenv.WantError(t, res, "/admin/v1/apps/"+app.ID+"/users/u2/consent", herald.ErrMarketingWithdrawn)
		var h consentHistory
		res = env.AdminDo(t, http.MethodGet, base+"u2/consent-history", nil)
		res.Decode(t, &h)
		if res.Status != http.StatusOK || len(h.Changes) != 1 || h.Changes[0].Source != "withdrawal" {
			t.Errorf("history of a withdrawn user: got %d %s, want its withdrawal", res.Status, res.Body)
		}
	})
}

func TestAdminConsentDue(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.BusinessApp(t)
	path := "/admin/v1/apps/" + app.ID + "/consent-due"
	t.Run("ErrQuery", func(t *testing.T) {
		for _, q := range []string{"?within=30", "?within=-1d", "?within=3661d", "?limit=0", "?limit=1001", "?cursor=junk"} {
			res := env.AdminDo(t, http.MethodGet, path+q, nil)
			testenv.WantError(t, res, path, herald.ErrInvalidRequest)
		}
	})
	t.Run("ErrUnknownApp", func(t *testing.T) {
		res := env.AdminDo(t, http.MethodGet, "/admin/v1/apps/app_nope/consent-due", nil)
		testenv.WantError(t, res, "/admin/v1/apps/app_nope/consent-due", herald.ErrNotFound)
	})
	t.Run("NobodyDueYet", func(t *testing.T) {
		env.RegisterToken(t, app, "d1", "t1", "u1")
		env.SetMarketing(t, app, "u1", map[string]any{"marketing": true})
		res := env.AdminDo(t, http.MethodGet, path+"?within=30d", nil)
		if res.Status != http.StatusOK || strings.TrimSpace(string(res.Body)) != `{"nextCursor":null,"users":[]}` {
			t.Errorf("got %d %s, want an empty page", res.Status, res.Body)
		}
		res = env.AdminDo(t, http.MethodGet, path+"?within=731d", nil)
		var page struct{ Users []struct{ UserID string } }
		res.Decode(t, &page)
		if res.Status != http.StatusOK || len(page.Users) != 1 || page.Users[0].UserID != "u1" {
			t.Errorf("within 731 days: got %d %s, want u1", res.Status, res.Body)
		}
	})
}
