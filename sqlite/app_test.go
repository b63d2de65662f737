package sqlite_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/heraldpush/herald"
)

func TestAppStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, app := setup(t)

	got, err := db.AppByAPIKey(ctx, app.APIKey)
	if err != nil || got.ID != app.ID || !got.CreatedAt.Equal(app.CreatedAt) || !herald.SecretMatches(got.SecretHash, "s") {
		t.Fatalf("AppByAPIKey: got (%+v, %v), want the app", got, err)
	}
	if _, err := db.AppByAPIKey(ctx, herald.NewAPIKey()); !errors.Is(err, herald.ErrNotFound) {
		t.Errorf("unknown key: got %v, want ErrNotFound", err)
	}
	if err := db.CreateApp(ctx, app); err == nil {
		t.Errorf("duplicate: got nil, want an error")
	}

	t.Run("Secrets", func(t *testing.T) {
		if err := db.SetSecretHash(ctx, app.ID, herald.HashSecret("new")); err != nil {
			t.Fatal(err)
		}
		if err := db.SetFCMCredentials(ctx, app.ID, []byte("sealed")); err != nil {
			t.Fatal(err)
		}
		if err := db.SetWebhook(ctx, app.ID, "https://h.example", []byte("sealed-secret")); err != nil {
			t.Fatal(err)
		}
		a, _ := db.App(ctx, app.ID)
		if !herald.SecretMatches(a.SecretHash, "new") || herald.SecretMatches(a.SecretHash, "s") ||
			!bytes.Equal(a.FCMCredentials, []byte("sealed")) || a.WebhookURL != "https://h.example" || !bytes.Equal(a.WebhookSecret, []byte("sealed-secret")) {
			t.Errorf("got %+v, want the new secret, credentials and webhook", a)
		}
		db.SetFCMCredentials(ctx, app.ID, nil)
		db.SetWebhook(ctx, app.ID, "", []byte("ignored"))
		a, _ = db.App(ctx, app.ID)
		if len(a.FCMCredentials) != 0 || a.WebhookURL != "" || len(a.WebhookSecret) != 0 {
			t.Errorf("got %+v, want credentials and webhook removed", a)
		}
	})
	t.Run("ErrUnknownApp", func(t *testing.T) {
		for name, err := range map[string]error{
			"UpdateApp":         db.UpdateApp(ctx, herald.App{ID: "app_nope", Tier: herald.TierFree}),
			"DeleteApp":         db.DeleteApp(ctx, "app_nope"),
			"SetSecretHash":     db.SetSecretHash(ctx, "app_nope", nil),
			"SetFCMCredentials": db.SetFCMCredentials(ctx, "app_nope", nil),
			"SetWebhook":        db.SetWebhook(ctx, "app_nope", "", nil),
		} {
			if !errors.Is(err, herald.ErrNotFound) {
				t.Errorf("%s: got %v, want ErrNotFound", name, err)
			}
		}
		if _, err := db.App(ctx, "app_nope"); !errors.Is(err, herald.ErrNotFound) {
			t.Errorf("App: got %v, want ErrNotFound", err)
		}
	})
	t.Run("DeleteCascades", func(t *testing.T) {
		register(t, db, app.ID, "d1", "t1", new("u1"))
		if err := db.DeleteApp(ctx, app.ID); err != nil {
			t.Fatal(err)
		}
		var n int
		db.Reader.QueryRow(`SELECT (SELECT count(*) FROM users) + (SELECT count(*) FROM devices)`).Scan(&n)
		if n != 0 {
			t.Errorf("rows left: got %d, want 0", n)
		}
	})
}
