package storetest

import (
	"testing"
	"time"

	"github.com/heraldpush/herald"
)

var userTests = []test{
	{"RegisterDevice/New", testRegisterNew},
	{"RegisterDevice/MapsUser", testRegisterMapsUser},
	{"RegisterDevice/AgainKeepsPair", testRegisterAgain},
	{"RegisterDevice/TokenMoves", testTokenMoves},
	{"RegisterDevice/AdoptsPairSetByServer", testRegisterAdoptsPair},
	{"RegisterDevice/SameUserKeepsOwnPair", testRegisterSameUserKeepsPair},
	{"RegisterDevice/ErrUnknownApp", testRegisterUnknownApp},
	{"SetDeviceUser/MapAndUnmap", testSetDeviceUser},
	{"SetDeviceUser/AdoptsPairSetByServer", testSetDeviceUserAdopts},
	{"SetDeviceUser/ErrNotFound", testSetDeviceUserNotFound},
	{"SetDeviceConsent/Shapes", testSetDeviceConsentShapes},
	{"SetDeviceConsent/ErrInvalidRequest", testSetDeviceConsentInvalid},
	{"SetDeviceConsent/ErrNotFound", testSetDeviceConsentNotFound},
	{"DeleteDevice", testDeleteDevice},
	{"DeleteToken", testDeleteToken},
	{"SetUserConsent/WritesUserAndDevices", testSetUserConsent},
	{"SetUserConsent/Shapes", testSetUserConsentShapes},
	{"SetUserConsent/Errors", testSetUserConsentErrors},
	{"WithdrawUser/Cascade", testWithdrawCascade},
	{"WithdrawUser/Errors", testWithdrawErrors},
	{"WithdrawUser/ReRegisterByRegisterDevice", testReRegisterByDevice},
	{"WithdrawUser/ReRegisterBySetDeviceUser", testReRegisterBySetUser},
	{"SubscribeTopic", testSubscribeTopic},
	{"UnsubscribeTopic", testUnsubscribeTopic},
	{"User/ErrUserNotFound", testUserNotFound},
}

func testRegisterNew(t *testing.T, b *bundle) {
	a := b.app
	a.DefaultConsent = consent(true, false)
	must(t, "UpdateApp", b.s.UpdateApp(b.ctx, a))
	d := b.register("d1", "t1", "")
	if d.ID != "d1" || d.AppID != b.app.ID || d.Token != "t1" || d.Platform != herald.PlatformAndroid ||
		d.AppSourceVersion != "1.6.0" || d.UserID != nil || d.Consent != a.DefaultConsent ||
		!d.CreatedAt.Equal(b.now) || !d.TokenUpdatedAt.Equal(b.now) {
		t.Errorf("got %+v, want an unmapped device with the app's default pair, made now", d)
	}
	stored, ok := b.device("d1")
	if !ok || stored.Token != "t1" || stored.Consent != a.DefaultConsent || stored.UserID != nil {
		t.Errorf("stored: got %+v (found %v), want the device", stored, ok)
	}
}

func testRegisterMapsUser(t *testing.T, b *bundle) {
	d := b.register("d1", "t1", "u1")
	if d.UserID == nil || *d.UserID != "u1" {
		t.Errorf("device: got user %v, want u1", d.UserID)
	}
	u, ds := b.user("u1")
	if u.State != herald.UserRegistered || !u.CreatedAt.Equal(b.now) || u.WithdrawnAt != nil || u.ConsentSet ||
		!equal(deviceIDs(ds), []string{"d1"}) {
		t.Errorf("got %+v with devices %v, want registered now with d1", u, deviceIDs(ds))
	}
}

