package herald_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"testing"

	"github.com/heraldpush/herald"
)

func TestMasterKeySealOpen(t *testing.T) {
	t.Parallel()
	key := mustKey(t, herald.NewMasterKeyText())
	plain := []byte(`{"private_key":"-----BEGIN PRIVATE KEY-----secret"}`)

	sealed := key.Seal(plain)
	if bytes.Contains(sealed, plain) || bytes.Contains(sealed, []byte("PRIVATE KEY")) {
		t.Fatalf("sealed value holds the plaintext")
	}
	if again := key.Seal(plain); bytes.Equal(again, sealed) {
		t.Errorf("got the same sealed value twice, want a fresh nonce each time")
	}
	got, err := key.Open(sealed)
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("Open: got (%q, %v), want (%q, nil)", got, err, plain)
	}

	t.Run("ErrWrongKey", func(t *testing.T) {
		t.Parallel()
		other := mustKey(t, herald.NewMasterKeyText())
		if got, err := other.Open(sealed); err == nil {
			t.Errorf("got (%q, nil), want an error", got)
		}
	})
	t.Run("ErrTampered", func(t *testing.T) {
		t.Parallel()
		bad := bytes.Clone(sealed)
		bad[len(bad)-1] ^= 1
		if _, err := key.Open(bad); err == nil {
			t.Errorf("got nil, want an error")
		}
	})
	t.Run("ErrTooShort", func(t *testing.T) {
		t.Parallel()
		if _, err := key.Open(sealed[:5]); err == nil {
			t.Errorf("got nil, want an error")
		}
	})
}

func TestParseMasterKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		text    string
		wantErr bool
	}{
		{"OK", base64.StdEncoding.EncodeToString(make([]byte, 32)), false},
		{"ErrShort", base64.StdEncoding.EncodeToString(make([]byte, 16)), true},
		{"ErrLong", base64.StdEncoding.EncodeToString(make([]byte, 33)), true},
		{"ErrNotBase64", "not base64!", true},
		{"ErrEmpty", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := herald.ParseMasterKey(tt.text)
			if (err != nil) != tt.wantErr {
				t.Errorf("got error %v, want error %v", err, tt.wantErr)
			}
		})
	}
}

func mustKey(t *testing.T, text string) *herald.MasterKey {
	t.Helper()
	k, err := herald.ParseMasterKey(text)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestMasterKeyCheck(t *testing.T) {
	t.Parallel()
	text := herald.NewMasterKeyText()
	a, again, b := mustKey(t, text), mustKey(t, text), mustKey(t, herald.NewMasterKeyText())
	if !bytes.Equal(a.Check(), again.Check()) {
		t.Errorf("same key: got two check values, want one")
	}
	if bytes.Equal(a.Check(), b.Check()) {
		t.Errorf("two keys: got the same check value, want different ones")
	}
	raw, _ := base64.StdEncoding.DecodeString(text)
	if len(a.Check()) != 32 || bytes.Contains(a.Check(), raw[:8]) {
		t.Errorf("check value: got %x, want 32 bytes that do not hold the key", a.Check())
	}
}

// keyStore is an in-memory herald.MasterKeyStore.
type keyStore struct {
	check, sample []byte
	err           error // answered by every method when set
	sets          int
}

func (s *keyStore) MasterKeyCheck(context.Context) ([]byte, error) {
	if s.err != nil {
		return nil, s.err
	}
	if s.check == nil {
		return nil, herald.ErrNotFound
	}
	return s.check, nil
}

func (s *keyStore) SetMasterKeyCheck(_ context.Context, check []byte) error {
	s.check = check
	s.sets++
	return nil
}

func (s *keyStore) SealedSample(context.Context) ([]byte, error) {
	if s.sample == nil {
		return nil, herald.ErrNotFound
	}
	return s.sample, nil
}

func TestVerifyMasterKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b := mustKey(t, herald.NewMasterKeyText()), mustKey(t, herald.NewMasterKeyText())

	t.Run("FirstStartStoresTheCheck", func(t *testing.T) {
		s := &keyStore{}
		if err := herald.VerifyMasterKey(ctx, s, a); err != nil {
			t.Fatalf("got %v, want nil", err)
		}
		if !bytes.Equal(s.check, a.Check()) {
			t.Fatalf("stored: got %x, want the key's check value", s.check)
		}
		if err := herald.VerifyMasterKey(ctx, s, a); err != nil || s.sets != 1 {
			t.Errorf("same key again: got (%v, %d stores), want (nil, 1)", err, s.sets)
		}
		if err := herald.VerifyMasterKey(ctx, s, b); !errors.Is(err, herald.ErrMasterKeyMismatch) {
			t.Errorf("other key: got %v, want ErrMasterKeyMismatch", err)
		}
	})
	t.Run("UpgradeOpensASealedValue", func(t *testing.T) {
		s := &keyStore{sample: a.Seal([]byte("webhook secret"))}
		if err := herald.VerifyMasterKey(ctx, s, a); err != nil || !bytes.Equal(s.check, a.Check()) {
			t.Fatalf("got (%v, stored %x), want nil and the check stored", err, s.check)
		}
	})
	t.Run("ErrUpgradeWithAnotherKey", func(t *testing.T) {
		s := &keyStore{sample: a.Seal([]byte("fcm credentials"))}
		if err := herald.VerifyMasterKey(ctx, s, b); !errors.Is(err, herald.ErrMasterKeyMismatch) {
			t.Fatalf("got %v, want ErrMasterKeyMismatch", err)
		}
		if s.sets != 0 {
			t.Errorf("stored a check value for the wrong key")
		}
	})
	t.Run("ErrStore", func(t *testing.T) {
		s := &keyStore{err: errors.New("disk I/O error")}
		if err := herald.VerifyMasterKey(ctx, s, a); err == nil || errors.Is(err, herald.ErrMasterKeyMismatch) {
			t.Errorf("got %v, want the store's error", err)
		}
	})
}
