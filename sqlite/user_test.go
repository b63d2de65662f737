package sqlite_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/sqlite"
)

// setup opens a migrated database in t's temporary directory with a fixed
// clock and one app.
func setup(t *testing.T) (*sqlite.DB, herald.App) {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "herald.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2025, 6, 11, 22, 4, 30, 0, time.UTC)
	db.Now = func() time.Time { return now }
	return db, createApp(t, db, now)
}

func createApp(t *testing.T, db *sqlite.DB, now time.Time) herald.App {
	t.Helper()
	a := herald.App{ID: herald.NewID("app_", now), Name: "a", APIKey: herald.NewAPIKey(), SecretHash: herald.HashSecret("s"),
		Tier: herald.TierBusiness, AppUserEnabled: true, Registered: true, TimeZone: herald.DefaultTimeZone, CreatedAt: now}
	if err := db.CreateApp(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	return a
}

func register(t *testing.T, db *sqlite.DB, appID, device, token string, user *string) herald.Device {
	t.Helper()
	d, err := db.RegisterDevice(context.Background(), appID, herald.DeviceRegistration{
		DeviceID: device, Token: token, Platform: herald.PlatformIOS, AppSourceVersion: "1.6.0", UserID: user})
	if err != nil {
		t.Fatalf("register %s: %v", device, err)
	}
	return d
}

func devicesOf(t *testing.T, db *sqlite.DB, appID, user string) (herald.User, []string) {
	t.Helper()
	u, ds, err := db.User(context.Background(), appID, user)
	if err != nil {
		t.Fatalf("user %s: %v", user, err)
	}
	var ids []string
	for _, d := range ds {
		ids = append(ids, d.ID+"="+d.Token)
	}
	return u, ids
}

func same(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestRegisterDevice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, app := setup(t)

	d := register(t, db, app.ID, "d1", "t1", new("u1"))
	if d.UserID == nil || *d.UserID != "u1" || d.Consent != (herald.Consent{}) || d.TokenUpdatedAt.IsZero() {
		t.Errorf("got %+v, want mapped to u1 with the app default pair", d)
	}
	register(t, db, app.ID, "d2", "t2", new("u1"))
	if _, got := devicesOf(t, db, app.ID, "u1"); !same(got, []string{"d1=t1", "d2=t2"}) {
		t.Errorf("got %v, want [d1=t1 d2=t2]", got)
	}

	t.Run("TokenMoves", func(t *testing.T) {
		register(t, db, app.ID, "d3", "t1", new("u2"))
		if _, got := devicesOf(t, db, app.ID, "u1"); !same(got, []string{"d2=t2"}) {
			t.Errorf("u1: got %v, want [d2=t2]", got)
		}
		if _, got := devicesOf(t, db, app.ID, "u2"); !same(got, []string{"d3=t1"}) {
			t.Errorf("u2: got %v, want [d3=t1]", got)
		}
		if _, err := db.SetDeviceUser(ctx, app.ID, "d1", nil); !errors.Is(err, herald.ErrNotFound) {
			t.Errorf("old device: got %v, want ErrNotFound", err)
		}
	})
	t.Run("ErrUnknownUser", func(t *testing.T) {
		if _, _, err := db.User(ctx, app.ID, "nobody"); !errors.Is(err, herald.ErrUserNotFound) {
			t.Errorf("got %v, want ErrUserNotFound", err)
		}
	})
	t.Run("DefaultConsentOfApp", func(t *testing.T) {
		a := app
		a.DefaultConsent = herald.Consent{Marketing: true, MarketingNight: true}
		if err := db.UpdateApp(ctx, a); err != nil {
			t.Fatal(err)
		}
		if d := register(t, db, app.ID, "d9", "t9", nil); d.Consent != a.DefaultConsent {
			t.Errorf("got %+v, want the app default %+v", d.Consent, a.DefaultConsent)
		}
		// An existing device keeps its pair.
		if d := register(t, db, app.ID, "d2", "t2", nil); d.Consent != (herald.Consent{}) {
			t.Errorf("existing device: got %+v, want its own pair kept", d.Consent)
		}
	})
}

func TestSetUserConsent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, app := setup(t)
	register(t, db, app.ID, "d1", "t1", new("u1"))
	register(t, db, app.ID, "d2", "t2", new("u1"))
	register(t, db, app.ID, "other", "t3", new("u2"))

	got, err := db.SetUserConsent(ctx, app.ID, "u1", herald.ConsentChange{Marketing: new(true), MarketingNight: new(true)})
	all := herald.Consent{Marketing: true, MarketingNight: true}
	if err != nil || got != all {
		t.Fatalf("got (%+v, %v), want (%+v, nil)", got, err, all)
	}
	u, ds, _ := db.User(ctx, app.ID, "u1")
	if u.Consent != all || !u.ConsentSet {
		t.Errorf("user: got %+v, want %+v set", u, all)
	}
	for _, d := range ds {
		if d.Consent != all {
			t.Errorf("device %s: got %+v, want %+v", d.ID, d.Consent, all)
		}
	}
	if _, ds, _ := db.User(ctx, app.ID, "u2"); ds[0].Consent != (herald.Consent{}) {
		t.Errorf("other user's device: got %+v, want untouched", ds[0].Consent)
	}
	if d := register(t, db, app.ID, "late", "t4", new("u1")); d.Consent != all {
		t.Errorf("device mapped later: got %+v, want the user's pair", d.Consent)
	}
	d, err := db.SetDeviceUser(ctx, app.ID, "other", new("u1"))
	if err != nil || d.Consent != all {
		t.Errorf("device moved to u1: got (%+v, %v), want the user's pair", d.Consent, err)
	}

	t.Run("ErrInvalidChangesNothing", func(t *testing.T) {
		if _, err := db.SetUserConsent(ctx, app.ID, "u1", herald.ConsentChange{}); !errors.Is(err, herald.ErrInvalidRequest) {
			t.Errorf("got %v, want ErrInvalidRequest", err)
		}
		db.SetUserConsent(ctx, app.ID, "u1", herald.ConsentChange{Marketing: new(false)})
		if _, err := db.SetUserConsent(ctx, app.ID, "u1", herald.ConsentChange{MarketingNight: new(true)}); !errors.Is(err, herald.ErrInvalidRequest) {
			t.Errorf("C true on marketing false: got %v, want ErrInvalidRequest", err)
		}
		u, ds, _ := db.User(ctx, app.ID, "u1")
		if u.Consent != (herald.Consent{}) {
			t.Errorf("user: got %+v, want off", u.Consent)
		}
		for _, d := range ds {
			if d.Consent != (herald.Consent{}) {
				t.Errorf("device %s: got %+v, want off", d.ID, d.Consent)
			}
		}
	})
	t.Run("ErrUnknown", func(t *testing.T) {
		if _, err := db.SetUserConsent(ctx, app.ID, "nobody", herald.ConsentChange{Marketing: new(true)}); !errors.Is(err, herald.ErrUserNotFound) {
			t.Errorf("got %v, want ErrUserNotFound", err)
		}
	})
}