func testRegisterAgain(t *testing.T, b *bundle) {
	created := b.now
	b.register("d1", "t1", "u1")
	_, err := b.s.SetDeviceConsent(b.ctx, b.app.ID, "d1", change(new(true), new(true)))
	must(t, "SetDeviceConsent", err)
	b.tick(time.Hour)
	reg := registration("d1", "t1b", "u1")
	reg.Platform, reg.AppSourceVersion = herald.PlatformIOS, "2.0.0"
	d, err := b.s.RegisterDevice(b.ctx, b.app.ID, reg)
	must(t, "RegisterDevice", err)
	if d.Token != "t1b" || d.Platform != herald.PlatformIOS || d.AppSourceVersion != "2.0.0" ||
		d.Consent != consent(true, true) || !d.CreatedAt.Equal(created) || !d.TokenUpdatedAt.Equal(b.now) {
		t.Errorf("got %+v, want the new token, platform and version, its pair kept, created %v, refreshed now", d, created)
	}
	if stored, _ := b.device("d1"); stored.Token != "t1b" || stored.Consent != consent(true, true) {
		t.Errorf("stored: got %+v, want the new token and the pair kept", stored)
	}
}

func testTokenMoves(t *testing.T, b *bundle) {
	b.register("d1", "t1", "u1")
	b.register("d2", "t2", "u2")
	d := b.register("d2", "t1", "u2")
	if d.Token != "t1" {
		t.Errorf("got token %q, want t1", d.Token)
	}
	all, err := b.allDevices(b.app.ID)
	must(t, "AllDevices", err)
	var holders []string
	for _, d := range all {
		if d.Token == "t1" {
			holders = append(holders, d.ID)
		}
		if d.Token == "t2" {
			t.Errorf("device %s still holds the old token t2", d.ID)
		}
	}
	if !equal(holders, []string{"d2"}) {
		t.Errorf("holders of t1: got %v, want [d2]", holders)
	}
	// The move is of the token only: the new holder keeps its own user.
	if _, ds := b.user("u2"); !equal(deviceIDs(ds), []string{"d2"}) {
		t.Errorf("u2: got devices %v, want [d2]", deviceIDs(ds))
	}
}

func testRegisterAdoptsPair(t *testing.T, b *bundle) {
	b.register("d1", "t1", "u1")
	_, err := b.s.SetUserConsent(b.ctx, b.app.ID, "u1", change(new(true), new(true)))
	must(t, "SetUserConsent", err)
	if d := b.register("d2", "t2", "u1"); d.Consent != consent(true, true) {
		t.Errorf("new device mapped to u1: got %+v, want the user's pair", d.Consent)
	}
	b.register("d3", "t3", "")
	if d := b.register("d3", "t3", "u1"); d.Consent != consent(true, true) {
		t.Errorf("existing device newly mapped: got %+v, want the user's pair", d.Consent)
	}
	// A user whose pair was never set through the Server API passes nothing on.
	b.register("d4", "t4", "u2")
	_, err = b.s.SetDeviceConsent(b.ctx, b.app.ID, "d4", change(new(true), nil))
	must(t, "SetDeviceConsent", err)
	if d := b.register("d5", "t5", "u2"); d.Consent != (herald.Consent{}) {
		t.Errorf("device of a user without a set pair: got %+v, want the app default", d.Consent)
	}
	if u, _ := b.user("u2"); u.ConsentSet || u.Consent != (herald.Consent{}) {
		t.Errorf("u2: got %+v, want its pair unset (a device's switch is the device's)", u)
	}
}

func testRegisterSameUserKeepsPair(t *testing.T, b *bundle) {
	b.register("d1", "t1", "u1")
	_, err := b.s.SetUserConsent(b.ctx, b.app.ID, "u1", change(new(true), new(true)))
	must(t, "SetUserConsent", err)
	_, err = b.s.SetDeviceConsent(b.ctx, b.app.ID, "d1", change(nil, new(false)))
	must(t, "SetDeviceConsent", err)
	if d := b.register("d1", "t1", "u1"); d.Consent != consent(true, false) {
		t.Errorf("device already mapped to u1: got %+v, want its own pair kept", d.Consent)
	}
}

func testRegisterUnknownApp(t *testing.T, b *bundle) {
	if _, err := b.s.RegisterDevice(b.ctx, "app_missing", registration("d1", "t1", "u1")); err == nil {
		t.Errorf("got nil, want an error")
	}
	if ds, _ := b.allDevices("app_missing"); len(ds) != 0 {
		t.Errorf("got %d devices stored, want none", len(ds))
	}
}

