package admin_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/heraldpush/herald"
)

// TestUnknownPages: an unknown page answers a browser an HTML page and an
// API client the JSON error; paths under /admin/ are always the API's.
func TestUnknownPages(t *testing.T) {
	t.Parallel()
	e := newDashEnv(t)
	b := e.browser(t)
	cases := []struct {
		path, accept string
		html         bool
	}{
		{"/nothing", "text/html,application/xhtml+xml,*/*;q=0.8", true},
		{"/apps/x/nothing/here", "text/html", true},
		{"/nothing", "", false},
		{"/nothing", "application/json", false},
		{"/admin/v1/nothing", "text/html", false},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(http.MethodGet, b.base+c.path, nil)
		if c.accept != "" {
			req.Header.Set("Accept", c.accept)
		}
		resp, body := b.do(req)
		ct := resp.Header.Get("Content-Type")
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s (Accept %q): got %d, want 404", c.path, c.accept, resp.StatusCode)
		}
		if c.html && (!strings.HasPrefix(ct, "text/html") || !strings.Contains(body, "There is no such page") || resp.Header.Get("Content-Security-Policy") == "") {
			t.Errorf("GET %s (Accept %q): got %s %s, want the HTML page with the dashboard's headers", c.path, c.accept, ct, body)
		}
		if !c.html && (!strings.HasPrefix(ct, "application/json") || !strings.Contains(body, herald.ErrRouteNotFound.Code)) {
			t.Errorf("GET %s (Accept %q): got %s %s, want the JSON 404", c.path, c.accept, ct, body)
		}
	}
	// Signed in, the page keeps the navigation.
	b.login()
	req, _ := http.NewRequest(http.MethodGet, b.base+"/nothing", nil)
	req.Header.Set("Accept", "text/html")
	if _, body := b.do(req); !strings.Contains(body, "Sign out") {
		t.Errorf("signed in: got %s, want the navigation with Sign out", body)
	}
}
