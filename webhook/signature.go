package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// SecretPrefix starts every webhook signing secret.
const SecretPrefix = "whsec_"

// DefaultTolerance is the clock skew Verify accepts when given a tolerance
// of zero or less; five minutes is the Standard Webhooks recommendation.
const DefaultTolerance = 5 * time.Minute

// Header names of a Standard Webhooks message.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// signatureVersion prefixes each signature; only v1 (HMAC-SHA256) exists.
const signatureVersion = "v1"

// Errors returned by Sign and Verify. Verify wraps them with detail, so
// compare with errors.Is.
var (
	ErrInvalidSecret      = errors.New("webhook: secret must be \"whsec_\" followed by base64")
	ErrMissingHeaders     = errors.New("webhook: missing webhook-id, webhook-timestamp or webhook-signature header")
	ErrInvalidTimestamp   = errors.New("webhook: invalid webhook-timestamp")
	ErrTimestampTolerance = errors.New("webhook: webhook-timestamp outside the tolerance")
	ErrNoMatchingSig      = errors.New("webhook: no matching signature")
)

// NewSecret returns a fresh signing secret: "whsec_" followed by the
// standard base64 encoding of 32 random bytes.
func NewSecret() (string, error) {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return "", fmt.Errorf("webhook: generate secret: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(key), nil
}

// Sign returns the webhook-signature value ("v1,<base64>") of body sent as
// message msgID at time ts, signed with secret ("whsec_<base64 key>").
func Sign(secret, msgID string, ts time.Time, body []byte) (string, error) {
	mac, err := signature(secret, msgID, ts.Unix(), body)
	if err != nil {
		return "", err
	}
	return signatureVersion + "," + base64.StdEncoding.EncodeToString(mac), nil
}

// Verify checks that h and body form a message signed with secret and sent
// within tolerance of now (DefaultTolerance when tolerance <= 0). The
// webhook-signature header may list several space-separated signatures (as
// during a secret rotation); one matching v1 signature suffices.
func Verify(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	msgID, tsText, sigs := h.Get(HeaderID), h.Get(HeaderTimestamp), h.Get(HeaderSignature)
	if msgID == "" || tsText == "" || sigs == "" {
		return ErrMissingHeaders
	}
	ts, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: %q", ErrInvalidTimestamp, tsText)
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	if skew := now.Sub(time.Unix(ts, 0)).Abs(); skew > tolerance {
		return fmt.Errorf("%w: off by %s", ErrTimestampTolerance, skew)
	}
	want, err := signature(secret, msgID, ts, body)
	if err != nil {
		return err
	}
	if !anySignatureMatches(sigs, want) {
		return ErrNoMatchingSig
	}
	return nil
}

// anySignatureMatches reports whether one v1 entry of the space-separated
// list equals want; each comparison runs in constant time.
func anySignatureMatches(list string, want []byte) bool {
	for _, entry := range strings.Fields(list) {
		version, encoded, ok := strings.Cut(entry, ",")
		if !ok || version != signatureVersion {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(encoded)
		if err == nil && hmac.Equal(got, want) {
			return true
		}
	}
	return false
}

// signature computes the raw HMAC-SHA256 of "<msgID>.<unix>.<body>".
func signature(secret, msgID string, unix int64, body []byte) ([]byte, error) {
	key, err := decodeSecret(secret)
	if err != nil {
		return nil, err
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(msgID + "." + strconv.FormatInt(unix, 10) + "."))
	mac.Write(body)
	return mac.Sum(nil), nil
}

// decodeSecret returns the key bytes of a "whsec_<base64>" secret.
func decodeSecret(secret string) ([]byte, error) {
	encoded, ok := strings.CutPrefix(secret, SecretPrefix)
	if !ok {
		return nil, ErrInvalidSecret
	}
	key, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil || len(key) == 0 {
		return nil, ErrInvalidSecret
	}
	return key, nil
}