func testSetDeviceUser(t *testing.T, b *bundle) {
	b.register("d1", "t1", "")
	d, err := b.s.SetDeviceUser(b.ctx, b.app.ID, "d1", new("u1"))
	if err != nil || d.UserID == nil || *d.UserID != "u1" {
		t.Fatalf("map: got (%v, %v), want u1", d.UserID, err)
	}
	if u, ds := b.user("u1"); u.State != herald.UserRegistered || !equal(deviceIDs(ds), []string{"d1"}) {
		t.Errorf("u1: got %+v with %v, want registered with d1", u, deviceIDs(ds))
	}
	_, err = b.s.SetDeviceConsent(b.ctx, b.app.ID, "d1", change(new(true), nil))
	must(t, "SetDeviceConsent", err)
	d, err = b.s.SetDeviceUser(b.ctx, b.app.ID, "d1", nil)
	if err != nil || d.UserID != nil || d.Consent != consent(true, false) {
		t.Errorf("unmap: got (%+v, %v), want unmapped, pair kept", d, err)
	}
	if u, ds := b.user("u1"); u.State != herald.UserRegistered || len(ds) != 0 {
		t.Errorf("u1 after unmap: got %+v with %v, want registered without devices", u, deviceIDs(ds))
	}
	if stored, _ := b.device("d1"); stored.UserID != nil {
		t.Errorf("stored: got user %v, want none", *stored.UserID)
	}
}

func testSetDeviceUserAdopts(t *testing.T, b *bundle) {
	b.register("d1", "t1", "u1")
	b.register("d2", "t2", "u2")
	_, err := b.s.SetUserConsent(b.ctx, b.app.ID, "u2", change(new(true), new(true)))
	must(t, "SetUserConsent", err)
	d, err := b.s.SetDeviceUser(b.ctx, b.app.ID, "d1", new("u2"))
	if err != nil || d.Consent != consent(true, true) {
		t.Errorf("moved to u2: got (%+v, %v), want u2's pair", d.Consent, err)
	}
	if stored, _ := b.device("d1"); stored.Consent != consent(true, true) {
		t.Errorf("stored: got %+v, want u2's pair", stored.Consent)
	}
	// Mapping again to the same user keeps what the device set since.
	_, err = b.s.SetDeviceConsent(b.ctx, b.app.ID, "d1", change(new(false), nil))
	must(t, "SetDeviceConsent", err)
	if d, _ := b.s.SetDeviceUser(b.ctx, b.app.ID, "d1", new("u2")); d.Consent != (herald.Consent{}) {
		t.Errorf("mapped again to u2: got %+v, want the device's own pair", d.Consent)
	}
}

func testSetDeviceUserNotFound(t *testing.T, b *bundle) {
	_, err := b.s.SetDeviceUser(b.ctx, b.app.ID, "ghost", new("u1"))
	wantErr(t, "map", err, herald.ErrNotFound)
	_, err = b.s.SetDeviceUser(b.ctx, b.app.ID, "ghost", nil)
	wantErr(t, "unmap", err, herald.ErrNotFound)
	if _, _, err := b.s.User(b.ctx, b.app.ID, "u1"); err == nil {
		t.Errorf("u1 was registered by a failed mapping")
	}
}

