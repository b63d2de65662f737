package admin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/admin"
	"github.com/heraldpush/herald/client"
	"github.com/heraldpush/herald/internal/testenv"
)

// principal is who walks the route tables: an operator with a role and
// apps (nil: every app), or the owner.
type principal struct {
	name  string
	owner bool
	role  string
	// scoped: the operator's apps are only app A.
	scoped bool
}

var principals = []principal{
	{name: "viewer", role: "viewer", scoped: true},
	{name: "operator", role: "operator"},
	{name: "scoped admin", role: "admin", scoped: true},
	{name: "admin", role: "admin"},
	{name: "owner", owner: true, role: "admin"},
}

// rank orders the roles and needs: a principal may call a route whose need
// ranks at most its role's.
var rank = map[string]int{"signedIn": 0, "viewer": 1, "operator": 2, "admin": 3}

// expect is what a principal should get from a route about app: "allowed",
// "403" or "404" (DESIGN 11: an app outside the operator's apps is absent,
// before the role is judged).
func (p principal) expect(need string, namesApp bool, app string, appA string) string {
	if namesApp && p.scoped && app != appA {
		return "404"
	}
	if need == "account" { // the owner's token has no account
		if p.name == "owner" {
			return "403"
		}
		return "allowed"
	}
	if need == "everyApp" {
		if p.role == "admin" && !p.scoped {
			return "allowed"
		}
		return "403"
	}
	if rank[p.role] >= rank[need] {
		return "allowed"
	}
	return "403"
}

// authzEnv is one Herald with two apps (A and B), each with a user, a
// scheduled push in a request group; a target operator with two API
// tokens; and the principal, signed in by API token and dashboard session.
type authzEnv struct {
	*env
	appA, appB      testenv.App
	push            map[string]string // app ID → its scheduled push
	segment         map[string]string // app ID → its segment
	target          string            // the operator the operator routes act on
	tokAPI, tokDash string            // the target's tokens, one per table's revoke route
	bearer          string            // the principal's Authorization
	cookie, csrf    string            // the principal's dashboard session
	hc              *http.Client
}

