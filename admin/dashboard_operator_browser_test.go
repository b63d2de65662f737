package admin_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/heraldpush/herald/internal/testenv"
)

// TestDashboardOperatorsBrowser: in Chromium, the owner adds an operator
// of one app on the Operators page, is shown the setup link once, makes
// the operator an API token that works, and disables them, which ends it.
func TestDashboardOperatorsBrowser(t *testing.T) {
	t.Parallel()
	ctx := headless(t, 45*time.Second)
	e := start(t)
	a := e.NewAppWithoutFCM(map[string]any{"name": "Shop"})
	step(t, ctx, "sign in and open the Operators page",
		chromedp.Navigate(e.Admin.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), testenv.AdminToken),
		chromedp.Click(chromedp.CSS("#sign-in")),
		chromedp.WaitVisible(chromedp.CSS("#nav-operators")),
		chromedp.Click(chromedp.CSS("#nav-operators")),
		chromedp.WaitVisible(chromedp.CSS("#new-operator")),
	)
	step(t, ctx, "add an operator of Shop",
		chromedp.SendKeys(chromedp.CSS("#op-email"), "mina@example.com"),
		chromedp.SendKeys(chromedp.CSS("#op-name"), "Mina"),
		chromedp.SetValue(chromedp.CSS("#op-role"), "operator"),
		chromedp.Click(chromedp.CSS("#op-some")),
		chromedp.Click(chromedp.CSS("#op-app-"+a.ID)),
		chromedp.Click(chromedp.CSS("#add-operator")),
		chromedp.WaitVisible(chromedp.CSS("#shown-secret")),
	)
	if link := text(t, ctx, "#shown-secret"); !strings.HasPrefix(link, e.Admin.URL+"/setup?token=") {
		t.Fatalf("setup link shown: %q", link)
	}
	step(t, ctx, "make an API token",
		chromedp.SendKeys(chromedp.CSS("#token-name"), "ci"),
		chromedp.Click(chromedp.CSS("#create-token")),
		// The page the click leaves shows the setup link in #shown-secret
		// too; the tokens table is only on the page that answers it.
		chromedp.WaitVisible(chromedp.CSS("#tokens tr.token")),
	)
	token := text(t, ctx, "#shown-secret")
	screenshot(t, ctx, "dashboard-operator.png")
	if res := e.as(token, "GET", "/admin/v1/apps/"+a.ID+"/users", nil); res.Status != http.StatusOK {
		t.Fatalf("the token made in the browser: %d", res.Status)
	}
	step(t, ctx, "disable the operator",
		chromedp.Click(chromedp.CSS("#disable-operator")),
		chromedp.WaitVisible(chromedp.CSS("#enable-operator")),
	)
	if status := text(t, ctx, "#op-status"); status != "disabled" {
		t.Errorf("status after disabling: %q", status)
	}
	if res := e.as(token, "GET", "/admin/v1/me", nil); res.Status != http.StatusUnauthorized {
		t.Errorf("the disabled operator's token: %d, want 401", res.Status)
	}
}
