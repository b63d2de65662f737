package postgres_test

import (
	"context"
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/postgres"
)

// TestRegistrationsMadeTogether checks that the registrations of one batch
// are made by the joint (sqlstore's registrations), not one at a time
// after it failed: a failing joint leaves each registration to run alone,
// which answers the same (the storetest Together suite) but undoes the
// joint's purpose. Made together, the batch's rows are written in one
// savepoint, so they carry one transaction id (xmin); made one at a time,
// each in a savepoint of its own, one each.
func TestRegistrationsMadeTogether(t *testing.T) {
	ctx := context.Background()
	db, app := reproSchema(t)
	if _, err := db.RegisterDevice(ctx, app.ID, herald.DeviceRegistration{DeviceID: "d0", Token: "t0",
		Platform: herald.PlatformAndroid, AppSourceVersion: "1.6.0"}); err != nil {
		t.Fatal(err)
	}
	user := func(id string) *string { return &id }
	regs := []herald.DeviceRegistration{
		{DeviceID: "d1", Token: "t1", UserID: user("u1")},
		{DeviceID: "d2", Token: "t2"},
		{DeviceID: "d3", Token: "t3", UserID: user("u3")},
		{DeviceID: "d0", Token: "t0b", UserID: user("u0")}, // an existing device, a new token and user
	}
	errs := make([]error, len(regs))
	calls := make([]func(), len(regs))
	for i, reg := range regs {
		reg.Platform, reg.AppSourceVersion = herald.PlatformAndroid, "1.6.0"
		calls[i] = func() { _, errs[i] = db.RegisterDevice(ctx, app.ID, reg) }
	}
	postgres.Together(t, db)(calls...)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("registration %d: %v", i, err)
		}
	}
	for _, c := range []struct{ table, ids string }{
		{"devices", `device_id IN ('d0', 'd1', 'd2', 'd3')`},
		{"users", `user_id IN ('u0', 'u1', 'u3')`},
	} {
		var rows, xids int
		if err := db.Pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT xmin::text) FROM `+c.table+` WHERE app_id = $1 AND `+c.ids,
			app.ID).Scan(&rows, &xids); err != nil {
			t.Fatal(err)
		}
		if xids != 1 {
			t.Errorf("%s: %d rows written by %d transactions, want 1 (the joint's)", c.table, rows, xids)
		}
	}
	var d2User *string
	var t0 string
	if err := db.Pool.QueryRow(ctx, `SELECT (SELECT user_id FROM devices WHERE app_id = $1 AND device_id = 'd2'),
		(SELECT token FROM devices WHERE app_id = $1 AND device_id = 'd0')`, app.ID).Scan(&d2User, &t0); err != nil {
		t.Fatal(err)
	}
	if d2User != nil || t0 != "t0b" {
		t.Errorf("d2's user %v, d0's token %q: want none, t0b", d2User, t0)
	}
}