func TestWithdrawUser(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, app := setup(t)
	register(t, db, app.ID, "d1", "t1", new("u1"))
	register(t, db, app.ID, "d2", "t2", new("u1"))
	if _, err := db.Writer.Exec(`INSERT INTO device_topics (app_id, device_id, topic) VALUES (?, 'd1', 'news'), (?, 'd2', 'sale')`, app.ID, app.ID); err != nil {
		t.Fatal(err)
	}
	db.SetUserConsent(ctx, app.ID, "u1", herald.ConsentChange{Marketing: new(true), MarketingNight: new(true)})

	if err := db.WithdrawUser(ctx, app.ID, "u1"); err != nil {
		t.Fatalf("got %v, want nil", err)
	}
	u, ids := devicesOf(t, db, app.ID, "u1")
	if u.State != herald.UserWithdrawn || u.Consent != (herald.Consent{}) || u.ConsentSet || u.WithdrawnAt == nil || len(ids) != 0 {
		t.Errorf("got %+v with devices %v, want withdrawn, reset, no devices", u, ids)
	}
	var rows int
	db.Reader.QueryRow(`SELECT (SELECT count(*) FROM devices WHERE app_id = ?) + (SELECT count(*) FROM device_topics WHERE app_id = ?)`, app.ID, app.ID).Scan(&rows)
	if rows != 0 {
		t.Errorf("devices and topics left: got %d, want 0", rows)
	}

	t.Run("ErrRepeat", func(t *testing.T) {
		if err := db.WithdrawUser(ctx, app.ID, "u1"); !errors.Is(err, herald.ErrUserWithdrawn) {
			t.Errorf("got %v, want ErrUserWithdrawn", err)
		}
		if _, err := db.SetUserConsent(ctx, app.ID, "u1", herald.ConsentChange{Marketing: new(true)}); !errors.Is(err, herald.ErrUserWithdrawn) {
			t.Errorf("SetUserConsent: got %v, want ErrUserWithdrawn", err)
		}
	})
	t.Run("ErrUnknown", func(t *testing.T) {
		if err := db.WithdrawUser(ctx, app.ID, "nobody"); !errors.Is(err, herald.ErrUserNotFound) {
			t.Errorf("got %v, want ErrUserNotFound", err)
		}
	})
	t.Run("ReRegisters", func(t *testing.T) {
		d := register(t, db, app.ID, "d1", "t1", new("u1"))
		if d.Consent != (herald.Consent{}) {
			t.Errorf("device: got %+v, want off", d.Consent)
		}
		u, _ := devicesOf(t, db, app.ID, "u1")
		if u.State != herald.UserRegistered || u.WithdrawnAt != nil {
			t.Errorf("got %+v, want registered", u)
		}
		if _, err := db.SetUserConsent(ctx, app.ID, "u1", herald.ConsentChange{Marketing: new(true)}); err != nil {
			t.Errorf("SetUserConsent: got %v, want nil", err)
		}
	})
}

