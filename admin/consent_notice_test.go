package admin_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/internal/testenv"
)

// noticeSettings reads an app's consent notice settings through GET.
type noticeSettings struct {
	ConsentNotice struct {
		Enabled        bool
		Title, Content string
	} `json:"consentNotice"`
	Reconfirmation struct {
		Enabled        bool
		Title, Content string
		LeadDays       int `json:"leadDays"`
	} `json:"reconfirmation"`
}

func getNotices(t *testing.T, env *testenv.Env, id string) noticeSettings {
	t.Helper()
	res := env.AdminDo(t, http.MethodGet, "/admin/v1/apps/"+id, nil)
	var s noticeSettings
	res.Decode(t, &s)
	if res.Status != http.StatusOK {
		t.Fatalf("get app: got %d %s", res.Status, res.Body)
	}
	return s
}

// TestAppConsentNotices: both settings start off with DESIGN's default
// templates; a PATCH replaces the whole object, omitted members taking
// their defaults; unknown members, unknown placeholders, empty templates
// and lead days out of 1-60 are refused naming the path, changing nothing.
func TestAppConsentNotices(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.CreateApp(t, map[string]any{"name": "shop"})
	s := getNotices(t, env, app.ID)
	if s.ConsentNotice.Enabled || s.ConsentNotice.Title != herald.DefaultNoticeTitle || s.ConsentNotice.Content != herald.DefaultNoticeContent {
		t.Errorf("default consentNotice: got %+v", s.ConsentNotice)
	}
	if s.Reconfirmation.Enabled || s.Reconfirmation.LeadDays != 30 || s.Reconfirmation.Title != herald.DefaultReconfirmationTitle ||
		s.Reconfirmation.Content != herald.DefaultReconfirmationContent {
		t.Errorf("default reconfirmation: got %+v", s.Reconfirmation)
	}
	path := "/admin/v1/apps/" + app.ID
	res := env.AdminDo(t, http.MethodPatch, path, map[string]any{
		"consentNotice":  map[string]any{"enabled": true, "title": "{app}: {marketing}/{marketingNight} {date}"},
		"reconfirmation": map[string]any{"enabled": true, "leadDays": 60, "content": "{consentDate} {optOut}"},
	})
	if res.Status != http.StatusOK {
		t.Fatalf("patch: got %d %s, want 200", res.Status, res.Body)
	}
	s = getNotices(t, env, app.ID)
	if !s.ConsentNotice.Enabled || s.ConsentNotice.Title != "{app}: {marketing}/{marketingNight} {date}" || s.ConsentNotice.Content != herald.DefaultNoticeContent {
		t.Errorf("patched consentNotice: got %+v", s.ConsentNotice)
	}
	if !s.Reconfirmation.Enabled || s.Reconfirmation.LeadDays != 60 || s.Reconfirmation.Title != herald.DefaultReconfirmationTitle {
		t.Errorf("patched reconfirmation: got %+v", s.Reconfirmation)
	}
	// The whole object is replaced: enabled omitted is off again.
	if res := env.AdminDo(t, http.MethodPatch, path, map[string]any{"consentNotice": map[string]any{"title": "{app}"}}); res.Status != http.StatusOK {
		t.Fatalf("patch title only: got %d %s", res.Status, res.Body)
	}
	if s = getNotices(t, env, app.ID); s.ConsentNotice.Enabled || s.ConsentNotice.Title != "{app}" || !s.Reconfirmation.Enabled {
		t.Errorf("after title-only patch: got %+v", s)
	}
	for _, tc := range []struct{ name, body, field string }{
		{"ErrUnknownMember", `{"reconfirmation":{"leadDay":10}}`, "reconfirmation.leadDay"},
		{"ErrUnknownNoticeMember", `{"consentNotice":{"enable":true}}`, "consentNotice.enable"},
		{"ErrPlaceholder", `{"consentNotice":{"content":"{date} {consentDate}"}}`, "consentNotice.content"},
		{"ErrReconfirmationPlaceholder", `{"reconfirmation":{"title":"{app} {name}"}}`, "reconfirmation.title"},
		{"ErrEmptyTitle", `{"consentNotice":{"title":" "}}`, "consentNotice.title"},
		{"ErrLeadZero", `{"reconfirmation":{"leadDays":0}}`, "reconfirmation.leadDays"},
		{"ErrLeadAbove", `{"reconfirmation":{"leadDays":61}}`, "reconfirmation.leadDays"},
		{"ErrLeadFraction", `{"reconfirmation":{"leadDays":10.5}}`, "reconfirmation.leadDays"},
		{"ErrLeadString", `{"reconfirmation":{"leadDays":"10"}}`, "reconfirmation.leadDays"},
		{"ErrEnabledString", `{"consentNotice":{"enabled":"yes"}}`, "consentNotice.enabled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := testenv.WantError(t, env.AdminDo(t, http.MethodPatch, path, []byte(tc.body)), path, herald.ErrInvalidRequest)
			if len(got.Details) != 1 || got.Details[0].Field != tc.field {
				t.Errorf("details: got %+v, want one on %s", got.Details, tc.field)
			}
			if after := getNotices(t, env, app.ID); after != s {
				t.Errorf("refused patch changed the settings: got %+v, want %+v", after, s)
			}
		})
	}
}

