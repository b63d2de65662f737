package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/identity"
)

var operatorIdentityTests = []test{
	{"BindOIDC", testBindOIDC},
	{"BindOIDCOnce", testBindOIDCOnce},
	{"EmailKeyASCII", testEmailKeyASCII},
	{"UseSetupLinkEndsAccess", testUseSetupLinkEndsAccess},
	{"UseSetupLinkOnce", testUseSetupLinkOnce},
	{"DisableVoidsLinks", testDisableVoidsLinks},
}

func testBindOIDC(t *testing.T, b *bundle) {
	a := newOperator(t, b, "a@example.com", herald.RoleAdmin)
	c := newOperator(t, b, "c@example.com", herald.RoleViewer)
	for _, step := range []struct {
		what, id, iss, sub string
		want               bool
	}{
		{"first sign-in binds", a.ID, "https://idp", "s1", true},
		{"the bound identity again", a.ID, "https://idp", "s1", true},
		{"another subject", a.ID, "https://idp", "s2", false},
		{"the subject at another issuer", a.ID, "https://other", "s1", false},
		{"an identity another operator holds", c.ID, "https://idp", "s1", false},
		{"the other operator's own", c.ID, "https://idp", "s3", true},
		{"no such operator", "op_none", "https://idp", "s4", false},
	} {
		ok, err := b.s.BindOIDC(b.ctx, step.id, step.iss, step.sub)
		if err != nil || ok != step.want {
			t.Errorf("%s: got %v, %v; want %v", step.what, ok, err, step.want)
		}
	}
	must(t, "DeleteOperator", b.s.DeleteOperator(b.ctx, a.ID))
	if ok, err := b.s.BindOIDC(b.ctx, c.ID, "https://idp", "s1"); err != nil || ok {
		t.Errorf("c taking the deleted operator's identity while bound to s3: %v, %v; want false", ok, err)
	}
	again := newOperator(t, b, "a@example.com", herald.RoleAdmin)
	if ok, err := b.s.BindOIDC(b.ctx, again.ID, "https://idp", "s2"); err != nil || !ok {
		t.Errorf("a new operator of a deleted one's email binds anew: %v, %v; want true", ok, err)
	}
}

// testBindOIDCOnce: of concurrent first sign-ins of one operator with
// different subjects, exactly one binds.
func testBindOIDCOnce(t *testing.T, b *bundle) {
	o := newOperator(t, b, "race@example.com", herald.RoleAdmin)
	const n = 10
	oks := make([]bool, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { oks[i], errs[i] = b.s.BindOIDC(b.ctx, o.ID, "https://idp", "sub-"+string(rune('a'+i))) })
	}
	wg.Wait()
	won := -1
	for i := range n {
		switch {
		case errs[i] != nil:
			t.Errorf("bind %d: %v", i, errs[i])
		case oks[i] && won >= 0:
			t.Errorf("binds %d and %d both succeeded", won, i)
		case oks[i]:
			won = i
		}
	}
	if won < 0 {
		t.Fatal("no bind succeeded")
	}
	if ok, err := b.s.BindOIDC(b.ctx, o.ID, "https://idp", "sub-"+string(rune('a'+won))); err != nil || !ok {
		t.Errorf("the winner's subject after: %v, %v; want true", ok, err)
	}
}

func testEmailKeyASCII(t *testing.T, b *bundle) {
	kate := newOperator(t, b, "Kate@Example.com", herald.RoleAdmin)
	if o, _, err := b.s.OperatorByEmail(b.ctx, "KATE@example.COM"); err != nil || o.ID != kate.ID {
		t.Errorf("ASCII case: %+v, %v", o, err)
	}
	for _, email := range []string{"\u212Aate@example.com", "kate@example.com\u0130", "\u0130nes@example.com"} {
		if _, _, err := b.s.OperatorByEmail(b.ctx, email); !errors.Is(err, herald.ErrNotFound) {
			t.Errorf("OperatorByEmail(%q): %v, want ErrNotFound", email, err)
		}
	}
	// A domain beyond ASCII keeps its bytes: the dotted capital I is no i.
	newOperator(t, b, "ines@\u0130stanbul.example", herald.RoleViewer)
	if _, _, err := b.s.OperatorByEmail(b.ctx, "ines@istanbul.example"); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("dotted capital I found as i: %v, want ErrNotFound", err)
	}
	if _, _, err := b.s.OperatorByEmail(b.ctx, "INES@\u0130stanbul.example"); err != nil {
		t.Errorf("the same bytes in another ASCII case: %v", err)
	}
}