func testSetDeviceConsentShapes(t *testing.T, b *bundle) {
	b.register("d1", "t1", "u1")
	b.register("d2", "t2", "u1")
	for _, step := range []struct {
		name   string
		change herald.ConsentChange
		want   herald.Consent
	}{
		{"A on", change(new(true), nil), consent(true, false)},
		{"C night on", change(nil, new(true)), consent(true, true)},
		{"A on keeps night", change(new(true), nil), consent(true, true)},
		{"C night off", change(nil, new(false)), consent(true, false)},
		{"both on", change(new(true), new(true)), consent(true, true)},
		{"B off turns night off", change(new(false), nil), consent(false, false)},
	} {
		d, err := b.s.SetDeviceConsent(b.ctx, b.app.ID, "d1", step.change)
		if err != nil || d.Consent != step.want {
			t.Errorf("%s: got (%+v, %v), want %+v", step.name, d.Consent, err, step.want)
		}
		if stored, _ := b.device("d1"); stored.Consent != step.want {
			t.Errorf("%s: stored %+v, want %+v", step.name, stored.Consent, step.want)
		}
	}
	if other, _ := b.device("d2"); other.Consent != (herald.Consent{}) {
		t.Errorf("other device of the user: got %+v, want untouched", other.Consent)
	}
	if u, _ := b.user("u1"); u.Consent != (herald.Consent{}) || u.ConsentSet {
		t.Errorf("user: got %+v, want untouched", u)
	}
}

func testSetDeviceConsentInvalid(t *testing.T, b *bundle) {
	b.register("d1", "t1", "")
	for name, c := range map[string]herald.ConsentChange{
		"C on while marketing off": change(nil, new(true)),
		"empty":                    change(nil, nil),
		"off with night on":        change(new(false), new(true)),
	} {
		_, err := b.s.SetDeviceConsent(b.ctx, b.app.ID, "d1", c)
		wantErr(t, name, err, herald.ErrInvalidRequest)
	}
	if d, _ := b.device("d1"); d.Consent != (herald.Consent{}) {
		t.Errorf("got %+v, want unchanged", d.Consent)
	}
}

func testSetDeviceConsentNotFound(t *testing.T, b *bundle) {
	_, err := b.s.SetDeviceConsent(b.ctx, b.app.ID, "ghost", change(new(true), nil))
	wantErr(t, "unknown device", err, herald.ErrNotFound)
}

func testDeleteDevice(t *testing.T, b *bundle) {
	b.register("d1", "t1", "u1")
	b.register("d2", "t2", "u1")
	_, err := b.s.SubscribeTopic(b.ctx, b.app.ID, "news", []string{"u1"})
	must(t, "SubscribeTopic", err)
	must(t, "DeleteDevice", b.s.DeleteDevice(b.ctx, b.app.ID, "d1"))
	if _, ds := b.user("u1"); !equal(deviceIDs(ds), []string{"d2"}) {
		t.Errorf("got %v, want [d2]", deviceIDs(ds))
	}
	if ds, _ := b.topicDevices(b.app.ID, "news"); !equal(deviceIDs(ds), []string{"d2"}) {
		t.Errorf("topic: got %v, want [d2]", deviceIDs(ds))
	}
	wantErr(t, "DeleteToken of its token", b.s.DeleteToken(b.ctx, b.app.ID, "t1"), herald.ErrNotFound)
	wantErr(t, "again", b.s.DeleteDevice(b.ctx, b.app.ID, "d1"), herald.ErrNotFound)
	// The same device id may register again, as a new device.
	b.register("d1", "t1", "")
	if ds, _ := b.topicDevices(b.app.ID, "news"); !equal(deviceIDs(ds), []string{"d2"}) {
		t.Errorf("registered again: topic members %v, want [d2] (a fresh device has no topics)", deviceIDs(ds))
	}
}

func testDeleteToken(t *testing.T, b *bundle) {
	other := b.newApp("other")
	b.register("d1", "t1", "u1")
	_, err := b.s.RegisterDevice(b.ctx, other.ID, registration("d1", "t1", "u1"))
	must(t, "RegisterDevice other app", err)
	must(t, "DeleteToken", b.s.DeleteToken(b.ctx, b.app.ID, "t1"))
	if _, ok := b.device("d1"); ok {
		t.Errorf("device d1 still exists")
	}
	wantErr(t, "again", b.s.DeleteToken(b.ctx, b.app.ID, "t1"), herald.ErrNotFound)
	if ds, _ := b.allDevices(other.ID); len(ds) != 1 {
		t.Errorf("other app: got %d devices, want its own kept", len(ds))
	}
}

