package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/heraldpush/herald"
)

// The identity subtests: the app's identity verification setting, its
// sealed secret and refusal count, and the checks a store makes of an
// identity proof in the transaction that would change a device.
var identityTests = []test{
	{"Identity/Settings", testIdentitySettings},
	{"Identity/RefusalsCountedTogether", testIdentityRefusalsTogether},
	{"Identity/DeviceConsent", testIdentityDeviceConsent},
	{"Identity/NewToken", testIdentityNewToken},
	{"Identity/NewTokenTogether", testIdentityNewTokenTogether},
}

const identitySecret = "hi_0123456789abcdefghijklmnopqrstuvwxyzABCD"

// proof is an identity proof under identitySecret for userID ("": a
// token of no one).
func proof(userID string) *herald.IdentityProof {
	p := &herald.IdentityProof{Secret: identitySecret, Token: "00"}
	if userID != "" {
		p.Token = herald.IdentityToken(identitySecret, userID)
	}
	return p
}

// testIdentitySettings: the setting is written by CreateApp and
// UpdateApp, the sealed secret by SetIdentitySecret alone (UpdateApp
// keeps it), and both methods of an unknown app answer ErrNotFound.
func testIdentitySettings(t *testing.T, b *bundle) {
	a := b.app
	a.ID, a.APIKey, a.IdentityVerification = herald.NewID("app_", b.now), herald.NewAPIKey(), true
	must(t, "CreateApp", b.s.CreateApp(b.ctx, a))
	got, err := b.s.App(b.ctx, a.ID)
	must(t, "App", err)
	if !got.IdentityVerification || got.IdentitySecret != nil || got.IdentityRefusals != 0 {
		t.Errorf("created: got verification %v, secret %q, refusals %d; want on, none, 0",
			got.IdentityVerification, got.IdentitySecret, got.IdentityRefusals)
	}
	must(t, "SetIdentitySecret", b.s.SetIdentitySecret(b.ctx, a.ID, []byte("sealed-1")))
	must(t, "SetIdentitySecret", b.s.SetIdentitySecret(b.ctx, a.ID, []byte("sealed-2")))
	got, err = b.s.AppByAPIKey(b.ctx, a.APIKey)
	must(t, "AppByAPIKey", err)
	got.IdentityVerification = false
	must(t, "UpdateApp", b.s.UpdateApp(b.ctx, got))
	got, err = b.s.App(b.ctx, a.ID)
	must(t, "App", err)
	if got.IdentityVerification || !bytes.Equal(got.IdentitySecret, []byte("sealed-2")) {
		t.Errorf("updated: got verification %v, secret %q; want off, the last one set", got.IdentityVerification, got.IdentitySecret)
	}
	if !bytes.Equal(got.PreviousIdentitySecret, []byte("sealed-1")) || !got.IdentityRotatedAt.Equal(b.now.Truncate(time.Millisecond)) {
		t.Errorf("rotated: previous %q at %v; want the one replaced, at %v", got.PreviousIdentitySecret, got.IdentityRotatedAt, b.now)
	}
	if err := b.s.SetIdentitySecret(b.ctx, "app_ghost", []byte("x")); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("SetIdentitySecret of an unknown app: got %v, want ErrNotFound", err)
	}
	if err := b.s.CountIdentityRefusal(b.ctx, "app_ghost"); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("CountIdentityRefusal of an unknown app: got %v, want ErrNotFound", err)
	}
}

// testIdentityRefusalsTogether: refusals counted at once are all kept.
func testIdentityRefusalsTogether(t *testing.T, b *bundle) {
	const n = 50
	errs := make([]error, n)
	concurrently(n, func(i int) { errs[i] = b.s.CountIdentityRefusal(b.ctx, b.app.ID) })
	for i, err := range errs {
		if err != nil {
			t.Errorf("count %d: %v", i, err)
		}
	}
	got, err := b.s.App(b.ctx, b.app.ID)
	must(t, "App", err)
	if got.IdentityRefusals != n {
		t.Errorf("IdentityRefusals: got %d, want %d", got.IdentityRefusals, n)
	}
}

