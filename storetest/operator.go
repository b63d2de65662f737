package storetest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/identity"
)

var operatorTests = []test{
	{"CreateOperator/Operator", testOperatorRoundTrip},
	{"EmailUniqueAnyCase", testOperatorEmailUnique},
	{"UpdateOperator", testUpdateOperator},
	{"DisableEndsAccess", testDisableEndsAccess},
	{"DeleteOperator", testDeleteOperator},
	{"SetupLink", testSetupLink},
	{"TOTP", testOperatorTOTP},
	{"Tokens", testOperatorTokens},
}

// newOperator stores an operator with a setup link whose token hash is
// "link-" + email.
func newOperator(t *testing.T, b *bundle, email string, role herald.Role, apps ...string) herald.Operator {
	t.Helper()
	o := herald.Operator{ID: herald.NewID("op_", b.now), Email: email, Name: "N " + email, Role: role, CreatedAt: b.now}
	if len(apps) > 0 {
		o.Apps = apps
	}
	must(t, "CreateOperator", b.s.CreateOperator(b.ctx, o, identity.SetupLink{OperatorID: o.ID, TokenHash: "link-" + email, Expires: b.now.Add(24 * time.Hour)}))
	return o
}

func testOperatorRoundTrip(t *testing.T, b *bundle) {
	all := newOperator(t, b, "Zed@Example.com", herald.RoleAdmin)
	some := newOperator(t, b, "amy@example.com", herald.RoleViewer, "app_a", "app_b")
	got, err := b.s.Operator(b.ctx, some.ID)
	if err != nil || got.Email != some.Email || got.Role != herald.RoleViewer || !slices.Equal(got.Apps, some.Apps) ||
		got.Disabled || got.TOTP || !got.CreatedAt.Equal(b.now) || !got.LastSeenAt.IsZero() {
		t.Errorf("Operator: got %+v, %v; want %+v", got, err, some)
	}
	if got, _ := b.s.Operator(b.ctx, all.ID); got.Apps != nil {
		t.Errorf("an operator of every app read back with apps %v, want nil", got.Apps)
	}
	list, err := b.s.Operators(b.ctx)
	if err != nil || len(list) != 2 || list[0].ID != some.ID || list[1].ID != all.ID {
		t.Errorf("Operators: %+v, %v; want amy then Zed", list, err)
	}
	byEmail, sec, err := b.s.OperatorByEmail(b.ctx, "zed@EXAMPLE.com")
	if err != nil || byEmail.ID != all.ID || sec.PasswordHash != "" || sec.TOTP != nil {
		t.Errorf("OperatorByEmail in another case: %+v %+v %v", byEmail, sec, err)
	}
	if _, err := b.s.Operator(b.ctx, "op_none"); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("unknown operator: %v, want ErrNotFound", err)
	}
	if _, _, err := b.s.OperatorByEmail(b.ctx, "none@example.com"); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("unknown email: %v, want ErrNotFound", err)
	}
}

func testOperatorEmailUnique(t *testing.T, b *bundle) {
	newOperator(t, b, "dup@example.com", herald.RoleViewer)
	o := herald.Operator{ID: "op_second", Email: "DUP@example.com", Name: "x", Role: herald.RoleAdmin, CreatedAt: b.now}
	err := b.s.CreateOperator(b.ctx, o, identity.SetupLink{OperatorID: o.ID, TokenHash: "other", Expires: b.now.Add(time.Hour)})
	if !errors.Is(err, herald.ErrOperatorExists) {
		t.Errorf("second operator with the email in another case: %v, want ErrOperatorExists", err)
	}
	if list, _ := b.s.Operators(b.ctx); len(list) != 1 {
		t.Errorf("the refused operator was stored: %d operators", len(list))
	}
}

func testUpdateOperator(t *testing.T, b *bundle) {
	o := newOperator(t, b, "up@example.com", herald.RoleViewer, "app_a")
	name, role, every := "New", herald.RoleOperator, []string(nil)
	got, err := b.s.UpdateOperator(b.ctx, o.ID, identity.OperatorChange{Name: &name, Role: &role, Apps: &every})
	if err != nil || got.Name != name || got.Role != role || got.Apps != nil || got.Email != o.Email {
		t.Errorf("UpdateOperator: %+v, %v", got, err)
	}
	if read, _ := b.s.Operator(b.ctx, o.ID); read.Role != role || read.Apps != nil {
		t.Errorf("read after update: %+v", read)
	}
	if _, err := b.s.UpdateOperator(b.ctx, "op_none", identity.OperatorChange{Name: &name}); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("updating an unknown operator: %v, want ErrNotFound", err)
	}
}