// TestReconfirmationRunOff: the run of an app with re-confirmation off is
// refused 409 ERR-AB-CFG-01 naming reconfirmation.enabled, the setting that
// turns it on; an unknown app is 404.
func TestReconfirmationRunOff(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.CreateApp(t, map[string]any{"name": "shop"})
	path := "/admin/v1/apps/" + app.ID + "/reconfirmation/run"
	got := testenv.WantError(t, env.AdminDo(t, http.MethodPost, path, nil), path, herald.ErrReconfirmationOff)
	if len(got.Details) != 1 || got.Details[0].Field != "reconfirmation.enabled" ||
		!strings.Contains(got.Details[0].Reason, "PATCH /admin/v1/apps/{appId}") {
		t.Errorf("details: got %+v, want one naming reconfirmation.enabled and PATCH /admin/v1/apps/{appId}", got.Details)
	}
	missing := "/admin/v1/apps/app_nope/reconfirmation/run"
	if res := env.AdminDo(t, http.MethodPost, missing, nil); res.Status != http.StatusNotFound {
		t.Errorf("unknown app: got %d %s, want 404", res.Status, res.Body)
	}
}

// TestConsentImportValidation: a malformed entry is refused 400 naming
// it, and nothing of the request is imported; a well-formed request
// imports the registered users and names the skipped ones with reasons.
func TestConsentImportValidation(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	app := env.BusinessApp(t)
	env.RegisterToken(t, app, "d1", "tok-1", "u1")
	path := "/admin/v1/apps/" + app.ID + "/consent-import"
	good := `{"userId":"u1","marketing":true,"marketingNight":false,"at":"2024-01-02T09:00:00+09:00"}`
	many := make([]string, herald.MaxImport+1)
	for i := range many {
		many[i] = good
	}
	at := `,"at":"2024-01-02T09:00:00Z"`
	for _, tc := range []struct {
		name, body string
		fields     []string
	}{
		{"ErrNoUsers", `{}`, []string{"users"}},
		{"ErrEmpty", `{"users":[]}`, []string{"users"}},
		{"ErrTooMany", `{"users":[` + strings.Join(many, ",") + `]}`, []string{"users"}},
		{"ErrUsersNotArray", `{"users":{}}`, []string{"users"}},
		{"ErrUnknownTop", `{"users":[` + good + `],"user":1}`, []string{"user"}},
		{"ErrAtNotRFC3339", `{"users":[` + good + `,{"userId":"u2","marketing":true,"marketingNight":false,"at":"2024-01-02 09:00"}]}`, []string{"users[1].at"}},
		{"ErrAtMissing", `{"users":[{"userId":"u1","marketing":true,"marketingNight":false}]}`, []string{"users[0].at"}},
		{"ErrAtNumber", `{"users":[{"userId":"u1","marketing":true,"marketingNight":false,"at":5}]}`, []string{"users[0].at"}},
		// All four members are required: an entry missing marketing or
		// marketingNight (or giving null) is malformed, not "keep the
		// current value".
		{"ErrMarketingMissing", `{"users":[` + good + `,{"userId":"u1","marketingNight":false` + at + `}]}`, []string{"users[1].marketing"}},
		{"ErrNightMissing", `{"users":[` + good + `,` + good + `,` + good + `,{"userId":"u1","marketing":true` + at + `}]}`, []string{"users[3].marketingNight"}},
		{"ErrNightNull", `{"users":[{"userId":"u1","marketing":true,"marketingNight":null` + at + `}]}`, []string{"users[0].marketingNight"}},
		{"ErrBothMissing", `{"users":[` + good + `,` + good + `,{"userId":"u1"` + at + `}]}`, []string{"users[2].marketing", "users[2].marketingNight"}},
		{"ErrShapeNight", `{"users":[{"userId":"u1","marketing":false,"marketingNight":true` + at + `}]}`, []string{"users[0].marketingNight"}},
		{"ErrMarketingString", `{"users":[{"userId":"u1","marketing":"yes","marketingNight":false` + at + `}]}`, []string{"users[0].marketing"}},
		{"ErrUserIDMissing", `{"users":[{"marketing":true,"marketingNight":false` + at + `}]}`, []string{"users[0].userId"}},
		{"ErrUserIDFraction", `{"users":[{"userId":1.5,"marketing":true,"marketingNight":false` + at + `}]}`, []string{"users[0].userId"}},
		{"ErrUnknownMember", `{"users":[` + good + `,{"userId":"u1","marketing":true,"marketingNight":false` + at + `,"source":"x"}]}`, []string{"users[1].source"}},
		{"ErrEntryNotObject", `{"users":[` + good + `,3]}`, []string{"users[1]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := testenv.WantError(t, env.AdminDo(t, http.MethodPost, path, []byte(tc.body)), path, herald.ErrInvalidRequest)
			var fields []string
			for _, d := range got.Details {
				fields = append(fields, d.Field)
			}
			if !slices.Equal(fields, tc.fields) {
				t.Errorf("details: got %+v, want one on each of %v", got.Details, tc.fields)
			}
		})
	}
	res := env.AdminDo(t, http.MethodGet, "/admin/v1/apps/"+app.ID+"/users/u1/consent-history", nil)
	if strings.Contains(string(res.Body), `"import"`) {
		t.Fatalf("after refused imports: history %s, want no import", res.Body)
	}
	res = env.AdminDo(t, http.MethodPost, path, []byte(`{"users":[`+good+`,{"userId":"u9","marketing":true,"marketingNight":true,"at":"2024-01-02T09:00:00Z"}]}`))
	var out struct {
		Imported int
		Skipped  []herald.ImportSkip
	}
	res.Decode(t, &out)
	if res.Status != http.StatusOK || out.Imported != 1 || len(out.Skipped) != 1 || out.Skipped[0] != (herald.ImportSkip{UserID: "u9", Reason: herald.SkipUnknownUser}) {
		t.Errorf("import: got %d %s, want 200 with 1 imported and u9 skipped as unknown", res.Status, res.Body)
	}
	res = env.AdminDo(t, http.MethodGet, "/admin/v1/apps/"+app.ID+"/users/u1/consent-history", nil)
	if !strings.Contains(string(res.Body), `"at":"2024-01-02T00:00:00Z","source":"import"`) {
		t.Errorf("history: got %s, want the import at its original date", res.Body)
	}
}
