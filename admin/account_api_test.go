package admin_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/heraldpush/herald/internal/testenv"
)

// TestMyTOTPAPI: with its own API token, an operator asks POST
// /admin/v1/me/totp for a secret and its otpauth URL, kept pending; a wrong
// code does not enrol it, the right one does (204), and a second issue is
// refused (the owner's token: TestMyTOTPOwner).
func TestMyTOTPAPI(t *testing.T) {
	t.Parallel()
	clk := &testenv.Clock{}
	now := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	clk.Freeze(now)
	e := start(t, testenv.Clocked(clk))
	id, token := e.newOperator("oh@example.com", "admin", nil)
	enrolled := func() bool {
		o, err := e.Store.Operator(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		return o.TOTP
	}

	res := e.as(token, http.MethodPost, "/admin/v1/me/totp", nil)
	var issued struct{ Secret, OtpauthURL string }
	res.Decode(t, &issued)
	if res.Status != http.StatusOK || issued.Secret == "" ||
		!strings.HasPrefix(issued.OtpauthURL, "otpauth://totp/Herald:oh@example.com?") || !strings.Contains(issued.OtpauthURL, "secret="+issued.Secret) {
		t.Fatalf("issue: got %d %s, want 200 with a secret and its otpauth URL", res.Status, res.Body)
	}
	if res := e.as(token, http.MethodPost, "/admin/v1/me/totp/confirm", map[string]any{"code": "000000"}); res.Status != http.StatusBadRequest || !strings.Contains(string(res.Body), `"code"`) {
		t.Errorf("confirm with a wrong code: got %d %s, want 400 naming code", res.Status, res.Body)
	}
	if enrolled() {
		t.Fatal("a wrong code enrolled TOTP")
	}
	code, _ := totp.GenerateCode(issued.Secret, now)
	if res := e.as(token, http.MethodPost, "/admin/v1/me/totp/confirm", map[string]any{"code": code}); res.Status != http.StatusNoContent {
		t.Fatalf("confirm: got %d %s, want 204", res.Status, res.Body)
	}
	if !enrolled() {
		t.Error("after confirming: TOTP not enrolled")
	}
	if res := e.as(token, http.MethodPost, "/admin/v1/me/totp", nil); res.Status != http.StatusBadRequest {
		t.Errorf("issue once enrolled: got %d %s, want 400", res.Status, res.Body)
	}
}
