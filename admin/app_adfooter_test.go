package admin_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/internal/testenv"
)

// adSettings reads an app's adSender and adOptOut through GET.
type adSettings struct {
	AdSender *struct {
		Name    string `json:"name"`
		Contact string `json:"contact"`
	} `json:"adSender"`
	AdOptOut *string `json:"adOptOut"`
}

func getAdSettings(t *testing.T, env *testenv.Env, id string) adSettings {
	t.Helper()
	res := env.AdminDo(t, http.MethodGet, "/admin/v1/apps/"+id, nil)
	if res.Status != http.StatusOK || !strings.Contains(string(res.Body), `"adSender":`) || !strings.Contains(string(res.Body), `"adOptOut":`) {
		t.Fatalf("get app: got %d %s, want 200 with adSender and adOptOut", res.Status, res.Body)
	}
	var a adSettings
	res.Decode(t, &a)
	return a
}

func (a adSettings) String() string {
	s := "adSender=null"
	if a.AdSender != nil {
		s = "adSender={" + a.AdSender.Name + "," + a.AdSender.Contact + "}"
	}
	if a.AdOptOut == nil {
		return s + " adOptOut=null"
	}
	return s + " adOptOut=" + *a.AdOptOut
}

// TestAppAdSettings: adSender and adOptOut are null until set, set on
// create and patch verbatim, cleared by null, left alone when absent.
func TestAppAdSettings(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	plain := env.CreateApp(t, map[string]any{"name": "plain"})
	if got := getAdSettings(t, env, plain.ID); got.AdSender != nil || got.AdOptOut != nil {
		t.Errorf("default: got %v, want both null", got)
	}
	res := env.AdminDo(t, http.MethodPost, "/admin/v1/apps", map[string]any{"name": "ads",
		"adSender": map[string]any{"name": "(주)헤럴드", "contact": "080-123-4567"}, "adOptOut": "수신거부: 마이 > 설정 > 알림"})
	var created struct {
		AppID string `json:"appId"`
		adSettings
	}
	res.Decode(t, &created)
	if res.Status != http.StatusCreated || created.AdSender == nil || created.AdSender.Name != "(주)헤럴드" ||
		created.AdSender.Contact != "080-123-4567" || created.AdOptOut == nil || *created.AdOptOut != "수신거부: 마이 > 설정 > 알림" {
		t.Fatalf("create: got %d %s, want 201 with the settings", res.Status, res.Body)
	}
	path := "/admin/v1/apps/" + created.AppID
	if got := getAdSettings(t, env, created.AppID).String(); got != "adSender={(주)헤럴드,080-123-4567} adOptOut=수신거부: 마이 > 설정 > 알림" {
		t.Errorf("stored: got %s", got)
	}
	steps := []struct {
		name, body, want string
	}{
		{"OtherMember", `{"tier":"basic"}`, "adSender={(주)헤럴드,080-123-4567} adOptOut=수신거부: 마이 > 설정 > 알림"},
		{"Replace", `{"adSender":{"name":" Herald Inc. ","contact":"help@herald.example"},"adOptOut":"Opt out:\nSettings"}`,
			"adSender={ Herald Inc. ,help@herald.example} adOptOut=Opt out:\nSettings"},
		{"ClearOptOut", `{"adOptOut":null}`, "adSender={ Herald Inc. ,help@herald.example} adOptOut=null"},
		{"ClearSender", `{"adSender":null}`, "adSender=null adOptOut=null"},
	}
	for _, s := range steps {
		if res := env.AdminDo(t, http.MethodPatch, path, []byte(s.body)); res.Status != http.StatusOK {
			t.Fatalf("%s: got %d %s, want 200", s.name, res.Status, res.Body)
		}
		if got := getAdSettings(t, env, created.AppID).String(); got != s.want {
			t.Errorf("%s: got %s, want %s", s.name, got, s.want)
		}
	}
}

// TestAppAdSettingsInvalid: each bad value is refused with 400 naming its
// path, on create and patch alike, and changes nothing.
func TestAppAdSettingsInvalid(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.CreateApp(t, map[string]any{"name": "ads", "adSender": map[string]any{"name": "Co", "contact": "1"}, "adOptOut": "off"})
	path := "/admin/v1/apps/" + app.ID
	long := func(n int) string { return `"` + strings.Repeat("가", n) + `"` }
	for _, tc := range []struct {
		name, body string
		want       []string
	}{
		{"ErrUnknownMember", `{"adSender":{"nmae":"Co","contact":"1"}}`, []string{"adSender.nmae"}},
		{"ErrEmptyName", `{"adSender":{"name":"","contact":"1"}}`, []string{"adSender.name"}},
		{"ErrBlankContact", `{"adSender":{"name":"Co","contact":"  "}}`, []string{"adSender.contact"}},
		{"ErrMissingContact", `{"adSender":{"name":"Co"}}`, []string{"adSender.contact"}},
		{"ErrNullName", `{"adSender":{"name":null,"contact":"1"}}`, []string{"adSender.name"}},
		{"ErrLongName", `{"adSender":{"name":` + long(herald.MaxAdSenderName+1) + `,"contact":"1"}}`, []string{"adSender.name"}},
		{"ErrLongContact", `{"adSender":{"name":"Co","contact":` + long(herald.MaxAdSenderContact+1) + `}}`, []string{"adSender.contact"}},
		{"ErrEmptyOptOut", `{"adOptOut":""}`, []string{"adOptOut"}},
		{"ErrLongOptOut", `{"adOptOut":` + long(herald.MaxAdOptOut+1) + `}`, []string{"adOptOut"}},
		{"ErrOptOutType", `{"adOptOut":5}`, []string{"adOptOut"}},
		{"ErrSenderType", `{"adSender":"Co 1"}`, []string{"adSender"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := testenv.WantError(t, env.AdminDo(t, http.MethodPatch, path, []byte(tc.body)), path, herald.ErrInvalidRequest)
			var fields []string
			for _, d := range got.Details {
				fields = append(fields, d.Field)
			}
			if strings.Join(fields, " ") != strings.Join(tc.want, " ") {
				t.Errorf("details: got %+v, want fields %v", got.Details, tc.want)
			}
			body := strings.Replace(tc.body, "{", `{"name":"x",`, 1)
			testenv.WantError(t, env.AdminDo(t, http.MethodPost, "/admin/v1/apps", []byte(body)), "/admin/v1/apps", herald.ErrInvalidRequest)
		})
	}
	// At the bounds: accepted.
	ok := `{"adSender":{"name":` + long(herald.MaxAdSenderName) + `,"contact":` + long(herald.MaxAdSenderContact) + `},"adOptOut":` + long(herald.MaxAdOptOut) + `}`
	if res := env.AdminDo(t, http.MethodPatch, path, []byte(ok)); res.Status != http.StatusOK {
		t.Errorf("at the bounds: got %d %s, want 200", res.Status, res.Body)
	}
	res := env.AdminDo(t, http.MethodGet, "/admin/v1/apps", nil)
	var list struct{ Apps []any }
	if res.Decode(t, &list); len(list.Apps) != 1 {
		t.Errorf("apps after refused creates: got %d, want 1", len(list.Apps))
	}
}
