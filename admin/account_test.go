package admin

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sqlite"
)

// TestMyTOTPAPI: POST /admin/v1/me/totp issues a secret and its otpauth
// URL to the operator the request is from, kept pending; a wrong code does
// not enrol it, the right one does (204), and a second issue is refused.
// (The handlers run with the operator in the request, as an operator's
// Bearer token puts it there.)
func TestMyTOTPAPI(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "herald.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	db.Now = func() time.Time { return now }
	mk, _ := herald.ParseMasterKey(herald.NewMasterKeyText())
	s := &server{Config: Config{Store: db, MasterKey: mk, Now: db.Now, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}}
	op := herald.Operator{ID: "op_1", Email: "oh@example.com", Name: "Oh", Role: herald.RoleAdmin, CreatedAt: now}
	if err := db.CreateOperator(ctx, op, herald.SetupLink{OperatorID: op.ID, TokenHash: "h", Expires: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	call := func(h http.HandlerFunc, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "/admin/v1/me/totp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		o, _ := db.Operator(ctx, op.ID)
		w := httptest.NewRecorder()
		h(w, withOperator(r, o))
		return w
	}

	w := call(s.postMyTOTP, "")
	var issued struct{ Secret, OtpauthURL string }
	if err := json.Unmarshal(w.Body.Bytes(), &issued); w.Code != http.StatusOK || err != nil || issued.Secret == "" ||
		!strings.HasPrefix(issued.OtpauthURL, "otpauth://totp/Herald:oh@example.com?") || !strings.Contains(issued.OtpauthURL, "secret="+issued.Secret) {
		t.Fatalf("issue: got %d %s, want 200 with a secret and its otpauth URL", w.Code, w.Body)
	}
	if w := call(s.postMyTOTPConfirm, `{"code":"000000"}`); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), `"code"`) {
		t.Errorf("confirm with a wrong code: got %d %s, want 400 naming code", w.Code, w.Body)
	}
	if o, _ := db.Operator(ctx, op.ID); o.TOTP {
		t.Fatal("a wrong code enrolled TOTP")
	}
	code, _ := totp.GenerateCode(issued.Secret, now)
	if w := call(s.postMyTOTPConfirm, `{"code":"`+code+`"}`); w.Code != http.StatusNoContent {
		t.Fatalf("confirm: got %d %s, want 204", w.Code, w.Body)
	}
	if o, _ := db.Operator(ctx, op.ID); !o.TOTP {
		t.Error("after confirming: TOTP not enrolled")
	}
	if w := call(s.postMyTOTP, ""); w.Code != http.StatusBadRequest {
		t.Errorf("issue once enrolled: got %d %s, want 400", w.Code, w.Body)
	}
}