func testSetUserConsent(t *testing.T, b *bundle) {
	b.register("d1", "t1", "u1")
	b.register("d2", "t2", "u1")
	b.register("d3", "t3", "u2")
	b.register("d4", "t4", "")
	got, err := b.s.SetUserConsent(b.ctx, b.app.ID, "u1", change(new(true), new(true)))
	if err != nil || got != consent(true, true) {
		t.Fatalf("got (%+v, %v), want both on", got, err)
	}
	u, ds := b.user("u1")
	if u.Consent != got || !u.ConsentSet {
		t.Errorf("user: got %+v, want %+v, set", u, got)
	}
	for _, d := range ds {
		if d.Consent != got {
			t.Errorf("device %s: got %+v, want %+v", d.ID, d.Consent, got)
		}
	}
	for _, id := range []string{"d3", "d4"} {
		if d, _ := b.device(id); d.Consent != (herald.Consent{}) {
			t.Errorf("device %s of no or another user: got %+v, want untouched", id, d.Consent)
		}
	}
}

func testSetUserConsentShapes(t *testing.T, b *bundle) {
	b.register("d1", "t1", "u1")
	for _, step := range []struct {
		name   string
		change herald.ConsentChange
		want   herald.Consent
	}{
		{"A on", change(new(true), nil), consent(true, false)},
		{"C night on", change(nil, new(true)), consent(true, true)},
		{"A on keeps night", change(new(true), nil), consent(true, true)},
		{"B off turns night off", change(new(false), nil), consent(false, false)},
		{"A on after B", change(new(true), nil), consent(true, false)},
		{"C night off", change(nil, new(false)), consent(true, false)},
	} {
		got, err := b.s.SetUserConsent(b.ctx, b.app.ID, "u1", step.change)
		if err != nil || got != step.want {
			t.Errorf("%s: got (%+v, %v), want %+v", step.name, got, err, step.want)
		}
		u, ds := b.user("u1")
		if u.Consent != step.want || ds[0].Consent != step.want {
			t.Errorf("%s: stored user %+v device %+v, want %+v", step.name, u.Consent, ds[0].Consent, step.want)
		}
	}
}

func testSetUserConsentErrors(t *testing.T, b *bundle) {
	b.register("d1", "t1", "u1")
	_, err := b.s.SetUserConsent(b.ctx, b.app.ID, "u1", change(new(false), nil))
	must(t, "B", err)
	for name, c := range map[string]herald.ConsentChange{
		"C on while marketing off": change(nil, new(true)),
		"empty":                    change(nil, nil),
		"off with night on":        change(new(false), new(true)),
	} {
		_, err := b.s.SetUserConsent(b.ctx, b.app.ID, "u1", c)
		wantErr(t, name, err, herald.ErrInvalidRequest)
	}
	if u, ds := b.user("u1"); u.Consent != (herald.Consent{}) || ds[0].Consent != (herald.Consent{}) {
		t.Errorf("after refusals: got user %+v device %+v, want off", u.Consent, ds[0].Consent)
	}
	_, err = b.s.SetUserConsent(b.ctx, b.app.ID, "nobody", change(new(true), nil))
	wantErr(t, "unknown user", err, herald.ErrUserNotFound)
	must(t, "WithdrawUser", b.s.WithdrawUser(b.ctx, b.app.ID, "u1"))
	_, err = b.s.SetUserConsent(b.ctx, b.app.ID, "u1", change(new(true), nil))
	wantErr(t, "withdrawn user", err, herald.ErrUserWithdrawn)
	other := b.newApp("other")
	_, err = b.s.SetUserConsent(b.ctx, other.ID, "u1", change(new(true), nil))
	wantErr(t, "user of another app", err, herald.ErrUserNotFound)
}

