package admin

import (
	"strings"
	"testing"
)

// TestEveryRouteHasANeed fails for a route of either table left without
// what it needs of the caller, and for an admin API route open to anyone.
func TestEveryRouteHasANeed(t *testing.T) {
	for _, r := range RouteNeeds() {
		switch {
		case r.Need == "":
			t.Errorf("%s has no need: give it the role it needs (identity.NeedViewer, identity.NeedOperator, identity.NeedAdmin, identity.NeedEveryApp, identity.NeedSignedIn, identity.NeedAccount or, on the dashboard, identity.NeedPublic)", r.Pattern)
		case !r.Dashboard && r.Need == "public":
			t.Errorf("%s: an admin API route cannot be public", r.Pattern)
		case r.Dashboard && r.Need == "public" && !publicPage(r.Pattern):
			t.Errorf("%s is public: only sign-in pages and static files may be", r.Pattern)
		}
	}
}

// publicPage reports whether a dashboard pattern may be served without
// signing in: the sign-in pages (password, TOTP code, setup link, single sign-on) and the
// style sheet and script.
func publicPage(pattern string) bool {
	_, path, _ := strings.Cut(pattern, " ")
	for _, p := range []string{"/login", "/login/totp", "/setup", "/oidc/", "/dashboard.css", "/dashboard.js"} {
		if path == p || strings.HasPrefix(path, p) && strings.HasSuffix(p, "/") {
			return true
		}
	}
	return false
}

// TestRouteNeedsFollowDesign holds the table to DESIGN 11's rules for the
// routes whose role matters most: user-level data needs an operator, app
// settings and credentials an admin, apps and operators an admin of every
// app.
func TestRouteNeedsFollowDesign(t *testing.T) {
	want := map[string]string{
		"GET /admin/v1/apps/{appId}/users":                          "operator",
		"GET /admin/v1/apps/{appId}/users/{userId}":                 "operator",
		"GET /admin/v1/apps/{appId}/users/{userId}/consent-history": "operator",
		"PATCH /admin/v1/apps/{appId}/users/{userId}/consent":       "operator",
		"GET /admin/v1/apps/{appId}/consent-due":                    "operator",
		"POST /admin/v1/apps/{appId}/consent-import":                "operator",
		"POST /admin/v1/apps/{appId}/tag-import":                    "operator",
		"POST /admin/v1/apps/{appId}/test-push":                     "operator",
		"PATCH /admin/v1/pushes/{pushId}":                           "operator",
		"POST /admin/v1/pushes/{pushId}/cancel":                     "operator",
		"GET /admin/v1/pushes/{pushId}":                             "viewer",
		"GET /admin/v1/apps":                                        "viewer",
		"PATCH /admin/v1/apps/{appId}":                              "admin",
		"POST /admin/v1/apps/{appId}/secret-key":                    "admin",
		"PUT /admin/v1/apps/{appId}/fcm-credentials":                "admin",
		"PUT /admin/v1/apps/{appId}/webhook":                        "admin",
		"POST /admin/v1/apps":                                       "everyApp",
		"DELETE /admin/v1/apps/{appId}":                             "everyApp",
		"POST /admin/v1/operators":                                  "everyApp",
		"GET /admin/v1/me":                                          "signedIn",
		"GET /apps/{appId}/users":                                   "operator",
		"GET /apps/{appId}/consent":                                 "operator",
		"GET /apps/{appId}/consent-due.csv":                         "operator",
		"GET /apps/{appId}/compose":                                 "operator",
		"POST /apps/{appId}/settings":                               "admin",
		"POST /apps/{appId}/fcm-credentials":                        "admin",
		"POST /apps":                                                "everyApp",
		"POST /apps/{appId}/delete":                                 "everyApp",
		"GET /operators":                                            "everyApp",
		"GET /login":                                                "public",
	}
	got := map[string]string{}
	for _, r := range RouteNeeds() {
		got[r.Pattern] = r.Need
	}
	for pattern, need := range want {
		if got[pattern] != need {
			t.Errorf("%s needs %q, want %q", pattern, got[pattern], need)
		}
	}
}
