// Package fcmtest starts the FCM emulator and makes service-account files
// for tests of code that sends through FCM.
package fcmtest

import (
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
var rsaKeyPEM = sync.OnceValues(emulator.NewKeyPEM)

// ServiceAccountJSON returns a valid service-account file for projectID whose
// token_uri is tokenURI (see emulator.NewServiceAccount). The emulator
// refuses the token grant of a project whose ID starts with "denied".
func ServiceAccountJSON(tb testing.TB, projectID, tokenURI string) []byte {
	tb.Helper()
	key, err := rsaKeyPEM()
	if err != nil {
		tb.Fatalf("fcmtest: generate key: %v", err)
	}
	data, err := emulator.NewServiceAccount(projectID, tokenURI, key)
	if err != nil {
		tb.Fatalf("fcmtest: service account: %v", err)
	}
	return data
}
