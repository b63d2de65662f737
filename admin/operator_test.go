package admin_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/admin"
	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/internal/testenv"
)

// as sends an admin API request with bearer as the token.
func (e *env) as(bearer, method, path string, body any) testenv.Response {
	e.T.Helper()
	return testenv.Send(e.T, http.DefaultClient, e.Admin.URL, testenv.Request{Method: method, URL: path, Body: body,
		Header: map[string]string{"Authorization": "Bearer " + bearer}})
}

// newOperator adds an operator as the owner and gives it an API token.
func (e *env) newOperator(email, role string, apps any) (id, token string) {
	e.T.Helper()
	var op struct {
		OperatorID string
		SetupURL   string `json:"setupUrl"`
	}
	res := e.AdminDo(e.T, "POST", "/admin/v1/operators", map[string]any{"email": email, "name": "N " + email, "role": role, "apps": apps})
	if res.Status != http.StatusCreated {
		e.T.Fatalf("add %s: got %d %s", email, res.Status, res.Body)
	}
	res.Decode(e.T, &op)
	var tok struct{ Token string }
	res = e.AdminDo(e.T, "POST", "/admin/v1/operators/"+op.OperatorID+"/tokens", map[string]any{"name": "api", "expiresInDays": 30})
	if res.Status != http.StatusCreated {
		e.T.Fatalf("token of %s: got %d %s", email, res.Status, res.Body)
	}
	res.Decode(e.T, &tok)
	return op.OperatorID, tok.Token
}

func hashOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func TestOperatorCreate(t *testing.T) {
	e := start(t)
	a := e.NewAppWithoutFCM(nil)
	res := e.AdminDo(t, "POST", "/admin/v1/operators", map[string]any{"email": "Mina@Example.com", "name": " Mina ", "role": "operator", "apps": []string{a.ID}})
	if res.Status != http.StatusCreated {
		t.Fatalf("create: got %d %s", res.Status, res.Body)
	}
	var op struct {
		OperatorID, Email, Name, Role string
		Apps                          []string
		Disabled, TOTP                bool
		SetupURL                      string `json:"setupUrl"`
	}
	res.Decode(t, &op)
	if op.Email != "Mina@Example.com" || op.Name != "Mina" || op.Role != "operator" || len(op.Apps) != 1 || op.Apps[0] != a.ID || op.Disabled || op.TOTP {
		t.Errorf("created %+v", op)
	}
	// The setup link is on the admin listener (HERALD_ADMIN_URL's
	// default), and only its token's hash is stored.
	u, err := url.Parse(op.SetupURL)
	if err != nil || op.SetupURL != e.Admin.URL+"/setup?token="+u.Query().Get("token") || u.Query().Get("token") == "" {
		t.Fatalf("setupUrl %q, want %s/setup?token=…", op.SetupURL, e.Admin.URL)
	}
	token := u.Query().Get("token")
	linked, err := e.Store.SetupLink(context.Background(), hashOf(token))
	if err != nil || linked.ID != op.OperatorID {
		t.Errorf("setup link by the token's SHA-256: %v, %v", linked.ID, err)
	}
	if _, err := e.Store.SetupLink(context.Background(), token); err == nil {
		t.Error("the setup link's token itself is stored")
	}

	t.Run("ErrOperatorExists", func(t *testing.T) {
		res := e.AdminDo(t, "POST", "/admin/v1/operators", map[string]any{"email": "mina@example.COM", "name": "Other", "role": "viewer"})
		testenv.WantError(t, res, "/admin/v1/operators", herald.ErrOperatorExists)
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		for name, c := range map[string]struct {
			body  map[string]any
			field string
		}{
			"EmailMissing":  {map[string]any{"name": "N", "role": "viewer"}, "email"},
			"EmailBad":      {map[string]any{"email": "not an email", "name": "N", "role": "viewer"}, "email"},
			"EmailNamed":    {map[string]any{"email": "Mina <m@example.com>", "name": "N", "role": "viewer"}, "email"},
			"NameEmpty":     {map[string]any{"email": "n@example.com", "name": "  ", "role": "viewer"}, "name"},
			"NameLong":      {map[string]any{"email": "n@example.com", "name": strings.Repeat("n", 201), "role": "viewer"}, "name"},
			"RoleUnknown":   {map[string]any{"email": "n@example.com", "name": "N", "role": "owner"}, "role"},
			"RoleNotString": {map[string]any{"email": "n@example.com", "name": "N", "role": 1}, "role"},
			"AppUnknown":    {map[string]any{"email": "n@example.com", "name": "N", "role": "viewer", "apps": []string{a.ID, "app_none"}}, "apps[1]"},
			"AppsNotList":   {map[string]any{"email": "n@example.com", "name": "N", "role": "viewer", "apps": "all"}, "apps"},
			"Unknown":       {map[string]any{"email": "n@example.com", "name": "N", "role": "viewer", "disabled": true}, "disabled"},
		} {
			t.Run(name, func(t *testing.T) {
				res := e.AdminDo(t, "POST", "/admin/v1/operators", c.body)
				body := testenv.WantError(t, res, "/admin/v1/operators", herald.ErrInvalidRequest)
				if len(body.Details) == 0 || body.Details[0].Field != c.field {
					t.Errorf("details %+v, want one naming %s", body.Details, c.field)
				}
			})
		}
		res := e.AdminDo(t, "POST", "/admin/v1/operators", "{not json")
		testenv.WantError(t, res, "/admin/v1/operators", herald.ErrInvalidRequest)
		var list struct{ Operators []herald.Operator }
		e.AdminDo(t, "GET", "/admin/v1/operators", nil).Decode(t, &list)
		if len(list.Operators) != 1 {
			t.Errorf("refused creates left %d operators, want 1", len(list.Operators))
		}
	})
}

