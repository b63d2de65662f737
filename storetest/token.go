package storetest

import (
	"errors"
	"testing"

	"github.com/heraldpush/herald"
)

var tokenTests = []test{
	{"DeviceByToken", testDeviceByToken},
	{"DeviceByToken/Moved", testDeviceByTokenMoved},
	{"AcceptPush/Token", testAcceptTokenPush},
}

// wantDeviceByToken checks which device of the app holds a token: none
// when wantID is "".
func (b *bundle) wantDeviceByToken(appID, token, wantID string) {
	b.t.Helper()
	d, err := b.s.DeviceByToken(b.ctx, appID, token)
	switch {
	case wantID == "" && !errors.Is(err, herald.ErrNotFound):
		b.t.Errorf("DeviceByToken(%s): got (%s, %v), want ErrNotFound", token, d.ID, err)
	case wantID != "" && (err != nil || d.ID != wantID || d.Token != token || d.AppID != appID):
		b.t.Errorf("DeviceByToken(%s): got (%+v, %v), want %s", token, d, err, wantID)
	}
}

func testDeviceByToken(t *testing.T, b *bundle) {
	mapped := b.register("d1", "t1", "u1")
	b.register("d2", "t2", "")
	other := b.newApp("other")
	_, err := b.s.RegisterDevice(b.ctx, other.ID, registration("d3", "t3", "u1"))
	must(t, "RegisterDevice", err)
	d, err := b.s.DeviceByToken(b.ctx, b.app.ID, "t1")
	if err != nil || d.UserID == nil || *d.UserID != "u1" || d.Platform != mapped.Platform ||
		d.AppSourceVersion != mapped.AppSourceVersion || !d.TokenUpdatedAt.Equal(mapped.TokenUpdatedAt) {
		t.Errorf("mapped: got (%+v, %v), want %+v", d, err, mapped)
	}
	b.wantDeviceByToken(b.app.ID, "t2", "d2")
	if d, _ := b.s.DeviceByToken(b.ctx, b.app.ID, "t2"); d.UserID != nil {
		t.Errorf("unmapped: got user %q, want none", *d.UserID)
	}
	// Another app's token is not this app's.
	b.wantDeviceByToken(b.app.ID, "t3", "")
	b.wantDeviceByToken(other.ID, "t3", "d3")
	b.wantDeviceByToken(b.app.ID, "t-unknown", "")
	b.wantDeviceByToken("app_missing", "t1", "")
}

func testDeviceByTokenMoved(t *testing.T, b *bundle) {
	b.register("d1", "t1", "u1")
	// The app reinstalled: the token moves to a new device.
	b.register("d2", "t1", "u2")
	b.wantDeviceByToken(b.app.ID, "t1", "d2")
	// A device refreshes its token: the old one is no one's.
	b.register("d3", "t3", "")
	b.register("d3", "t4", "")
	b.wantDeviceByToken(b.app.ID, "t3", "")
	b.wantDeviceByToken(b.app.ID, "t4", "d3")
}

func testAcceptTokenPush(t *testing.T, b *bundle) {
	p, _ := b.newPush()
	p.Kind, p.Token, p.RequestedUsers = herald.KindToken, "t1", 1
	b.charge(&p, 1)
	b.accept(p, nil)
	got := b.pushOf(p.ID)
	if got.Kind != herald.KindToken || got.Token != "t1" || got.RequestedUsers != 1 || got.ServerActionsHalf != 0 {
		t.Errorf("push: got kind %s, token %q, %d users, %d half, want token, t1, 1, 0", got.Kind, got.Token, got.RequestedUsers,
			got.ServerActionsHalf)
	}
	if rs, err := b.s.Recipients(b.ctx, p.ID); err != nil || len(rs) != 0 {
		t.Errorf("recipients: got (%v, %v), want none", rs, err)
	}
	if u := b.usageOn(b.app.ID, today); u != 0 {
		t.Errorf("usage: got %d, want 0", u)
	}
	// Pushes of other kinds keep no token.
	if other := b.pushOf(b.acceptUsers("u1").ID); other.Token != "" {
		t.Errorf("users push: got token %q, want none", other.Token)
	}
}
