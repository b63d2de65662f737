package identity

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/heraldpush/herald"
)

// TestNeedAllows holds each need to DESIGN 11's roles: each role includes
// the ones before it, every app is needed for NeedEveryApp, and the
// owner's token has no account.
func TestNeedAllows(t *testing.T) {
	viewer := herald.Operator{ID: "op_v", Role: herald.RoleViewer}
	operator := herald.Operator{ID: "op_o", Role: herald.RoleOperator, Apps: []string{"app_1"}}
	scoped := herald.Operator{ID: "op_s", Role: herald.RoleAdmin, Apps: []string{"app_1"}}
	admin := herald.Operator{ID: "op_a", Role: herald.RoleAdmin}
	owner := herald.Owner()
	for _, c := range []struct {
		need Need
		who  herald.Operator
		want bool
	}{
		{NeedPublic, herald.Operator{}, true},
		{NeedSignedIn, viewer, true},
		{NeedAccount, viewer, true},
		{NeedAccount, owner, false},
		{NeedViewer, viewer, true},
		{NeedOperator, viewer, false},
		{NeedOperator, operator, true},
		{NeedAdmin, operator, false},
		{NeedAdmin, scoped, true},
		{NeedEveryApp, scoped, false},
		{NeedEveryApp, admin, true},
		{NeedEveryApp, owner, true},
		{Need(0), owner, false},
	} {
		if got := c.need.Allows(c.who); got != c.want {
			t.Errorf("need %d, %s %s (apps %v): got %t, want %t", c.need, c.who.ID, c.who.Role, c.who.Apps, got, c.want)
		}
	}
}

// TestClientAddr: the connection's address, or behind a trusted proxy the
// last X-Forwarded-For entry; an IPv6 client counts as its /64.
func TestClientAddr(t *testing.T) {
	for _, c := range []struct {
		remote, xff string
		trust       bool
		want        string
	}{
		{"192.0.2.1:5000", "", false, "192.0.2.1"},
		{"192.0.2.1:5000", "198.51.100.7", false, "192.0.2.1"},
		{"192.0.2.1:5000", "203.0.113.9, 198.51.100.7", true, "198.51.100.7"},
		{"[2001:db8:1:2:3:4:5:6]:443", "", false, "2001:db8:1:2::/64"},
		{"[::ffff:192.0.2.5]:443", "", false, "192.0.2.5"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = c.remote
		if c.xff != "" {
			r.Header.Set("X-Forwarded-For", c.xff)
		}
		if got := ClientAddr(r, c.trust); got != c.want {
			t.Errorf("ClientAddr(%s, XFF %q, trust %t): got %s, want %s", c.remote, c.xff, c.trust, got, c.want)
		}
	}
}

// TestCodeStep: the code of now and of one step either side is accepted,
// with its step; further off, or malformed, is not.
func TestCodeStep(t *testing.T) {
	const secret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP"
	now := time.Date(2026, 12, 2, 3, 0, 15, 0, time.UTC)
	at := uint64(now.Unix()) / 30
	for _, c := range []struct {
		off  int
		ok   bool
		step uint64
	}{{0, true, at}, {-1, true, at - 1}, {1, true, at + 1}, {2, false, 0}, {-2, false, 0}} {
		code, _ := totp.GenerateCode(secret, now.Add(time.Duration(c.off)*30*time.Second))
		step, ok, err := CodeStep(secret, code, now)
		if err != nil || ok != c.ok || step != c.step {
			t.Errorf("code %d steps off: got step %d, %t, %v; want %d, %t", c.off, step, ok, err, c.step, c.ok)
		}
	}
	if _, ok, err := CodeStep(secret, "12345", now); ok || err != nil {
		t.Errorf("a code of 5 digits: got %t, %v; want refused without error", ok, err)
	}
}

// TestForeignOrigin: a form may come from the admin URL's origin or the
// request's own host, compared ASCII-case-insensitively; anything else,
// "null" included, is foreign; no Origin is not.
func TestForeignOrigin(t *testing.T) {
	g := &Guard{AdminURL: "https://admin.example.test"}
	for _, c := range []struct {
		origin []string
		site   string
		want   bool
	}{
		{nil, "", false},
		{[]string{"null"}, "same-origin", false}, // Chromium under Referrer-Policy: no-referrer
		{[]string{"https://admin.example.test"}, "cross-site", true},
		{[]string{"https://admin.example.test"}, "same-site", true},
		{nil, "cross-site", true},
		{[]string{"https://admin.example.test"}, "", false},
		{[]string{"https://ADMIN.example.test"}, "", false},
		{[]string{"http://127.0.0.1:8081"}, "", false},
		{[]string{"https://evil.example"}, "", true},
		{[]string{"null"}, "", true},
		{[]string{"https://admin.example.test", "https://evil.example"}, "", true},
		{[]string{"https://\u212Aadmin.example.test"}, "", true},
	} {
		r := httptest.NewRequest("POST", "http://127.0.0.1:8081/login", nil)
		if c.origin != nil {
			r.Header["Origin"] = c.origin
		}
		if c.site != "" {
			r.Header.Set("Sec-Fetch-Site", c.site)
		}
		if got := g.ForeignOrigin(r); got != c.want {
			t.Errorf("Origin %q, Sec-Fetch-Site %q: foreign %t, want %t", c.origin, c.site, got, c.want)
		}
	}
	if g.CookieName("herald_session") != "__Host-herald_session" || (&Guard{AdminURL: "http://127.0.0.1"}).CookieName("herald_session") != "herald_session" {
		t.Error("cookie names: want __Host- prefixed on https only")
	}
}