func TestDeleteDeviceAndToken(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, app := setup(t)
	register(t, db, app.ID, "d1", "t1", new("u1"))
	register(t, db, app.ID, "d2", "t2", new("u1"))
	if err := db.DeleteDevice(ctx, app.ID, "d1"); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteToken(ctx, app.ID, "t2"); err != nil {
		t.Fatal(err)
	}
	if _, ids := devicesOf(t, db, app.ID, "u1"); len(ids) != 0 {
		t.Errorf("got %v, want no devices", ids)
	}
	if err := db.DeleteDevice(ctx, app.ID, "d1"); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("DeleteDevice again: got %v, want ErrNotFound", err)
	}
	if err := db.DeleteToken(ctx, app.ID, "t2"); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("DeleteToken again: got %v, want ErrNotFound", err)
	}
}

func TestSetDeviceConsent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, app := setup(t)
	register(t, db, app.ID, "d1", "t1", nil)
	d, err := db.SetDeviceConsent(ctx, app.ID, "d1", herald.ConsentChange{MarketingNight: new(true)})
	if !errors.Is(err, herald.ErrInvalidRequest) {
		t.Errorf("C true on marketing false: got %v, want ErrInvalidRequest", err)
	}
	if d, err = db.SetDeviceConsent(ctx, app.ID, "d1", herald.ConsentChange{Marketing: new(true)}); err != nil || !d.Consent.Marketing {
		t.Errorf("got (%+v, %v), want marketing on", d.Consent, err)
	}
	if _, err := db.SetDeviceConsent(ctx, app.ID, "ghost", herald.ConsentChange{Marketing: new(true)}); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("unknown device: got %v, want ErrNotFound", err)
	}
}