func testDisableEndsAccess(t *testing.T, b *bundle) {
	o := newOperator(t, b, "dis@example.com", herald.RoleAdmin)
	must(t, "CreateOperatorToken", b.s.CreateOperatorToken(b.ctx, identity.OperatorToken{ID: "tok_1", OperatorID: o.ID, Name: "ci", Hash: "h1", CreatedAt: b.now, ExpiresAt: b.now.Add(time.Hour)}))
	must(t, "CreateSession", b.s.CreateSession(b.ctx, identity.Session{ID: "s1", OperatorID: o.ID, Started: b.now, LastSeen: b.now}))
	yes, no := true, false
	if _, err := b.s.UpdateOperator(b.ctx, o.ID, identity.OperatorChange{Disabled: &yes}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.s.UpdateOperator(b.ctx, o.ID, identity.OperatorChange{Disabled: &no}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.s.OperatorByToken(b.ctx, "h1"); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("a token after disabling and re-enabling: %v, want ErrNotFound (re-enabling restores none)", err)
	}
	if _, _, err := b.s.Session(b.ctx, "s1"); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("a session after disabling: %v, want ErrNotFound", err)
	}
}

func testDeleteOperator(t *testing.T, b *bundle) {
	o := newOperator(t, b, "del@example.com", herald.RoleAdmin)
	must(t, "CreateOperatorToken", b.s.CreateOperatorToken(b.ctx, identity.OperatorToken{ID: "tok_1", OperatorID: o.ID, Name: "ci", Hash: "h1", CreatedAt: b.now, ExpiresAt: b.now.Add(time.Hour)}))
	must(t, "CreateSession", b.s.CreateSession(b.ctx, identity.Session{ID: "s1", OperatorID: o.ID, Started: b.now, LastSeen: b.now}))
	must(t, "DeleteOperator", b.s.DeleteOperator(b.ctx, o.ID))
	if _, err := b.s.Operator(b.ctx, o.ID); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("deleted operator: %v", err)
	}
	if _, err := b.s.OperatorByToken(b.ctx, "h1"); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("deleted operator's token: %v", err)
	}
	if _, _, err := b.s.Session(b.ctx, "s1"); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("deleted operator's session: %v", err)
	}
	if _, err := b.s.SetupLink(b.ctx, "link-del@example.com"); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("deleted operator's link: %v", err)
	}
	if err := b.s.DeleteOperator(b.ctx, o.ID); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("deleting again: %v, want ErrNotFound", err)
	}
}

func testSetupLink(t *testing.T, b *bundle) {
	o := newOperator(t, b, "link@example.com", herald.RoleViewer)
	if got, err := b.s.SetupLink(b.ctx, "link-link@example.com"); err != nil || got.ID != o.ID {
		t.Errorf("SetupLink: %+v, %v", got, err)
	}
	if _, err := b.s.SetupLink(b.ctx, "nope"); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("unknown link: %v, want ErrNotFound", err)
	}
	if _, err := b.s.UseSetupLink(b.ctx, "link-link@example.com", "argon-hash"); err != nil {
		t.Fatal(err)
	}
	if _, sec, _ := b.s.OperatorByEmail(b.ctx, o.Email); sec.PasswordHash != "argon-hash" {
		t.Errorf("password hash after setup: %q", sec.PasswordHash)
	}
	if _, err := b.s.UseSetupLink(b.ctx, "link-link@example.com", "again"); !errors.Is(err, herald.ErrLinkGone) {
		t.Errorf("a used link: %v, want ErrLinkGone", err)
	}
	// A new link voids the old one; an expired one is gone too.
	must(t, "ReplaceSetupLink", b.s.ReplaceSetupLink(b.ctx, identity.SetupLink{OperatorID: o.ID, TokenHash: "l2", Expires: b.now.Add(time.Hour)}))
	must(t, "ReplaceSetupLink", b.s.ReplaceSetupLink(b.ctx, identity.SetupLink{OperatorID: o.ID, TokenHash: "l3", Expires: b.now.Add(time.Hour)}))
	if _, err := b.s.SetupLink(b.ctx, "l2"); !errors.Is(err, herald.ErrLinkGone) {
		t.Errorf("a replaced link: %v, want ErrLinkGone", err)
	}
	b.setNow(b.now.Add(time.Hour))
	if _, err := b.s.UseSetupLink(b.ctx, "l3", "late"); !errors.Is(err, herald.ErrLinkGone) {
		t.Errorf("an expired link: %v, want ErrLinkGone", err)
	}
	if _, sec, _ := b.s.OperatorByEmail(b.ctx, o.Email); sec.PasswordHash != "argon-hash" {
		t.Errorf("a refused link changed the password: %q", sec.PasswordHash)
	}
	if err := b.s.ReplaceSetupLink(b.ctx, identity.SetupLink{OperatorID: "op_none", TokenHash: "l4", Expires: b.now.Add(time.Hour)}); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("a link for an unknown operator: %v, want ErrNotFound", err)
	}
}

