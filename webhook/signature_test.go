package webhook_test

import (
	"cmp"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heraldpush/herald/webhook"
)

// Standard Webhooks test vector.
const (
	vectorSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorMsgID  = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorUnix   = 1614265330
	vectorBody   = `{"test": 2432232314}`
	vectorSig    = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestSignVector(t *testing.T) {
	t.Parallel()
	got, err := webhook.Sign(vectorSecret, vectorMsgID, time.Unix(vectorUnix, 0), []byte(vectorBody))
	if err != nil {
		t.Fatalf("Sign: %v", err)
	}
	if got != vectorSig {
		t.Errorf("got %q, want %q", got, vectorSig)
	}
}

func TestSignInvalidSecret(t *testing.T) {
	t.Parallel()
	for _, secret := range []string{"", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_", "whsec_not base64!"} {
		_, err := webhook.Sign(secret, "msg_1", time.Unix(1, 0), nil)
		if !errors.Is(err, webhook.ErrInvalidSecret) {
			t.Errorf("Sign(%q): got %v, want ErrInvalidSecret", secret, err)
		}
	}
}

func TestNewSecret(t *testing.T) {
	t.Parallel()
	a, err := webhook.NewSecret()
	if err != nil {
		t.Fatalf("NewSecret: %v", err)
	}
	b, _ := webhook.NewSecret()
	if a == b {
		t.Errorf("two secrets are equal: %q", a)
	}
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(a, "whsec_"))
	if !strings.HasPrefix(a, "whsec_") || err != nil || len(key) != 32 {
		t.Errorf("got %q (decode err %v, %d bytes), want whsec_ + base64 of 32 bytes", a, err, len(key))
	}
	if _, err := webhook.Sign(a, "msg_1", time.Unix(1, 0), nil); err != nil {
		t.Errorf("Sign with new secret: %v", err)
	}
}

// vectorHeader returns the headers of the test-vector message.
func vectorHeader() http.Header {
	h := http.Header{}
	h.Set("webhook-id", vectorMsgID)
	h.Set("webhook-timestamp", strconv.Itoa(vectorUnix))
	h.Set("webhook-signature", vectorSig)
	return h
}

func TestVerify(t *testing.T) {
	t.Parallel()
	sent := time.Unix(vectorUnix, 0)
	otherSecret := "whsec_" + base64.StdEncoding.EncodeToString([]byte("another key of thirty-two bytes!"))
	tests := []struct {
		name      string
		secret    string
		edit      func(h http.Header)
		body      string
		now       time.Time
		tolerance time.Duration
		want      error
	}{
		{name: "OK", now: sent},
		{name: "OKWithinTolerance", now: sent.Add(4 * time.Minute)},
		{name: "OKClockBehind", now: sent.Add(-4 * time.Minute)},
		{name: "OKCustomTolerance", now: sent.Add(time.Hour), tolerance: 2 * time.Hour},
		{name: "OKSeveralSignatures", now: sent, edit: func(h http.Header) {
			h.Set("webhook-signature", "v1,bm90IGl0 v2,abc "+vectorSig)
		}},
		{name: "ErrTamperedBody", body: `{"test": 2432232315}`, now: sent, want: webhook.ErrNoMatchingSig},
		{name: "ErrTamperedID", now: sent, edit: func(h http.Header) { h.Set("webhook-id", "msg_other") }, want: webhook.ErrNoMatchingSig},
		{name: "ErrTamperedTimestamp", now: sent, edit: func(h http.Header) {
			h.Set("webhook-timestamp", strconv.Itoa(vectorUnix+1))
		}, want: webhook.ErrNoMatchingSig},
		{name: "ErrWrongSecret", secret: otherSecret, now: sent, want: webhook.ErrNoMatchingSig},
		{name: "ErrWrongVersion", now: sent, edit: func(h http.Header) {
			h.Set("webhook-signature", "v2"+strings.TrimPrefix(vectorSig, "v1"))
		}, want: webhook.ErrNoMatchingSig},
		{name: "ErrTooOld", now: sent.Add(6 * time.Minute), want: webhook.ErrTimestampTolerance},
		{name: "ErrTooNew", now: sent.Add(-6 * time.Minute), want: webhook.ErrTimestampTolerance},
		{name: "ErrBadTimestamp", now: sent, edit: func(h http.Header) { h.Set("webhook-timestamp", "yesterday") }, want: webhook.ErrInvalidTimestamp},
		{name: "ErrNoID", now: sent, edit: func(h http.Header) { h.Del("webhook-id") }, want: webhook.ErrMissingHeaders},
		{name: "ErrNoSignature", now: sent, edit: func(h http.Header) { h.Del("webhook-signature") }, want: webhook.ErrMissingHeaders},
		{name: "ErrBadSecret", secret: "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", now: sent, want: webhook.ErrInvalidSecret},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := vectorHeader()
			if tt.edit != nil {
				tt.edit(h)
			}
			secret, body := cmp.Or(tt.secret, vectorSecret), cmp.Or(tt.body, vectorBody)
			err := webhook.Verify(secret, h, []byte(body), tt.now, tt.tolerance)
			if !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
				t.Errorf("got %v, want %v", err, tt.want)
			}
		})
	}
}

func TestSignVerifyRoundTrip(t *testing.T) {
	t.Parallel()
	secret, err := webhook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2025, 6, 11, 9, 30, 0, 0, time.UTC)
	body := []byte(`{"type":"push.undeliverable"}`)
	sig, err := webhook.Sign(secret, "msg_round", now, body)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	h.Set("webhook-id", "msg_round")
	h.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
	h.Set("webhook-signature", sig)
	if err := webhook.Verify(secret, h, body, now, 0); err != nil {
		t.Errorf("got %v, want nil", err)
	}
}