// testIdentityDeviceConsent: the in-app switch of a device mapped to a
// user needs a proof of that user; refused, nothing changes, trail
// included. An unmapped device needs none.
func testIdentityDeviceConsent(t *testing.T, b *bundle) {
	b.register("d1", "t1", "u1")
	b.register("d2", "t2", "")
	before := fmt.Sprint(b.history("u1"))
	for _, p := range []*herald.IdentityProof{proof(""), proof("u2"), {Token: herald.IdentityToken("", "u1")}} {
		_, err := b.s.SetDeviceConsent(b.ctx, b.app.ID, "d1", herald.ConsentChange{Marketing: new(true), Identity: p})
		if !errors.Is(err, herald.ErrIdentityRefused) {
			t.Errorf("proof %+v: got %v, want ErrIdentityRefused", p, err)
		}
	}
	if d, _ := b.device("d1"); d.Consent.Marketing {
		t.Errorf("d1 after refusals: got marketing true, want false")
	}
	if got := fmt.Sprint(b.history("u1")); got != before {
		t.Errorf("u1's trail after refusals:\n got %s\nwant %s", got, before)
	}
	d, err := b.s.SetDeviceConsent(b.ctx, b.app.ID, "d1", herald.ConsentChange{Marketing: new(true), Identity: proof("u1")})
	if err != nil || !d.Consent.Marketing {
		t.Errorf("u1's proof: got %+v, %v; want marketing true", d.Consent, err)
	}
	if _, err := b.s.SetDeviceConsent(b.ctx, b.app.ID, "d2", herald.ConsentChange{Marketing: new(true), Identity: proof("")}); err != nil {
		t.Errorf("unmapped device: got %v, want no proof needed", err)
	}
}

// testIdentityNewToken: a registration without userId that gives a mapped
// device a new token needs a proof of the device's user; the same token
// again, a new device and an unmapped one need none.
func testIdentityNewToken(t *testing.T, b *bundle) {
	b.register("d1", "t1", "u1")
	b.register("d2", "t2", "")
	reg := func(device, token string, p *herald.IdentityProof) error {
		r := registration(device, token, "")
		r.Identity = p
		_, err := b.s.RegisterDevice(b.ctx, b.app.ID, r)
		return err
	}
	if err := reg("d1", "evil", proof("u2")); !errors.Is(err, herald.ErrIdentityRefused) {
		t.Errorf("new token, another user's proof: got %v, want ErrIdentityRefused", err)
	}
	if d, _ := b.device("d1"); d.Token != "t1" || d.UserID == nil || *d.UserID != "u1" {
		t.Errorf("d1 after the refusal: got token %q user %v, want t1 of u1", d.Token, d.UserID)
	}
	for _, c := range []struct {
		device, token string
		p             *herald.IdentityProof
	}{{"d1", "t1", proof("")}, {"d1", "t1b", proof("u1")}, {"d2", "t2b", proof("")}, {"d3", "t3", proof("")}} {
		if err := reg(c.device, c.token, c.p); err != nil {
			t.Errorf("%s with %s: got %v, want it registered", c.device, c.token, err)
		}
	}
}

// testIdentityNewTokenTogether: in one batch, a registration refused for
// want of a proof answers so, and the others are made.
func testIdentityNewTokenTogether(t *testing.T, b *bundle) {
	b.register("d1", "t1", "u1")
	refused := registration("d1", "evil", "")
	refused.Identity = proof("")
	_, errs := b.together([]herald.DeviceRegistration{registration("d5", "t5", "u5"), refused, registration("d6", "t6", "")})
	if !errors.Is(errs[1], herald.ErrIdentityRefused) || errs[0] != nil || errs[2] != nil {
		t.Errorf("batch: got %v, want nil, ErrIdentityRefused, nil", errs)
	}
	if d, _ := b.device("d1"); d.Token != "t1" {
		t.Errorf("d1: got token %q, want t1", d.Token)
	}
	for _, id := range []string{"d5", "d6"} {
		if _, ok := b.device(id); !ok {
			t.Errorf("%s: not stored, want it registered", id)
		}
	}
}
