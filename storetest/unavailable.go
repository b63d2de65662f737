package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/heraldpush/herald"
)

// unavailableTests hold a store to DESIGN.md section 4: a call whose
// deadline passed before the database answered (as a frozen database
// makes every request's) fails with herald.ErrUnavailable, answered 503,
// never an error without a code, and changes nothing.
var unavailableTests = []test{
	{"DeadlinePassed/Read", testDeadlinePassedRead},
	{"DeadlinePassed/Write", testDeadlinePassedWrite},
}

// expired returns a context whose deadline has passed.
func (b *bundle) expired() context.Context {
	ctx, cancel := context.WithDeadline(b.ctx, time.Now().Add(-time.Second))
	b.t.Cleanup(cancel)
	return ctx
}

func testDeadlinePassedRead(t *testing.T, b *bundle) {
	_, err := b.s.AppByAPIKey(b.expired(), b.app.APIKey)
	if !errors.Is(err, herald.ErrUnavailable) {
		t.Errorf("AppByAPIKey past its deadline: got %v, want ErrUnavailable", err)
	}
}

func testDeadlinePassedWrite(t *testing.T, b *bundle) {
	_, err := b.s.RegisterDevice(b.expired(), b.app.ID, registration("d1", "tok-1", "u1"))
	if !errors.Is(err, herald.ErrUnavailable) {
		t.Errorf("RegisterDevice past its deadline: got %v, want ErrUnavailable", err)
	}
	if _, err := b.s.DeviceByToken(b.ctx, b.app.ID, "tok-1"); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("the device after the refused write: got %v, want ErrNotFound", err)
	}
}
