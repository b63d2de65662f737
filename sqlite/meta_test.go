package sqlite_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/heraldpush/herald"
)

func TestMasterKeyStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, app := setup(t)

	if _, err := db.MasterKeyCheck(ctx); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("MasterKeyCheck on a new store: got %v, want ErrNotFound", err)
	}
	if err := db.SetMasterKeyCheck(ctx, []byte("check")); err != nil {
		t.Fatal(err)
	}
	if got, err := db.MasterKeyCheck(ctx); err != nil || !bytes.Equal(got, []byte("check")) {
		t.Errorf("MasterKeyCheck: got (%q, %v), want check", got, err)
	}

	if _, err := db.SealedSample(ctx); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("SealedSample without secrets: got %v, want ErrNotFound", err)
	}
	if err := db.SetWebhook(ctx, app.ID, "https://h.example", []byte("sealed-secret")); err != nil {
		t.Fatal(err)
	}
	if got, err := db.SealedSample(ctx); err != nil || !bytes.Equal(got, []byte("sealed-secret")) {
		t.Errorf("SealedSample with a webhook: got (%q, %v), want sealed-secret", got, err)
	}
	if err := db.SetWebhook(ctx, app.ID, "", nil); err != nil {
		t.Fatal(err)
	}
	if err := db.SetFCMCredentials(ctx, app.ID, []byte("sealed-fcm")); err != nil {
		t.Fatal(err)
	}
	if got, err := db.SealedSample(ctx); err != nil || !bytes.Equal(got, []byte("sealed-fcm")) {
		t.Errorf("SealedSample with FCM credentials: got (%q, %v), want sealed-fcm", got, err)
	}
}