func testWithdrawCascade(t *testing.T, b *bundle) {
	b.register("d1", "t1", "u1")
	b.register("d2", "t2", "u1")
	b.register("d3", "t3", "u2")
	_, err := b.s.SubscribeTopic(b.ctx, b.app.ID, "news", []string{"u1", "u2"})
	must(t, "SubscribeTopic", err)
	_, err = b.s.SetUserConsent(b.ctx, b.app.ID, "u1", change(new(true), new(true)))
	must(t, "SetUserConsent", err)
	b.tick(time.Minute)
	must(t, "WithdrawUser", b.s.WithdrawUser(b.ctx, b.app.ID, "u1"))

	u, ds := b.user("u1")
	if u.State != herald.UserWithdrawn || u.Consent != (herald.Consent{}) || u.ConsentSet ||
		u.WithdrawnAt == nil || !u.WithdrawnAt.Equal(b.now) || len(ds) != 0 {
		t.Errorf("got %+v with devices %v, want withdrawn now, pair reset and unset, no devices", u, deviceIDs(ds))
	}
	if m, _ := b.s.DevicesOfUsers(b.ctx, b.app.ID, []string{"u1"}); len(m["u1"]) != 0 {
		t.Errorf("DevicesOfUsers: got %v, want none", deviceIDs(m["u1"]))
	}
	if topic, _ := b.topicDevices(b.app.ID, "news"); !equal(deviceIDs(topic), []string{"d3"}) {
		t.Errorf("topic members: got %v, want [d3]", deviceIDs(topic))
	}
	for _, token := range []string{"t1", "t2"} {
		wantErr(t, "DeleteToken "+token, b.s.DeleteToken(b.ctx, b.app.ID, token), herald.ErrNotFound)
	}
	if u2, ds := b.user("u2"); u2.State != herald.UserRegistered || len(ds) != 1 {
		t.Errorf("other user: got %+v with %v, want untouched", u2, deviceIDs(ds))
	}
}

func testWithdrawErrors(t *testing.T, b *bundle) {
	wantErr(t, "unknown user", b.s.WithdrawUser(b.ctx, b.app.ID, "nobody"), herald.ErrUserNotFound)
	b.register("d1", "t1", "u1")
	must(t, "WithdrawUser", b.s.WithdrawUser(b.ctx, b.app.ID, "u1"))
	wantErr(t, "again", b.s.WithdrawUser(b.ctx, b.app.ID, "u1"), herald.ErrUserWithdrawn)
	// A user without devices can be withdrawn too.
	b.register("d2", "t2", "u2")
	_, err := b.s.SetDeviceUser(b.ctx, b.app.ID, "d2", nil)
	must(t, "SetDeviceUser", err)
	wantErr(t, "user without devices", b.s.WithdrawUser(b.ctx, b.app.ID, "u2"), nil)
}

// withdrawn registers u1 on d1 with its pair set, subscribes it to news and
// withdraws it.
func (b *bundle) withdrawn() {
	b.t.Helper()
	b.register("d1", "t1", "u1")
	_, err := b.s.SubscribeTopic(b.ctx, b.app.ID, "news", []string{"u1"})
	must(b.t, "SubscribeTopic", err)
	_, err = b.s.SetUserConsent(b.ctx, b.app.ID, "u1", change(new(true), new(true)))
	must(b.t, "SetUserConsent", err)
	must(b.t, "WithdrawUser", b.s.WithdrawUser(b.ctx, b.app.ID, "u1"))
	b.tick(time.Hour)
}

func testReRegisterByDevice(t *testing.T, b *bundle) {
	b.withdrawn()
	d := b.register("d1", "t1", "u1")
	if d.Consent != (herald.Consent{}) || len(d.Topics) != 0 {
		t.Errorf("device: got %+v, want the app default pair and no topics", d)
	}
	u, ds := b.user("u1")
	if u.State != herald.UserRegistered || u.WithdrawnAt != nil || u.ConsentSet || u.Consent != (herald.Consent{}) {
		t.Errorf("user: got %+v, want registered again with its pair reset", u)
	}
	if !equal(deviceIDs(ds), []string{"d1"}) || len(ds[0].Topics) != 0 {
		t.Errorf("devices: got %+v, want d1 without topics", ds)
	}
	if _, err := b.s.SetUserConsent(b.ctx, b.app.ID, "u1", change(new(true), nil)); err != nil {
		t.Errorf("SetUserConsent after re-registration: got %v, want nil", err)
	}
}