func testOperatorTOTP(t *testing.T, b *bundle) {
	o := newOperator(t, b, "totp@example.com", herald.RoleAdmin)
	must(t, "SetPendingTOTP", b.s.SetPendingTOTP(b.ctx, o.ID, []byte("sealed")))
	sec, err := b.s.OperatorSecrets(b.ctx, o.ID)
	if err != nil || string(sec.PendingTOTP) != "sealed" || sec.TOTP != nil {
		t.Errorf("pending: %+v, %v", sec, err)
	}
	if got, _ := b.s.Operator(b.ctx, o.ID); got.TOTP {
		t.Error("a pending secret counts as enrolled")
	}
	must(t, "ConfirmTOTP", b.s.ConfirmTOTP(b.ctx, o.ID))
	sec, _ = b.s.OperatorSecrets(b.ctx, o.ID)
	if string(sec.TOTP) != "sealed" || sec.PendingTOTP != nil {
		t.Errorf("confirmed: %+v", sec)
	}
	if got, _ := b.s.Operator(b.ctx, o.ID); !got.TOTP {
		t.Error("a confirmed secret is not enrolled")
	}
	if err := b.s.ConfirmTOTP(b.ctx, o.ID); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("confirming with nothing pending: %v, want ErrNotFound", err)
	}
	must(t, "ResetTOTP", b.s.ResetTOTP(b.ctx, o.ID))
	if got, _ := b.s.Operator(b.ctx, o.ID); got.TOTP {
		t.Error("still enrolled after a reset")
	}
}

func testOperatorTokens(t *testing.T, b *bundle) {
	o := newOperator(t, b, "tok@example.com", herald.RoleOperator, "app_a")
	tok := func(id, hash string, expires time.Time) identity.OperatorToken {
		return identity.OperatorToken{ID: id, OperatorID: o.ID, Name: "n" + id, Hash: hash, CreatedAt: b.now, ExpiresAt: expires}
	}
	must(t, "CreateOperatorToken", b.s.CreateOperatorToken(b.ctx, tok("tok_1", "h1", b.now.Add(time.Hour))))
	b.setNow(b.now.Add(time.Millisecond))
	must(t, "CreateOperatorToken", b.s.CreateOperatorToken(b.ctx, tok("tok_2", "h2", b.now.Add(2*time.Hour))))
	list, err := b.s.OperatorTokens(b.ctx, o.ID)
	if err != nil || len(list) != 2 || list[0].ID != "tok_2" || list[0].Hash != "" {
		t.Errorf("OperatorTokens: %+v, %v; want tok_2 then tok_1, without hashes", list, err)
	}
	got, err := b.s.OperatorByToken(b.ctx, "h1")
	if err != nil || got.ID != o.ID || !slices.Equal(got.Apps, []string{"app_a"}) || got.Role != herald.RoleOperator {
		t.Errorf("OperatorByToken: %+v, %v", got, err)
	}
	must(t, "DeleteOperatorToken", b.s.DeleteOperatorToken(b.ctx, o.ID, "tok_2"))
	if _, err := b.s.OperatorByToken(b.ctx, "h2"); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("a revoked token: %v, want ErrNotFound", err)
	}
	if err := b.s.DeleteOperatorToken(b.ctx, o.ID, "tok_2"); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("revoking again: %v, want ErrNotFound", err)
	}
	b.setNow(b.now.Add(time.Hour))
	if _, err := b.s.OperatorByToken(b.ctx, "h1"); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("an expired token: %v, want ErrNotFound", err)
	}
	if list, _ := b.s.OperatorTokens(b.ctx, o.ID); len(list) != 0 {
		t.Errorf("expired tokens listed: %+v", list)
	}
	if err := b.s.CreateOperatorToken(b.ctx, identity.OperatorToken{ID: "tok_3", OperatorID: "op_none", Name: "x", Hash: "h3", CreatedAt: b.now, ExpiresAt: b.now.Add(time.Hour)}); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("a token for an unknown operator: %v, want ErrNotFound", err)
	}
}
