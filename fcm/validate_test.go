package fcm_test

import (
	"context"
	"errors"
	"testing"

	"github.com/heraldpush/herald"
	"github.com/heraldpush/herald/fcm"
	"github.com/heraldpush/herald/fcm/emulator"
)

// TestDeliverValidateOnly: a notification marked ValidateOnly is sent with
// validate_only, which FCM (here the emulator) checks and answers without
// delivering; a token FCM refuses is refused all the same.
func TestDeliverValidateOnly(t *testing.T) {
	t.Parallel()
	b := setup(t, "proj-validate", emulator.Options{}, fcm.ClientOptions{})
	ctx := context.Background()
	n := herald.Notification{Token: "tok-sandbox", PushID: "push_1", Title: "t", Body: "b", ValidateOnly: true}
	if err := b.client.Deliver(ctx, b.cred.Key, b.cred.JSON, n); err != nil {
		t.Fatalf("validate only: got %v, want nil", err)
	}
	if got := b.emu.Messages("tok-sandbox"); len(got) != 0 {
		t.Errorf("messages delivered: got %d, want none", len(got))
	}
	if s := b.emu.Stats(); s.Received != 1 || s.Accepted != 1 {
		t.Errorf("emulator stats: got %+v, want one request, accepted", s)
	}
	n.Token = "unregistered-sandbox"
	var se *herald.SendError
	if err := b.client.Deliver(ctx, b.cred.Key, b.cred.JSON, n); !errors.As(err, &se) || se.Class != herald.SendUnregistered {
		t.Errorf("an unregistered token, validate only: got %v, want SendUnregistered", err)
	}
	n.Token, n.ValidateOnly = "tok-sandbox", false
	if err := b.client.Deliver(ctx, b.cred.Key, b.cred.JSON, n); err != nil || len(b.emu.Messages("tok-sandbox")) != 1 {
		t.Errorf("without validate only: got %v and %d messages, want it delivered", err, len(b.emu.Messages("tok-sandbox")))
	}
}
