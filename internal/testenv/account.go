package testenv

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"testing"

	"github.com/heraldpush/herald/fcm"
)

// ServiceAccount is a generated Google service-account file.
type ServiceAccount struct {
	// JSON is the file as uploaded.
	JSON []byte
	// PrivateKeyPEM is its private_key, a PKCS#8 PEM block.
	PrivateKeyPEM string
	ClientEmail   string
}

// NewServiceAccount generates a service-account file with a fresh RSA key,
// naming Google's token endpoint.
func NewServiceAccount(t testing.TB) ServiceAccount {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatalf("generate RSA key: %v", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	sa := map[string]string{
		"type":           "service_account",
		"project_id":     "herald-test",
		"private_key_id": "0123456789abcdef",
		"private_key":    pemKey,
		"client_email":   "push-sender@herald-test.iam.gserviceaccount.com",
		"client_id":      "123456789",
		"token_uri":      fcm.GoogleTokenURI,
	}
	raw, err := json.Marshal(sa)
	if err != nil {
		t.Fatal(err)
	}
	return ServiceAccount{JSON: raw, PrivateKeyPEM: pemKey, ClientEmail: sa["client_email"]}
}

// With returns the file with one key set to v (nil removes it).
func (sa ServiceAccount) With(t testing.TB, key string, v any) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(sa.JSON, &m); err != nil {
		t.Fatal(err)
	}
	if v == nil {
		delete(m, key)
	} else {
		m[key] = v
	}
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