func TestOperatorTokens(t *testing.T) {
	e := start(t)
	a, b := e.NewAppWithoutFCM(nil), e.NewAppWithoutFCM(nil)
	id, token := e.newOperator("ops@example.com", "operator", []string{a.ID})
	if !strings.HasPrefix(token, "hop_") {
		t.Errorf("token %q, want the hop_ prefix", token)
	}
	if _, err := e.Store.OperatorByToken(context.Background(), hashOf(token)); err != nil {
		t.Errorf("the token is not stored by its SHA-256: %v", err)
	}
	var me struct {
		OperatorID, Role string
		Apps             []string
	}
	e.as(token, "GET", "/admin/v1/me", nil).Decode(t, &me)
	if me.OperatorID != id || me.Role != "operator" || len(me.Apps) != 1 {
		t.Errorf("/me: %+v", me)
	}
	var owner struct{ OperatorID, Role string }
	e.AdminDo(t, "GET", "/admin/v1/me", nil).Decode(t, &owner)
	if owner.OperatorID != herald.OwnerID || owner.Role != "admin" {
		t.Errorf("/me as the owner: %+v", owner)
	}

	// Lists show only the operator's apps; another app is absent.
	var apps struct{ Apps []struct{ AppID string } }
	e.as(token, "GET", "/admin/v1/apps", nil).Decode(t, &apps)
	if len(apps.Apps) != 1 || apps.Apps[0].AppID != a.ID {
		t.Errorf("apps listed to an operator of %s: %+v", a.ID, apps.Apps)
	}
	testenv.WantError(t, e.as(token, "GET", "/admin/v1/apps/"+b.ID, nil), "/admin/v1/apps/"+b.ID, herald.ErrNotFound)
	res := e.as(token, "PATCH", "/admin/v1/apps/"+a.ID, map[string]any{"name": "Renamed"})
	testenv.WantError(t, res, "/admin/v1/apps/"+a.ID, herald.Forbidden(herald.RoleAdmin))
	if got, err := e.Store.App(context.Background(), a.ID); err != nil || got.Name == "Renamed" {
		t.Errorf("a refused rename changed the app: %q, %v", got.Name, err)
	}

	t.Run("ChangeAppliesAtOnce", func(t *testing.T) {
		if res := e.AdminDo(t, "PATCH", "/admin/v1/operators/"+id, map[string]any{"role": "admin", "apps": nil}); res.Status != http.StatusOK {
			t.Fatalf("patch: %d %s", res.Status, res.Body)
		}
		if res := e.as(token, "GET", "/admin/v1/apps/"+b.ID, nil); res.Status != http.StatusOK {
			t.Errorf("an admin of every app reading app B: got %d", res.Status)
		}
		if res := e.as(token, "PATCH", "/admin/v1/apps/"+a.ID, map[string]any{"name": "Renamed"}); res.Status != http.StatusOK {
			t.Errorf("an admin changing app A: got %d %s", res.Status, res.Body)
		}
		e.AdminDo(t, "PATCH", "/admin/v1/operators/"+id, map[string]any{"role": "viewer", "apps": []string{b.ID}})
		testenv.WantError(t, e.as(token, "GET", "/admin/v1/apps/"+a.ID, nil), "/admin/v1/apps/"+a.ID, herald.ErrNotFound)
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		path := "/admin/v1/operators/" + id + "/tokens"
		for name, c := range map[string]struct {
			body  any
			field string
		}{
			"NameMissing":  {map[string]any{"expiresInDays": 3}, "name"},
			"NameLong":     {map[string]any{"name": strings.Repeat("n", 101), "expiresInDays": 3}, "name"},
			"DaysMissing":  {map[string]any{"name": "n"}, "expiresInDays"},
			"DaysZero":     {map[string]any{"name": "n", "expiresInDays": 0}, "expiresInDays"},
			"DaysTooMany":  {map[string]any{"name": "n", "expiresInDays": 366}, "expiresInDays"},
			"DaysFraction": {map[string]any{"name": "n", "expiresInDays": 1.5}, "expiresInDays"},
			"DaysString":   {map[string]any{"name": "n", "expiresInDays": "7"}, "expiresInDays"},
			"Unknown":      {map[string]any{"name": "n", "expiresInDays": 7, "scope": "all"}, "scope"},
		} {
			t.Run(name, func(t *testing.T) {
				body := testenv.WantError(t, e.AdminDo(t, "POST", path, c.body), path, herald.ErrInvalidRequest)
				if len(body.Details) == 0 || body.Details[0].Field != c.field {
					t.Errorf("details %+v, want one naming %s", body.Details, c.field)
				}
			})
		}
	})
	t.Run("Revoked", func(t *testing.T) {
		var list struct {
			Tokens []map[string]any
		}
		e.AdminDo(t, "GET", "/admin/v1/operators/"+id+"/tokens", nil).Decode(t, &list)
		if len(list.Tokens) != 1 || list.Tokens[0]["token"] != nil || list.Tokens[0]["tokenId"] == nil {
			t.Fatalf("tokens listed: %+v", list.Tokens)
		}
		tokenID := list.Tokens[0]["tokenId"].(string)
		if res := e.AdminDo(t, "DELETE", "/admin/v1/operators/"+id+"/tokens/"+tokenID, nil); res.Status != http.StatusNoContent {
			t.Fatalf("revoke: %d", res.Status)
		}
		testenv.WantError(t, e.as(token, "GET", "/admin/v1/me", nil), "/admin/v1/me", herald.ErrUnauthorized)
		testenv.WantError(t, e.AdminDo(t, "DELETE", "/admin/v1/operators/"+id+"/tokens/"+tokenID, nil),
			"/admin/v1/operators/"+id+"/tokens/"+tokenID, herald.ErrNotFound)
	})
	t.Run("Unknown", func(t *testing.T) {
		testenv.WantError(t, e.as("hop_NotAToken", "GET", "/admin/v1/me", nil), "/admin/v1/me", herald.ErrUnauthorized)
		testenv.WantError(t, e.as("NotEvenPrefixed", "GET", "/admin/v1/apps", nil), "/admin/v1/apps", herald.ErrUnauthorized)
	})
}