func testUseSetupLinkEndsAccess(t *testing.T, b *bundle) {
	o := newOperator(t, b, "set@example.com", herald.RoleAdmin)
	must(t, "CreateOperatorToken", b.s.CreateOperatorToken(b.ctx, identity.OperatorToken{ID: "tok_1", OperatorID: o.ID, Name: "ci", Hash: "h1", CreatedAt: b.now, ExpiresAt: b.now.Add(time.Hour)}))
	must(t, "CreateSession", b.s.CreateSession(b.ctx, identity.Session{ID: "s1", OperatorID: o.ID, Started: b.now, LastSeen: b.now}))
	got, err := b.s.UseSetupLink(b.ctx, "link-set@example.com", "hash")
	if err != nil || got.ID != o.ID {
		t.Fatalf("UseSetupLink: %+v, %v", got, err)
	}
	if _, err := b.s.OperatorByToken(b.ctx, "h1"); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("a token after a password set by link: %v, want ErrNotFound", err)
	}
	if _, _, err := b.s.Session(b.ctx, "s1"); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("a session after a password set by link: %v, want ErrNotFound", err)
	}
	if _, err := b.s.UseSetupLink(b.ctx, "link-set@example.com", "again"); !errors.Is(err, herald.ErrLinkGone) {
		t.Errorf("the link again: %v, want ErrLinkGone", err)
	}
	if _, err := b.s.UseSetupLink(b.ctx, "link-none", "x"); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("no such link: %v, want ErrNotFound", err)
	}
	b.setNow(b.now.Add(25 * time.Hour))
	newOperator(t, b, "late@example.com", herald.RoleAdmin)
	b.setNow(b.now.Add(24 * time.Hour))
	if _, err := b.s.UseSetupLink(b.ctx, "link-late@example.com", "x"); !errors.Is(err, herald.ErrLinkGone) {
		t.Errorf("an expired link: %v, want ErrLinkGone", err)
	}
}

// testUseSetupLinkOnce: of concurrent uses of one link, exactly one sets
// the password.
func testUseSetupLinkOnce(t *testing.T, b *bundle) {
	o := newOperator(t, b, "burst@example.com", herald.RoleAdmin)
	const n = 10
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { _, errs[i] = b.s.UseSetupLink(b.ctx, "link-burst@example.com", "hash-"+string(rune('a'+i))) })
	}
	wg.Wait()
	won := -1
	for i, err := range errs {
		switch {
		case err == nil && won < 0:
			won = i
		case err == nil:
			t.Errorf("uses %d and %d both set a password", won, i)
		case !errors.Is(err, herald.ErrLinkGone):
			t.Errorf("use %d: %v, want ErrLinkGone", i, err)
		}
	}
	if won < 0 {
		t.Fatal("no use set the password")
	}
	sec, err := b.s.OperatorSecrets(b.ctx, o.ID)
	if err != nil || sec.PasswordHash != "hash-"+string(rune('a'+won)) {
		t.Errorf("password hash %q, %v; want the winner's", sec.PasswordHash, err)
	}
}

func testDisableVoidsLinks(t *testing.T, b *bundle) {
	o := newOperator(t, b, "void@example.com", herald.RoleAdmin)
	yes, no := true, false
	if _, err := b.s.UpdateOperator(b.ctx, o.ID, identity.OperatorChange{Disabled: &yes}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.s.SetupLink(b.ctx, "link-void@example.com"); !errors.Is(err, herald.ErrLinkGone) {
		t.Errorf("a disabled operator's link: %v, want ErrLinkGone", err)
	}
	must(t, "ReplaceSetupLink", b.s.ReplaceSetupLink(b.ctx, identity.SetupLink{OperatorID: o.ID, TokenHash: "link-new", Expires: b.now.Add(time.Hour)}))
	if _, err := b.s.UseSetupLink(b.ctx, "link-new", "x"); !errors.Is(err, herald.ErrLinkGone) {
		t.Errorf("a link made for a disabled operator: %v, want ErrLinkGone", err)
	}
	if _, err := b.s.UpdateOperator(b.ctx, o.ID, identity.OperatorChange{Disabled: &no}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.s.SetupLink(b.ctx, "link-void@example.com"); !errors.Is(err, herald.ErrLinkGone) {
		t.Errorf("the voided link after re-enabling: %v, want ErrLinkGone (re-enabling restores none)", err)
	}
	if _, err := b.s.UseSetupLink(b.ctx, "link-new", "x"); err != nil {
		t.Errorf("the link made while disabled, once enabled again: %v", err)
	}
}
