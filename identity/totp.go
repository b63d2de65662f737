package identity

import (
	"errors"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/hotp"
	"github.com/pquerna/otp/totp"
)

// TOTPOptions are RFC 6238's: 30 s steps, 6 digits, SHA-1; a code of one
// step either side of now is accepted too, for clocks apart.
var TOTPOptions = totp.ValidateOpts{Period: 30, Skew: 1, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

// CodeStep returns the time step whose code under secret code is, of
// now's and the steps either side; ok false when none. A step is spent
// once (AttemptStore.UseTOTPStep): that is the caller's.
func CodeStep(secret, code string, now time.Time) (step uint64, ok bool, err error) {
	at := uint64(now.Unix()) / uint64(TOTPOptions.Period)
	for _, step := range []uint64{at, at - 1, at + 1} {
		ok, err := hotp.ValidateCustom(strings.TrimSpace(code), step, secret,
			hotp.ValidateOpts{Digits: TOTPOptions.Digits, Algorithm: TOTPOptions.Algorithm})
		if errors.Is(err, otp.ErrValidateInputInvalidLength) {
			return 0, false, nil
		}
		if err != nil || ok {
			return step, ok, err
		}
	}
	return 0, false, nil
}