func TestOperatorTokenExpires(t *testing.T) {
	clk := &testenv.Clock{}
	clk.Freeze(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	e := start(t, testenv.Clocked(clk))
	_, token := e.newOperator("ops@example.com", "viewer", nil)
	if res := e.as(token, "GET", "/admin/v1/me", nil); res.Status != http.StatusOK {
		t.Fatalf("a fresh token: got %d", res.Status)
	}
	clk.Freeze(time.Date(2026, 12, 31, 12, 0, 0, 0, time.UTC)) // 30 days on
	testenv.WantError(t, e.as(token, "GET", "/admin/v1/me", nil), "/admin/v1/me", herald.ErrUnauthorized)
}

func TestOperatorDisableAndDelete(t *testing.T) {
	e := start(t)
	adminID, adminToken := e.newOperator("boss@example.com", "admin", nil)
	id, token := e.newOperator("ops@example.com", "operator", nil)
	ctx := context.Background()
	cookie, _, err := admin.SignInSession(ctx, e.Store, testenv.AdminToken, id, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	page := func() int {
		req, _ := http.NewRequest("GET", e.Admin.URL+"/", nil)
		req.AddCookie(&http.Cookie{Name: "herald_session", Value: cookie})
		hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		res, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if got := page(); got != http.StatusOK {
		t.Fatalf("the operator's dashboard session: got %d", got)
	}

	t.Run("NotYourself", func(t *testing.T) {
		path := "/admin/v1/operators/" + adminID
		body := testenv.WantError(t, e.as(adminToken, "PATCH", path, map[string]any{"disabled": true}), path, herald.ErrInvalidRequest)
		if len(body.Details) != 1 || body.Details[0].Field != "disabled" {
			t.Errorf("details %+v", body.Details)
		}
		body = testenv.WantError(t, e.as(adminToken, "DELETE", path, nil), path, herald.ErrInvalidRequest)
		if len(body.Details) != 1 || body.Details[0].Field != "operatorId" {
			t.Errorf("details %+v", body.Details)
		}
		if o, err := e.Store.Operator(ctx, adminID); err != nil || o.Disabled {
			t.Errorf("after the refusals: %+v, %v", o, err)
		}
	})
	t.Run("Disable", func(t *testing.T) {
		res := e.as(adminToken, "PATCH", "/admin/v1/operators/"+id, map[string]any{"disabled": true})
		if res.Status != http.StatusOK {
			t.Fatalf("disable: %d %s", res.Status, res.Body)
		}
		testenv.WantError(t, e.as(token, "GET", "/admin/v1/me", nil), "/admin/v1/me", herald.ErrUnauthorized)
		if got := page(); got != http.StatusSeeOther {
			t.Errorf("the disabled operator's session: got %d, want 303 to sign in", got)
		}
		e.as(adminToken, "PATCH", "/admin/v1/operators/"+id, map[string]any{"disabled": false})
		testenv.WantError(t, e.as(token, "GET", "/admin/v1/me", nil), "/admin/v1/me", herald.ErrUnauthorized) // re-enabling restores no token
	})
	t.Run("Delete", func(t *testing.T) {
		_, token := e.newOperator("gone@example.com", "viewer", nil)
		var gone struct{ OperatorID string }
		e.as(token, "GET", "/admin/v1/me", nil).Decode(t, &gone)
		if res := e.as(adminToken, "DELETE", "/admin/v1/operators/"+gone.OperatorID, nil); res.Status != http.StatusNoContent {
			t.Fatalf("delete: %d %s", res.Status, res.Body)
		}
		testenv.WantError(t, e.as(token, "GET", "/admin/v1/me", nil), "/admin/v1/me", herald.ErrUnauthorized)
		testenv.WantError(t, e.AdminDo(t, "GET", "/admin/v1/operators/"+gone.OperatorID, nil), "/admin/v1/operators/"+gone.OperatorID, herald.ErrNotFound)
	})
	t.Run("SetupLinkRenewed", func(t *testing.T) {
		var first, second struct {
			SetupURL string `json:"setupUrl"`
		}
		e.AdminDo(t, "POST", "/admin/v1/operators/"+id+"/setup-link", nil).Decode(t, &first)
		e.AdminDo(t, "POST", "/admin/v1/operators/"+id+"/setup-link", nil).Decode(t, &second)
		tokenOf := func(s string) string { u, _ := url.Parse(s); return u.Query().Get("token") }
		if _, err := e.Store.SetupLink(ctx, hashOf(tokenOf(first.SetupURL))); err == nil {
			t.Error("the old setup link still works")
		}
		if o, err := e.Store.SetupLink(ctx, hashOf(tokenOf(second.SetupURL))); err != nil || o.ID != id {
			t.Errorf("the new setup link: %v, %v", o.ID, err)
		}
	})
}

// TestViewerSeesNoUserRows: a viewer's push has null per-user rows, and
// its dashboard page shows none, where an operator's has them.
func TestViewerSeesNoUserRows(t *testing.T) {
	e := start(t)
	a := e.NewApp(nil)
	e.Register(a, "tok-", "u1")
	res, err := a.Client.PushMessages(context.Background(), client.PushMessagesRequest{Messages: []client.Message{
		{UserID: "u1", Title: "For u1", Content: "c"}, {UserID: "nobody", Title: "For nobody", Content: "c"}}})
	if err != nil {
		t.Fatal(err)
	}
	id := res.PushID
	e.WaitFinal(id, 30*time.Second)
	_, viewer := e.newOperator("v@example.com", "viewer", nil)
	_, operator := e.newOperator("o@example.com", "operator", nil)
	var asViewer, asOperator map[string]any
	e.as(viewer, "GET", "/admin/v1/pushes/"+id, nil).Decode(t, &asViewer)
	e.as(operator, "GET", "/admin/v1/pushes/"+id, nil).Decode(t, &asOperator)
	for _, k := range []string{"unreachableUsers", "failures", "messages"} {
		if v, ok := asViewer[k]; !ok || v != nil {
			t.Errorf("a viewer's %s: %v (present %v), want null", k, v, ok)
		}
	}
	if asOperator["messages"] == nil || asOperator["unreachableUsers"] == nil {
		t.Errorf("an operator's push lacks its per-user rows: %v", asOperator)
	}
	if asViewer["title"] != asOperator["title"] || asViewer["counts"] == nil {
		t.Errorf("a viewer's push: %v", asViewer)
	}
}