func newAuthzEnv(t *testing.T, p principal) *authzEnv {
	e := &authzEnv{env: start(t), push: map[string]string{}, segment: map[string]string{}}
	e.appA, e.appB = e.NewApp(map[string]any{"name": "App A"}), e.NewApp(map[string]any{"name": "App B"})
	loc, _ := time.LoadLocation(herald.DefaultTimeZone)
	at := time.Now().Add(72 * time.Hour).In(loc).Format("2006-01-02T15:04")
	for _, a := range []testenv.App{e.appA, e.appB} {
		e.Register(a, "tok-", "u1")
		res, err := a.Client.PushUsers(context.Background(), client.PushUsersRequest{UserIDs: []any{"u1"}, Title: "Later", Content: "c",
			Options: &client.Options{RequestGroupID: "group-1", ScheduleTime: at}})
		if err != nil {
			t.Fatalf("scheduled push of %s: %v", a.ID, err)
		}
		e.push[a.ID] = res.PushID
		var sg struct{ SegmentID string }
		if code := e.AdminJSON("POST", "/admin/v1/apps/"+a.ID+"/segments", map[string]any{"name": "s", "filter": map[string]any{"tag": "t", "exists": true}}, &sg); code != http.StatusCreated {
			t.Fatalf("segment of %s: got %d", a.ID, code)
		}
		e.segment[a.ID] = sg.SegmentID
	}
	e.target = e.addOperator(t, "target@example.com", "viewer", nil)
	e.tokAPI, _ = e.operatorToken(t, e.target)
	e.tokDash, _ = e.operatorToken(t, e.target)
	id := herald.OwnerID
	e.bearer = "Bearer " + testenv.AdminToken
	if !p.owner {
		var apps []string
		if p.scoped {
			apps = []string{e.appA.ID}
		}
		id = e.addOperator(t, strings.ReplaceAll(p.name, " ", "-")+"@example.com", p.role, apps)
		_, token := e.operatorToken(t, id)
		e.bearer = "Bearer " + token
	}
	var err error
	e.cookie, e.csrf, err = admin.SignInSession(context.Background(), e.Store, testenv.AdminToken, id, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	e.hc = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return e
}

// addOperator adds an operator through the admin API as the owner.
func (e *authzEnv) addOperator(t *testing.T, email, role string, apps []string) string {
	t.Helper()
	var op struct{ OperatorID, SetupURL string }
	if code := e.AdminJSON("POST", "/admin/v1/operators", map[string]any{"email": email, "name": email, "role": role, "apps": apps}, &op); code != http.StatusCreated {
		t.Fatalf("add operator %s: got %d", email, code)
	}
	return op.OperatorID
}

// operatorToken makes an API token for operator id as the owner.
func (e *authzEnv) operatorToken(t *testing.T, id string) (tokenID, token string) {
	t.Helper()
	var tok struct{ TokenID, Token string }
	if code := e.AdminJSON("POST", "/admin/v1/operators/"+id+"/tokens", map[string]any{"name": "t", "expiresInDays": 7}, &tok); code != http.StatusCreated {
		t.Fatalf("token of %s: got %d", id, code)
	}
	return tok.TokenID, tok.Token
}

// path fills a pattern's wildcards for a call about app.
func (e *authzEnv) path(r admin.RouteNeed, app string) string {
	_, p, _ := strings.Cut(r.Pattern, " ")
	tok := e.tokAPI
	if r.Dashboard {
		tok = e.tokDash
	}
	p = strings.NewReplacer("{appId}", app, "{pushId}", e.push[app], "{segmentId}", e.segment[app], "{userId}", "u1", "{requestGroupId}", "group-1",
		"{operatorId}", e.target, "{tokenId}", tok, "{$}", "").Replace(p)
	if strings.HasSuffix(p, "/users/export") { // the dashboard's export names its user in the query
		p += "?userId=u1&reason=audit"
	}
	return p
}

// call makes one request of a route as the principal and says what it
// got: "allowed", "403", "404", or what else went wrong.
func (e *authzEnv) call(t *testing.T, r admin.RouteNeed, path string) string {
	t.Helper()
	method, _, _ := strings.Cut(r.Pattern, " ")
	// A form carries only its CSRF token and a user, a JSON body is {}: enough to
	// pass the checks before the handler, and mostly refused by it.
	body, contentType := "", ""
	switch {
	case r.Dashboard && method == http.MethodPost:
		body, contentType = url.Values{"csrf": {e.csrf}, "userId": {"u1"}}.Encode(), "application/x-www-form-urlencoded"
	case !r.Dashboard && method != http.MethodGet && method != http.MethodDelete:
		body, contentType = "{}", "application/json"
	}
	req, err := http.NewRequest(method, e.Admin.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if r.Dashboard {
		req.AddCookie(&http.Cookie{Name: "herald_session", Value: e.cookie})
		req.Header.Set("Accept", "text/html")
	} else {
		req.Header.Set("Authorization", e.bearer)
	}
	res, err := e.hc.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
	n := len(raw)
	switch {
	case res.StatusCode == http.StatusUnauthorized:
		return fmt.Sprintf("401 %s", raw[:n])
	case r.Pattern == "POST /logout" && res.StatusCode == http.StatusSeeOther:
		return "allowed" // signed out, and sent to sign in again
	case r.Dashboard && res.StatusCode == http.StatusSeeOther && res.Header.Get("Location") == "/login":
		return "sent to sign in"
	case res.StatusCode == http.StatusForbidden:
		if !r.Dashboard {
			var eb struct{ Code string }
			if json.Unmarshal(raw[:n], &eb); eb.Code != herald.ErrForbidden.Code {
				return fmt.Sprintf("403 with %s", raw[:n])
			}
		}
		return "403"
	case res.StatusCode == http.StatusNotFound:
		return "404"
	}
	return "allowed"
}

// last runs the routes that delete what the others act on after them.
func last(pattern string) int {
	switch pattern {
	case "DELETE /admin/v1/apps/{appId}/segments/{segmentId}":
		return 1
	case "DELETE /admin/v1/apps/{appId}", "DELETE /admin/v1/operators/{operatorId}":
		return 2
	case "POST /logout":
		return 3
	}
	return 0
}

// TestRolesOnEveryRoute walks the whole route table, the admin API's and
// the dashboard's, as a viewer of app A, an operator of every app, an admin
// of app A, an admin of every app and the owner: each route about app A or
// B answers as DESIGN 11 says (allowed, 403 for the role, 404 for an app
// outside the operator's apps, before the role), and what a principal was
// refused is unchanged in the store.
func TestRolesOnEveryRoute(t *testing.T) {
	routes := admin.RouteNeeds()
	slices.SortStableFunc(routes, func(a, b admin.RouteNeed) int { return last(a.Pattern) - last(b.Pattern) })
	for _, p := range principals {
		t.Run(p.name, func(t *testing.T) {
			e := newAuthzEnv(t, p)
			before := e.snapshot(t)
			for _, r := range routes {
				if r.Need == "public" {
					continue
				}
				_, pattern, _ := strings.Cut(r.Pattern, " ")
				namesApp := strings.Contains(pattern, "{appId}") || strings.Contains(pattern, "{pushId}")
				apps := []string{e.appA.ID}
				if namesApp {
					apps = append(apps, e.appB.ID)
				}
				for _, app := range apps {
					path := e.path(r, app)
					want := p.expect(r.Need, namesApp, app, e.appA.ID)
					if got := e.call(t, r, path); got != want {
						t.Errorf("%s %s (%s needs %s): got %s, want %s", strings.Fields(r.Pattern)[0], path, r.Pattern, r.Need, got, want)
					}
				}
			}
			after := e.snapshot(t)
			// What the principal was refused is unchanged: a viewer is
			// refused every change; an admin of app A, everything about B.
			switch p.name {
			case "viewer":
				if before.String() != after.String() {
					t.Errorf("a viewer's refused calls changed the store:\nbefore %s\nafter  %s", before, after)
				}
			case "scoped admin":
				if before.apps[e.appB.ID] != after.apps[e.appB.ID] || before.pushes[e.appB.ID] != after.pushes[e.appB.ID] || before.users[e.appB.ID] != after.users[e.appB.ID] {
					t.Errorf("calls about app B, outside the admin's apps, changed it:\nbefore %s\nafter  %s", before, after)
				}
				if before.operators != after.operators {
					t.Errorf("a scoped admin's refused operator calls changed them:\nbefore %s\nafter  %s", before.operators, after.operators)
				}
			}
		})
	}
}

// storeState is what the refused calls could have changed, each part as
// text.
type storeState struct {
	apps, pushes, users map[string]string // by app ID
	operators           string
}

func (s storeState) String() string {
	return fmt.Sprint(s.apps, s.pushes, s.users, s.operators)
}

func (e *authzEnv) snapshot(t *testing.T) storeState {
	t.Helper()
	ctx := context.Background()
	s := storeState{apps: map[string]string{}, pushes: map[string]string{}, users: map[string]string{}}
	for _, id := range []string{e.appA.ID, e.appB.ID} {
		a, err := e.Store.App(ctx, id)
		if err != nil {
			s.apps[id] = err.Error()
			continue
		}
		s.apps[id] = fmt.Sprintf("%s %s %x %d %s %v %v %x", a.Name, a.Tier, a.SecretHash, len(a.FCMCredentials), a.WebhookURL, a.Registered,
			a.IdentityVerification, a.IdentitySecret)
		p, err := e.Store.Push(ctx, e.push[id])
		s.pushes[id] = fmt.Sprintf("%s %s %d %v", p.Status, p.Content.Title, len(p.Edits), err)
		u, ds, err := e.Store.User(ctx, id, "u1")
		s.users[id] = fmt.Sprintf("%s %+v %d %v", u.State, u.Consent, len(ds), err)
	}
	ops, err := e.Store.Operators(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range ops {
		tokens, err := e.Store.OperatorTokens(ctx, o.ID)
		if err != nil {
			t.Fatal(err)
		}
		s.operators += fmt.Sprintf("%s %s %s %v %v %d; ", o.Email, o.Name, o.Role, o.Apps, o.Disabled, len(tokens))
	}
	return s
}
