package fcm_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"testing"

	"github.com/heraldpush/herald/fcm"
	"github.com/heraldpush/herald/fcm/fcmtest"
)

func TestParseServiceAccount(t *testing.T) {
	t.Parallel()
	base := fcmtest.ServiceAccountJSON(t, "proj-1", fcm.GoogleTokenURI)
	pkcs1, ecKey := otherKeys(t, base)
	tests := []struct {
		name      string
		set       map[string]any // fields to overwrite; nil value deletes
		raw       string         // used instead of base when set
		allowAny  bool
		wantField string // "" for success
	}{
		{name: "OK"},
		{name: "OKPKCS1", set: map[string]any{"private_key": pkcs1}},
		{name: "OKAnyTokenURI", set: map[string]any{"token_uri": "http://127.0.0.1:9099/token"}, allowAny: true},
		{name: "OKGoogleTokenURIWhenAnyAllowed", allowAny: true},
		{name: "NotJSON", raw: "not json", wantField: ""},
		{name: "NotObject", raw: `["service_account"]`, wantField: ""},
		{name: "ProjectIDNotString", set: map[string]any{"project_id": 5}, wantField: "project_id"},
		{name: "TypeMissing", set: map[string]any{"type": nil}, wantField: "type"},
		{name: "TypeAuthorizedUser", set: map[string]any{"type": "authorized_user"}, wantField: "type"},
		{name: "ProjectIDEmpty", set: map[string]any{"project_id": ""}, wantField: "project_id"},
		{name: "ClientEmailMissing", set: map[string]any{"client_email": nil}, wantField: "client_email"},
		{name: "PrivateKeyEmpty", set: map[string]any{"private_key": ""}, wantField: "private_key"},
		{name: "PrivateKeyNotPEM", set: map[string]any{"private_key": "MIIEvQIBADANBg"}, wantField: "private_key"},
		{name: "PrivateKeyGarbagePEM", set: map[string]any{"private_key": garbagePEM()}, wantField: "private_key"},
		{name: "PrivateKeyNotRSA", set: map[string]any{"private_key": ecKey}, wantField: "private_key"},
		{name: "TokenURIOther", set: map[string]any{"token_uri": "https://evil.example/token"}, wantField: "token_uri"},
		{name: "TokenURIMissing", set: map[string]any{"token_uri": nil}, wantField: "token_uri"},
		{name: "TokenURINotHTTP", set: map[string]any{"token_uri": "ftp://x/token"}, allowAny: true, wantField: "token_uri"},
		{name: "TokenURIRelative", set: map[string]any{"token_uri": "/token"}, allowAny: true, wantField: "token_uri"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			data := []byte(tt.raw)
			if tt.raw == "" {
				data = withFields(t, base, tt.set)
			}
			sa, err := fcm.ParseServiceAccount(data, tt.allowAny)
			wantErr := tt.wantField != "" || tt.raw != ""
			if !wantErr {
				if err != nil {
					t.Fatalf("got error %v, want none", err)
				}
				if sa.ProjectID != "proj-1" || sa.ClientEmail != "herald@proj-1.iam.gserviceaccount.com" {
					t.Errorf("got %+v, want project proj-1 and its client email", sa)
				}
				return
			}
			var invalid *fcm.InvalidServiceAccountError
			if !errors.As(err, &invalid) {
				t.Fatalf("got error %v, want *InvalidServiceAccountError", err)
			}
			if invalid.Field != tt.wantField {
				t.Errorf("field: got %q, want %q (reason %q)", invalid.Field, tt.wantField, invalid.Reason)
			}
		})
	}
}

// garbagePEM returns a PEM block that holds no key.
func garbagePEM() string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("not a key")}))
}

// withFields returns data with the fields of set overwritten (nil deletes).
func withFields(t *testing.T, data []byte, set map[string]any) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("unmarshal service account: %v", err)
	}
	for k, v := range set {
		if v == nil {
			delete(m, k)
			continue
		}
		m[k] = v
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatalf("marshal service account: %v", err)
	}
	return out
}

// otherKeys returns the account's RSA key as PKCS#1 PEM and a new EC key as PKCS#8 PEM.
func otherKeys(t *testing.T, account []byte) (pkcs1PEM, ecPEM string) {
	t.Helper()
	var f struct {
		PrivateKey string `json:"private_key"`
	}
	if err := json.Unmarshal(account, &f); err != nil {
		t.Fatalf("unmarshal service account: %v", err)
	}
	block, _ := pem.Decode([]byte(f.PrivateKey))
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatalf("parse key: %v", err)
	}
	rsaKey, ok := key.(*rsa.PrivateKey)
	if !ok {
		t.Fatalf("got key %T, want *rsa.PrivateKey", key)
	}
	der := x509.MarshalPKCS1PrivateKey(rsaKey)
	pkcs1PEM = string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: der}))
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("generate EC key: %v", err)
	}
	ecDER, err := x509.MarshalPKCS8PrivateKey(ec)
	if err != nil {
		t.Fatalf("marshal EC key: %v", err)
	}
	return pkcs1PEM, string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: ecDER}))
}
