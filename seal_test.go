package herald_test

import (
	"bytes"
	"encoding/base64"
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
