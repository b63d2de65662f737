package webhook

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// TestSenderRefusesPrivateDial bypasses ValidateURL to reach the dialer: the
// guard must hold even when a public-looking host resolves to loopback.
func TestSenderRefusesPrivateDial(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)

	tests := []struct {
		name         string
		allowPrivate bool
		wantRefused  bool
	}{
		{name: "ErrRefused", wantRefused: true},
		{name: "OKAllowPrivate", allowPrivate: true},
	}
	for _, tt := range tests {
		s := NewSender(SenderOptions{AllowPrivate: tt.allowPrivate})
		req, err := s.newRequest(context.Background(), srv.URL, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "msg_1", []byte(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		err = s.do(req)
		var de *DeliveryError
		refused := errors.As(err, &de) && errors.Is(err, ErrPrivateAddress)
		if refused != tt.wantRefused || (!tt.wantRefused && err != nil) {
			t.Errorf("%s: got %v, want refused=%v", tt.name, err, tt.wantRefused)
		}
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("receiver hit %d times, want 1 (only when private is allowed)", n)
	}
}
