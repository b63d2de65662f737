package identity

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/crypto/argon2"
)

// Operators' passwords are hashed with argon2id at OWASP's first
// recommended setting (19 MiB, 2 passes, 1 lane; its Password Storage
// Cheat Sheet), which costs tens of milliseconds on one core: RFC 9106's
// second recommendation (64 MiB, 3 passes, 4 lanes) asks three times the
// memory of each sign-in in flight, on an admin listener that shares its
// machine with delivery. The hash is kept in the PHC string form, so a
// later change of these settings still verifies the hashes made before it.
const (
	argonMemory  = 19 * 1024 // KiB
	argonTime    = 2
	argonThreads = 1
	argonSaltLen = 16
	argonKeyLen  = 32

	// minPassword and maxPassword bound an operator's password, in
	// characters: long enough for a passphrase, short enough to hash.
	minPassword = 12
	maxPassword = 256

	// maxHashing bounds the hashes computed at once, and so the memory
	// sign-ins hold (each argonMemory), whatever number of them arrive.
	maxHashing = 4
)

// Hasher hashes and verifies passwords, at most maxHashing at once.
type Hasher struct {
	slots chan struct{}
	// dummy is a hash of no one's password: signing in with an unknown
	// email verifies against it, so it takes as long as a wrong password.
	dummy func() string
}

// NewHasher returns a hasher.
func NewHasher() *Hasher {
	h := &Hasher{slots: make(chan struct{}, maxHashing)}
	h.dummy = sync.OnceValue(func() string { return h.Hash(rand.Text()) })
	return h
}

// checkPassword says what is wrong with a password an operator chose; ""
// when nothing.
func CheckPassword(password, confirm string) string {
	switch n := utf8.RuneCountInString(password); {
	case n < minPassword:
		return fmt.Sprintf("The password must be at least %d characters long.", minPassword)
	case n > maxPassword:
		return fmt.Sprintf("The password must be at most %d characters long.", maxPassword)
	case password != confirm:
		return "The two passwords differ."
	}
	return ""
}

// Hash returns the argon2id hash of password in PHC form:
// $argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash> (unpadded base64).
func (h *Hasher) Hash(password string) string {
	salt := make([]byte, argonSaltLen)
	rand.Read(salt)
	key := h.key(password, salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key))
}

func (h *Hasher) key(password string, salt []byte, t, m uint32, p uint8, n uint32) []byte {
	h.slots <- struct{}{}
	defer func() { <-h.slots }()
	return argon2.IDKey([]byte(password), salt, t, m, p, n)
}

// VerifyNone takes as long as Verify of a wrong password, for a sign-in
// whose email is no one's: the answer does not tell which emails are
// operators'.
func (h *Hasher) VerifyNone(password string) { h.Verify(password, h.dummy()) }

// errBadHash is a stored hash that is not argon2id in PHC form.
var errBadHash = errors.New("password hash is not argon2id in PHC form")

// Verify reports whether password hashes to encoded, comparing in
// constant time. A hash of another form is an error, never a match.
func (h *Hasher) Verify(password, encoded string) (bool, error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return false, errBadHash
	}
	var version int
	var m, t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, errBadHash
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || m == 0 || m > 1<<20 || t == 0 || t > 16 || p == 0 {
		return false, errBadHash
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil {
		return false, errBadHash
	}
	want, err := base64.RawStdEncoding.DecodeString(parts[5])
	if err != nil || len(want) < 16 || len(want) > 64 {
		return false, errBadHash
	}
	got := h.key(password, salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}
