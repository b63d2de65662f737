// Package fcmtest starts the FCM emulator and makes service-account files
// for tests of code that sends through FCM.
package fcmtest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/heraldpush/herald/fcm/emulator"
)

// StartEmulator serves a new emulator on a loopback port over HTTP/1.1 and
// cleartext HTTP/2 until the test ends, and returns it with its base URL
// (http://127.0.0.1:port), which is both the FCM endpoint and, with "/token"
// appended, the token URI.
func StartEmulator(tb testing.TB, opts emulator.Options) (*emulator.Emulator, string) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("fcmtest: listen: %v", err)
	}
	emu := emulator.New(opts)
	srv := emu.Server(ln.Addr().String())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	tb.Cleanup(func() {
		_ = srv.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			tb.Errorf("fcmtest: emulator server: %v", err)
		}
	})
	return emu, "http://" + ln.Addr().String()
}

// rsaKeyPEM generates one RSA-2048 key per test process: generation takes
// tens of milliseconds and the emulator never checks signatures, so every
// service account may share it.
var rsaKeyPEM = sync.OnceValues(func() ([]byte, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
})

// ServiceAccountJSON returns a valid service-account file for projectID whose
// token_uri is tokenURI, with a real RSA key and the client email
// herald@<projectID>.iam.gserviceaccount.com. The emulator refuses the token
// grant of a project whose ID starts with "denied".
func ServiceAccountJSON(tb testing.TB, projectID, tokenURI string) []byte {
	tb.Helper()
	key, err := rsaKeyPEM()
	if err != nil {
		tb.Fatalf("fcmtest: generate key: %v", err)
	}
	email := "herald@" + projectID + ".iam.gserviceaccount.com"
	data, err := json.MarshalIndent(map[string]string{
		"type":                        "service_account",
		"project_id":                  projectID,
		"private_key_id":              randomHex(20),
		"private_key":                 string(key),
		"client_email":                email,
		"client_id":                   "100000000000000000001",
		"auth_uri":                    "https://accounts.google.com/o/oauth2/auth",
		"token_uri":                   tokenURI,
		"auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
		"client_x509_cert_url":        "https://www.googleapis.com/robot/v1/metadata/x509/" + email,
		"universe_domain":             "googleapis.com",
	}, "", "  ")
	if err != nil {
		tb.Fatalf("fcmtest: marshal service account: %v", err)
	}
	return data
}

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}