func testReRegisterBySetUser(t *testing.T, b *bundle) {
	b.withdrawn()
	b.register("d9", "t9", "")
	d, err := b.s.SetDeviceUser(b.ctx, b.app.ID, "d9", new("u1"))
	if err != nil || d.Consent != (herald.Consent{}) {
		t.Errorf("device: got (%+v, %v), want mapped with its own pair (the user's was reset)", d.Consent, err)
	}
	u, ds := b.user("u1")
	if u.State != herald.UserRegistered || u.WithdrawnAt != nil || !equal(deviceIDs(ds), []string{"d9"}) {
		t.Errorf("got %+v with %v, want registered again with d9", u, deviceIDs(ds))
	}
}

func testSubscribeTopic(t *testing.T, b *bundle) {
	b.register("d1", "t1", "u1")
	b.register("d2", "t2", "u1")
	b.register("d3", "t3", "u2")
	b.register("d4", "t4", "")
	n, err := b.s.SubscribeTopic(b.ctx, b.app.ID, "news", []string{"u1", "u2", "nobody"})
	if err != nil || n != 3 {
		t.Errorf("got (%d, %v), want 3 devices", n, err)
	}
	if ds, _ := b.topicDevices(b.app.ID, "news"); !equal(deviceIDs(ds), []string{"d1", "d2", "d3"}) {
		t.Errorf("DevicesOfTopic: got %v, want [d1 d2 d3]", deviceIDs(ds))
	}
	if n, err := b.s.SubscribeTopic(b.ctx, b.app.ID, "news", []string{"u1"}); err != nil || n != 0 {
		t.Errorf("again: got (%d, %v), want 0 devices changed", n, err)
	}
	if _, err := b.s.SubscribeTopic(b.ctx, b.app.ID, "sale", []string{"u1"}); err != nil {
		t.Fatal(err)
	}
	_, ds := b.user("u1")
	for _, d := range ds {
		if !equal(d.Topics, []string{"news", "sale"}) {
			t.Errorf("device %s topics: got %v, want [news sale]", d.ID, d.Topics)
		}
	}
	if ds, _ := b.topicDevices(b.app.ID, "none"); len(ds) != 0 {
		t.Errorf("unknown topic: got %v, want none", deviceIDs(ds))
	}
	other := b.newApp("other")
	if ds, _ := b.topicDevices(other.ID, "news"); len(ds) != 0 {
		t.Errorf("another app: got %v, want none", deviceIDs(ds))
	}
}

func testUnsubscribeTopic(t *testing.T, b *bundle) {
	b.register("d1", "t1", "u1")
	b.register("d2", "t2", "u1")
	b.register("d3", "t3", "u2")
	_, err := b.s.SubscribeTopic(b.ctx, b.app.ID, "news", []string{"u1", "u2"})
	must(t, "SubscribeTopic", err)
	n, err := b.s.UnsubscribeTopic(b.ctx, b.app.ID, "news", []string{"u1", "nobody"})
	if err != nil || n != 2 {
		t.Errorf("got (%d, %v), want 2 devices", n, err)
	}
	if n, err := b.s.UnsubscribeTopic(b.ctx, b.app.ID, "news", []string{"u1"}); err != nil || n != 0 {
		t.Errorf("again: got (%d, %v), want 0", n, err)
	}
	if ds, _ := b.topicDevices(b.app.ID, "news"); !equal(deviceIDs(ds), []string{"d3"}) {
		t.Errorf("DevicesOfTopic: got %v, want [d3]", deviceIDs(ds))
	}
}

func testUserNotFound(t *testing.T, b *bundle) {
	_, _, err := b.s.User(b.ctx, b.app.ID, "nobody")
	wantErr(t, "never registered", err, herald.ErrUserNotFound)
	b.register("d1", "t1", "u1")
	other := b.newApp("other")
	_, _, err = b.s.User(b.ctx, other.ID, "u1")
	wantErr(t, "user of another app", err, herald.ErrUserNotFound)
}
